package contextview

import (
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// Session is what Of reads of a session (*host.Session is one).
type Session interface {
	EffectiveSystem() []conversation.SystemText
	Messages() []conversation.Message
	ContextUsage() (tokens, window int)
	Info() host.Info
	Tree() (*sessionlog.Tree, error)
}

// requestParts is what a session may also say: the tools offered, by
// extension, and the messages as the next request sends them
// (*host.Session does). Without it, the messages are the conversation's
// and no tools are counted.
type requestParts interface {
	Tools() []sessionlog.Tools
	RequestMessages() []conversation.Message
}

var _ requestParts = (*host.Session)(nil)

// Of is the breakdown of sess's next request: panto prompt --tokens and
// /context. path is its log ("" for none); live is the last request's
// usage as this run saw it (a Usage event), nil when it made none: then
// the log's is taken, the last reply's usage. The last request is
// rebuilt from the log when it can be (SentOf).
func Of(sess Session, path string, live *Usage) (Breakdown, error) {
	_, window := sess.ContextUsage()
	r := Request{Provider: sess.Info().Provider, System: sess.EffectiveSystem(), Window: window}
	if p, ok := sess.(requestParts); ok {
		r.Messages = p.RequestMessages()
		// The log's tool sets of extensions not loaded now are not
		// offered.
		loaded := map[string]bool{}
		for _, n := range sess.Info().Extensions {
			loaded[n] = true
		}
		for _, set := range p.Tools() {
			if loaded[set.Extension] {
				r.Tools = append(r.Tools, set)
			}
		}
	} else {
		r.Messages = sess.Messages()
	}
	var tree *sessionlog.Tree
	var treeErr error
	if path != "" {
		t, err := sess.Tree()
		if err != nil {
			// A session opened read-only has no writer to scan behind:
			// the file is what it holds.
			t, treeErr = sessionlog.Scan(path)
		}
		tree = t
	}
	switch {
	case live != nil:
		u := *live
		r.Last = &u
		if tree != nil {
			r.Sent, _ = SentOf(tree, LastReply(tree, ""))
		}
	case treeErr != nil:
		return Compute(r), treeErr
	case tree != nil:
		u, ok, err := LastUsage(path, tree, "")
		if err != nil {
			return Compute(r), err
		}
		if ok {
			if u.Provider == "" {
				u.Provider = sess.Info().Provider
			}
			r.Last = &u
			r.Sent, _ = SentOf(tree, u.Reply)
		}
	}
	return Compute(r), nil
}
