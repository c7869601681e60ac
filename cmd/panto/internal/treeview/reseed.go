package treeview

import (
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// reseedSource starts the source of a re-seed's replace block
// (host.ReseedSource).
const reseedSource = "panto re-seed: "

// reseedBlock is the block of a re-seed's replace entry, if e is one.
func reseedBlock(e *sessionlog.Entry) (conversation.Block, bool) {
	if e == nil || e.Message == nil || e.Message.Role != conversation.RoleSystem || len(e.Message.Content) == 0 {
		return conversation.Block{}, false
	}
	b := e.Message.Content[0]
	return b, b.Mode == conversation.ModeReplace && strings.HasPrefix(b.Source, reseedSource)
}

// configuredBlock is whether e records a configured block: an append by
// panto, with no section key, from no extension.
func configuredBlock(e *sessionlog.Entry) bool {
	if e == nil || e.Message == nil || e.Message.Role != conversation.RoleSystem {
		return false
	}
	for _, b := range e.Message.Content {
		if b.Mode == conversation.ModeReplace || b.Key != "" || strings.HasPrefix(b.Source, "extension ") {
			return false
		}
	}
	return true
}

// reseedRun is how many of ids (a row's entries) a re-seed at ids[0]
// spans: its replace entry and the configured blocks recorded right
// after it (each the child of the one before), as the seeding writes
// them; 0 when ids[0] is no re-seed.
func reseedRun(ids []string, byID map[string]*sessionlog.Entry) int {
	if _, ok := reseedBlock(byID[ids[0]]); !ok {
		return 0
	}
	n := 1
	for n < len(ids) {
		e := byID[ids[n]]
		if !configuredBlock(e) || e.ParentID != ids[n-1] {
			break
		}
		n++
	}
	return n
}

// reseedSays says what the re-seed of ids (reseedRun's) changed: the
// configured blocks it recorded against the config window it replaced,
// in the transcript's words (describe.Reseed).
func reseedSays(tree *sessionlog.Tree, ids []string, byID map[string]*sessionlog.Entry, short func(string) string) string {
	var after []describe.Block
	for _, id := range ids {
		for _, b := range byID[id].Message.Content {
			after = append(after, describe.Block{Source: strings.TrimPrefix(b.Source, reseedSource), Text: b.Text})
		}
	}
	before, err := windowBefore(tree, ids[0])
	if err != nil {
		return "re-seeded: the configured prompt changed"
	}
	return describe.Reseed(before, after, short)
}

// windowBefore is the config window on the path to the entry id: the
// run of system entries from the latest re-seed before id (or from the
// first entry) to the first entry of another kind — what a resume
// compared the configured blocks with (host.ConfigWindow). Only the
// system entries on the path are decoded.
func windowBefore(tree *sessionlog.Tree, id string) ([]describe.Block, error) {
	n, err := tree.Node(id)
	if err != nil || n.ParentID == "" {
		return nil, err
	}
	chain, err := tree.Chain(n.ParentID)
	if err != nil {
		return nil, err
	}
	var sys []string
	for _, c := range chain {
		if cn, err := tree.Node(c); err == nil && cn.Type == sessionlog.TypeMessage && cn.Role == conversation.RoleSystem {
			sys = append(sys, c)
		}
	}
	entries, err := tree.Entries(sys...)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*sessionlog.Entry, len(entries))
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	anchor := 0
	for i, c := range chain {
		if _, ok := reseedBlock(byID[c]); ok {
			anchor = i
		}
	}
	var out []describe.Block
	for _, c := range chain[anchor:] {
		e := byID[c]
		if e == nil || e.Message == nil || e.Message.Role != conversation.RoleSystem {
			break
		}
		for _, b := range e.Message.Content {
			out = append(out, describe.Block{Source: strings.TrimPrefix(b.Source, reseedSource), Text: b.Text})
		}
	}
	return out, nil
}
