package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/rules"
)

// appendSession opens the log at path with the built-in seed and the
// project's APPEND_SYSTEM.md saying rules.
func appendSession(t *testing.T, model host.Sender, path, rules_ string) *host.Session {
	t.Helper()
	s, err := host.Open(context.Background(), host.Config{
		Log: host.Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "parrot", Model: host.Model{Name: "m1"},
		Prompt: func(rules.Vars) (host.Prompt, error) {
			return host.Prompt{Blocks: []host.PromptBlock{
				{Text: "You are panto.", Source: "built-in default"},
				{Text: rules_, Source: "project /p/.panto/APPEND_SYSTEM.md"},
			}}, nil
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// After .panto/APPEND_SYSTEM.md changed, /tree labels the re-seed as the
// transcript does, and the prompt pane of an entry before it names the
// block that differs from now.
func TestTreeLabelsAReseedByWhatChanged(t *testing.T) {
	t.Parallel()
	model := &parrot{}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := appendSession(t, model, path, "old rules")
	runTurn(t, s, "one")
	require.NoError(t, s.Close(context.Background()))
	s = appendSession(t, model, path, "new rules")
	runTurn(t, s, "two")

	h := treeHarness(t, s, func(o *Options) { o.CWD = "/p" })
	h.send(tea.WindowSizeMsg{Width: 160, Height: 30})
	h.typ("/tree")
	h.enter()
	h.wait(paneReady(h), "the pane")
	scr := h.screen()
	require.Contains(t, scr, "re-seeded: .panto/APPEND_SYSTEM.md changed", "the tree's words are the transcript's")
	require.NotContains(t, scr, "built-in default changed")

	for range 3 {
		h.key(key("up")) // › two, ⚙ re-seeded, re: one
	}
	h.wait(func() bool { return strings.Contains(h.screen(), "differs from now") }, "the old prompt")
	scr = h.screen()
	require.Contains(t, flat(scr), "since then: .panto/APPEND_SYSTEM.md changed", "the pane names the block")
	require.NotContains(t, scr, "built-in default removed", "the re-seed's first block is the seed's")
}

// A re-seed of blocks that had no recorded source says so once, with a
// count.
func TestReseedCountsUnrecordedSources(t *testing.T) {
	t.Parallel()
	p := promptTracker{cwd: "/p", home: "/home/ann"}
	for _, text := range []string{"a", "b", "c"} {
		p.apply("panto", conversation.ModeAppend, "", text, "")
	}
	says, _ := p.apply("panto", conversation.ModeReplace, "", "seed", host.ReseedSource+"built-in default")
	require.Equal(t, "re-seeded: built-in default added, 3 blocks of an unrecorded source removed", says)
}
