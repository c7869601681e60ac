package app

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// PromptBlock is one block of a system prompt as panto shows it (/prompt,
// panto prompt, and its --json).
type PromptBlock struct {
	Text string `json:"text"`
	// Source says where the block came from, for people; empty in a log
	// written before panto recorded sources.
	Source string `json:"source,omitempty"`
	// Key is the section's key, for a section.
	Key string `json:"key,omitempty"`
	// Message is the 1-based position of the system message the block's
	// text comes from.
	Message int `json:"message"`
	// Entry is the id of that message's log entry (PromptAt).
	Entry string `json:"entry,omitempty"`
}

// BlocksOf are the blocks of an effective system prompt.
func BlocksOf(sys []conversation.SystemText) []PromptBlock {
	out := make([]PromptBlock, 0, len(sys))
	for _, b := range sys {
		out = append(out, PromptBlock{Text: b.Text, Source: b.Source, Key: b.Key, Message: b.Index + 1})
	}
	return out
}

// atCount reports whether an --at value is a message count: a decimal
// number of at most 5 digits. Anything else names an entry.
func atCount(at string) (int, bool) {
	if len(at) > 5 {
		return 0, false
	}
	n, err := strconv.Atoi(at)
	return n, err == nil && n >= 0 && !strings.HasPrefix(at, "+")
}

// resolveAt is the entry an --at value names in the log at path: the
// current branch's Nth message for a count ("" for 0), else the entry of
// that id or unique prefix.
func resolveAt(tree *sessionlog.Tree, path, at string) (string, error) {
	if n, ok := atCount(at); ok {
		if n == 0 {
			return "", nil
		}
		id, err := tree.NthMessage(n)
		if err != nil {
			return "", fmt.Errorf("--at %d: %w", n, err)
		}
		return id, nil
	}
	id, err := tree.Resolve(at)
	if err != nil {
		return "", fmt.Errorf("--at %s: %w", at, err) // err names the log
	}
	return id, nil
}

// ToolsAt are the tool sets recorded in the log at path as of at (as
// PromptAt takes it; "" is the current leaf): what a request there
// offered, by extension. It reads the log alone.
func ToolsAt(path, at string) ([]sessionlog.Tools, error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return nil, err
	}
	id := tree.Leaf()
	if at != "" {
		if id, err = resolveAt(tree, path, at); err != nil {
			return nil, err
		}
	}
	if id == "" {
		return nil, nil
	}
	chain, err := tree.Chain(id)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range chain {
		if n, err := tree.Node(c); err == nil && n.Type == sessionlog.TypeTools {
			ids = append(ids, c)
		}
	}
	entries, err := tree.Entries(ids...)
	if err != nil {
		return nil, err
	}
	return sessionlog.ToolSetsOf(entries), nil
}

// PromptAt is the prompt recorded in the log at path as of at (panto
// prompt --at): after the current branch's first N messages (a number of
// up to 5 digits), or as of the entry at names (an id or a unique prefix
// of one, on any branch). Each block names the entry that recorded it.
// It reads the log alone, by an index scan, decoding only the system
// messages of the path: no extension starts.
func PromptAt(path, at string) ([]PromptBlock, error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return nil, err
	}
	id, err := resolveAt(tree, path, at)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, nil // before the first message: no prompt
	}
	sys, err := tree.SystemAt(id)
	if err != nil {
		return nil, err
	}
	// Each block's entry: the chain's messages, numbered as Positions
	// number them.
	chain, err := tree.Chain(id)
	if err != nil {
		return nil, err
	}
	var msgIDs []string
	for _, c := range chain {
		if n, err := tree.Node(c); err == nil && n.Type == sessionlog.TypeMessage {
			msgIDs = append(msgIDs, c)
		}
	}
	var out []PromptBlock
	for _, b := range conversation.EffectiveSystem(sys.Messages) {
		pos := sys.Positions[b.Index]
		pb := PromptBlock{Text: b.Text, Source: b.Source, Key: b.Key, Message: pos + 1}
		if pos < len(msgIDs) {
			pb.Entry = msgIDs[pos]
		}
		out = append(out, pb)
	}
	return out, nil
}

// WriteBlocks shows a system prompt's blocks as text, each with where it
// came from: /prompt in every front end, and panto prompt.
func WriteBlocks(w io.Writer, blocks []PromptBlock) {
	for i, b := range blocks {
		fmt.Fprintf(w, "--- block %d · %s ---\n%s\n", i+1, blockFrom(b), strings.TrimRight(b.Text, "\n"))
	}
}

// blockFrom says where a block came from: its source (or its message, in
// a log written before sources), and its section key.
func blockFrom(b PromptBlock) string {
	from := b.Source
	if from == "" {
		from = fmt.Sprintf("message %d", b.Message)
	}
	if b.Key != "" {
		from += " · section " + b.Key
	}
	if b.Entry != "" {
		from += fmt.Sprintf(" · entry %s (message %d)", treeview.Short(b.Entry), b.Message)
	}
	return from
}

// PermissionsAt is the permission policy recorded in the log at path as
// of at (as PromptAt reads at; "" is the leaf): the last permissions
// entry of the path, ok false when it has none.
func PermissionsAt(path, at string) (p sessionlog.Permissions, ok bool, err error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return p, false, err
	}
	id := tree.Leaf()
	if at != "" {
		if id, err = resolveAt(tree, path, at); err != nil {
			return p, false, err
		}
	}
	if id == "" {
		return p, false, nil
	}
	chain, err := tree.Chain(id)
	if err != nil {
		return p, false, err
	}
	last := ""
	for _, c := range chain {
		if n, err := tree.Node(c); err == nil && n.Type == sessionlog.TypePermissions {
			last = c
		}
	}
	if last == "" {
		return p, false, nil
	}
	entries, err := tree.Entries(last)
	if err != nil {
		return p, false, err
	}
	if len(entries) != 1 || entries[0].Permissions == nil {
		return p, false, fmt.Errorf("read %s: entry %s is not a permissions entry", path, last)
	}
	return *entries[0].Permissions, true, nil
}

// recordedPermissions is a permission state read from a log, for
// DescribePermissions; its TMPDIR is not recorded (each run has its own).
type recordedPermissions struct {
	st sessionlog.Permissions
	ok bool
}

func (r recordedPermissions) PermissionState() (sessionlog.Permissions, string, bool) {
	return r.st, "(a new one each run)", r.ok
}

// DescribePermissionsAt is DescribePermissions of what the log at path
// recorded as of at.
func DescribePermissionsAt(path, at string) (string, error) {
	p, ok, err := PermissionsAt(path, at)
	if err != nil {
		return "", err
	}
	if !ok {
		return "no permission policy is recorded on this path (a log from before panto recorded one)", nil
	}
	return DescribePermissions(recordedPermissions{p, true}), nil
}
