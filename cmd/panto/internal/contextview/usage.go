package contextview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// LastUsage is the usage the log at path recorded for the last request
// on the path to leaf ("" for the tree's leaf): the usage object of the
// path's last reply entry, with the provider and model of the
// model_change before it. ok is false when the path has no reply, or
// its reply has no usage recorded (a log of a panto that did not record
// it, or a provider that did not report it).
//
// The reply's line is found by reading the log back from its end, and
// only that line is decoded: the last reply is near the end.
func LastUsage(path string, tree *sessionlog.Tree, leaf string) (u Usage, ok bool, err error) {
	if leaf == "" {
		leaf = tree.Leaf()
	}
	if leaf == "" {
		return u, false, nil
	}
	chain, err := tree.Chain(leaf)
	if err != nil {
		return u, false, err
	}
	reply, change := "", ""
	for i := len(chain) - 1; i >= 0; i-- {
		n, err := tree.Node(chain[i])
		if err != nil {
			return u, false, err
		}
		switch {
		case reply == "" && n.Type == sessionlog.TypeMessage && n.Role == conversation.RoleAssistant:
			reply = n.ID
		case reply != "" && n.Type == sessionlog.TypeModelChange:
			change = n.ID
		}
		if change != "" {
			break
		}
	}
	if reply == "" {
		return u, false, nil
	}
	if change != "" {
		es, err := tree.Entries(change)
		if err != nil {
			return u, false, err
		}
		if len(es) == 1 && es[0].ModelChange != nil {
			u.Provider, u.Model = es[0].ModelChange.Provider, es[0].ModelChange.Model
		}
	}
	got, found, err := usageOf(path, reply)
	if err != nil || !found {
		return u, false, err
	}
	u.Counts, u.Reply = got, reply
	return u, true, nil
}

// SentOf is the request whose reply is the entry reply of tree, as it
// was sent: rebuilt from the log (host.RequestAt), with the tools it
// offered. ok is false when the log cannot rebuild it (a log from before
// panto recorded request settings).
func SentOf(tree *sessionlog.Tree, reply string) (*Sent, bool) {
	r, err := host.RequestAt(tree, reply)
	if err != nil {
		return nil, false
	}
	s := &Sent{Messages: r.Request.Messages}
	for _, t := range r.Settings.Tools {
		s.Tools = append(s.Tools, t.ToolDef)
	}
	return s, true
}

// LastReply is the id of the last reply on the path to leaf ("" for the
// tree's leaf), or "".
func LastReply(tree *sessionlog.Tree, leaf string) string {
	if leaf == "" {
		leaf = tree.Leaf()
	}
	chain, err := tree.Chain(leaf)
	if err != nil {
		return ""
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if n, err := tree.Node(chain[i]); err == nil && n.Type == sessionlog.TypeMessage && n.Role == conversation.RoleAssistant {
			return n.ID
		}
	}
	return ""
}

// usageOf reads the usage of the entry id from the log at path: the
// entry's "usage" object, or its message's. It reads the log from its
// end, where the last reply is, a block at a time.
func usageOf(path, id string) (Counts, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return Counts{}, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Counts{}, false, err
	}
	mark := []byte(`"id":"` + id + `"`)
	// carry is the end of a line that begins in the block before (the
	// start of the block read last).
	var carry []byte
	for pos := st.Size(); pos > 0; {
		n := min(int64(readBlock), pos)
		pos -= n
		data := make([]byte, n, int(n)+len(carry))
		if _, err := f.ReadAt(data, pos); err != nil && !errors.Is(err, io.EOF) {
			return Counts{}, false, fmt.Errorf("read session log %s: %w", path, err)
		}
		data = append(data, carry...)
		whole := data
		if pos > 0 {
			// The first line may begin in the block before.
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				carry = data
				continue
			}
			carry, whole = data[:i], data[i+1:]
		}
		for end := len(whole); end > 0; {
			at := bytes.LastIndex(whole[:end], mark)
			if at < 0 {
				break
			}
			from := bytes.LastIndexByte(whole[:at], '\n') + 1
			to := len(whole)
			if j := bytes.IndexByte(whole[at:], '\n'); j >= 0 {
				to = at + j
			}
			u, found, err := decodeUsage(whole[from:to], id)
			if err != nil {
				return u, false, fmt.Errorf("session log %s at byte %d: %w", path, pos+int64(len(data)-len(whole))+int64(from), err)
			}
			if found {
				return u, u != (Counts{}), nil
			}
			end = from
		}
	}
	return Counts{}, false, nil
}

// readBlock is how much of the log usageOf reads at a time.
const readBlock = 64 << 10

// decodeUsage decodes line if it is the entry id: found says it is; the
// usage is zero when the entry has none.
func decodeUsage(line []byte, id string) (u Counts, found bool, err error) {
	var e struct {
		ID      string  `json:"id"`
		Usage   *Counts `json:"usage"`
		Message struct {
			Usage *Counts `json:"usage"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return u, false, err
	}
	if e.ID != id {
		return u, false, nil
	}
	switch {
	case e.Usage != nil:
		return *e.Usage, true, nil
	case e.Message.Usage != nil:
		return *e.Message.Usage, true, nil
	}
	return u, true, nil
}
