package tui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// parrot is a model that answers "re: TEXT" and remembers the system
// prompt of each request.
type parrot struct{ systems [][]string }

func (p *parrot) Send(_ context.Context, req serializers.Request, _ serializers.DeltaFunc) (serializers.Reply, error) {
	var sys []string
	for _, b := range conversation.EffectiveSystem(req.Messages) {
		sys = append(sys, b.Text)
	}
	p.systems = append(p.systems, sys)
	last := req.Messages[len(req.Messages)-1]
	return serializers.Reply{Message: conversation.AssistantText("re: " + userText(last)), StopReason: serializers.StopEndTurn}, nil
}

// realSession opens a recorded host session seeded with "seed".
func realSession(t *testing.T, model host.Sender, path string) *host.Session {
	t.Helper()
	s, err := host.Open(context.Background(), host.Config{
		Log: host.Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "parrot", Request: serializers.Request{Model: "m1"},
		Prompt: func(rules.Vars) (host.Prompt, error) {
			return host.Prompt{Blocks: []host.PromptBlock{{Text: "seed"}}}, nil
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func treeHarness(t *testing.T, s Session, opts ...func(*Options)) *harness {
	t.Helper()
	h := newHarness(t, nil, append([]func(*Options){func(o *Options) {
		o.Open = func(context.Context) (Session, error) { return s, nil }
	}}, opts...)...)
	h.wait(func() bool { return h.m.sess != nil }, "the session opens")
	h.settle()
	return h
}

func key(name string) tea.KeyPressMsg {
	switch name {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	r := []rune(name)[0]
	return tea.KeyPressMsg{Code: r, Text: name}
}

// The navigator starts on the current entry; the pane follows the
// cursor with the prompt as of each entry; Enter on a reply continues
// from it (the transcript redrawn), on a message of the user's from
// before it, with its text back in the editor.
func TestTreeNavigator(t *testing.T) {
	t.Parallel()
	model := &parrot{}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := realSession(t, model, path)
	ctx := context.Background()
	for range s.Turn(ctx, "one") {
	}
	require.NoError(t, s.EditSystem("persona", conversation.ModeReplace, "You are a pirate."))
	for range s.Turn(ctx, "two") {
	}
	h := treeHarness(t, s)
	h.typ("/tree")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "as of ") }, "the pane")
	scr := h.screen()
	require.Contains(t, scr, "● re: two")
	require.Contains(t, scr, "You are a pirate.")
	require.Contains(t, scr, "as now")

	h.key(key("up")) // › two
	h.key(key("up")) // ⚙ persona
	h.key(key("up")) // re: one
	h.wait(func() bool { return strings.Contains(h.screen(), "differs from now") }, "the old prompt")
	scr = h.screen()
	require.Contains(t, scr, "seed")
	require.NotContains(t, scr, "You are a pirate.")

	h.enter()
	h.idle()
	scr = h.screen()
	require.Contains(t, scr, "moved to ")
	require.NotContains(t, scr, "re: two", "the branch left is not on screen")
	h.typ("three")
	h.enter()
	h.idle()
	require.Equal(t, []string{"seed"}, model.systems[len(model.systems)-1], "the reply after the jump is made under the prompt of that point")

	// Enter on a message of the user's: ask it again.
	h.typ("/tree")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "as of ") }, "the pane")
	h.key(key("up")) // › three
	h.enter()
	h.idle()
	require.Equal(t, "three", h.m.ed.value())
	require.NotContains(t, h.screen(), "re: three")
}

// l labels the entry under the cursor, in the log; Esc leaves the
// label as it was.
func TestTreeLabel(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := realSession(t, &parrot{}, path)
	for range s.Turn(context.Background(), "one") {
	}
	reply := s.Leaf()
	h := treeHarness(t, s)
	h.typ("/tree")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "as of ") }, "the pane")
	h.key(key("l"))
	h.typ("keep")
	h.key(key("esc"))
	h.key(key("l"))
	h.typ("good spot")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "[good spot] re: one") }, "the label")
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	require.Equal(t, map[string]string{reply: "good spot"}, log.Tree().Labels())
}

// /resume switches sessions: the one left is closed, the other's
// conversation drawn; when the other cannot be opened, panto goes back to
// the one left and says why.
func TestResumeSwitchesSessions(t *testing.T) {
	t.Parallel()
	a, b := newFake(), newFake()
	b.info = host.Info{ID: "s2", Path: "/tmp/s2.jsonl", Provider: "echo", Model: "echo", Resumed: true}
	b.msgs = []conversation.Message{conversation.UserText("hello from b"), conversation.AssistantText("b's reply")}
	var reopened []string
	h := newHarness(t, a, func(o *Options) {
		o.Sessions = func() ([]SessionItem, error) {
			return []SessionItem{
				{Path: "/tmp/s1.jsonl", ID: "s1", Messages: 0, First: "first of a"},
				{Path: "/tmp/s2.jsonl", ID: "s2", Messages: 2, First: "hello from b"},
				{Path: "/tmp/bad.jsonl", ID: "bad", Messages: 1, First: "a log that will not open"},
			}, nil
		}
		o.Reopen = func(_ context.Context, path string) (Session, error) {
			reopened = append(reopened, path)
			switch path {
			case "/tmp/s2.jsonl":
				return b, nil
			case "/tmp/s1.jsonl":
				return a, nil
			}
			return nil, errors.New("torn header")
		}
	})
	h.typ("hi")
	h.enter()
	h.idle()
	h.typ("/resume")
	h.enter()
	scr := h.screen()
	require.Contains(t, scr, "* s1")
	require.Contains(t, scr, "hello from b")
	h.key(key("down"))
	h.enter()
	h.wait(func() bool { return h.m.sess == Session(b) && h.m.busy == idle }, "the switch")
	h.settle()
	scr = h.screen()
	require.True(t, a.closed, "the session left is closed")
	require.Contains(t, scr, "resumed session s2")
	require.Contains(t, scr, "hello from b")
	require.NotContains(t, scr, "you said", "a's conversation is gone")

	h.typ("/resume")
	h.enter()
	h.key(key("down"))
	h.key(key("down"))
	h.enter()
	h.wait(func() bool { return h.m.busy == idle && h.m.sess != nil }, "the switch back")
	h.settle()
	require.Equal(t, []string{"/tmp/s2.jsonl", "/tmp/bad.jsonl", "/tmp/s2.jsonl"}, reopened)
	require.Contains(t, h.screen(), "torn header (back in the session left)")
	require.Equal(t, "s2", h.m.sess.Info().ID)
}

// Without a log there is no tree: /tree, /label and /fork say so.
func TestTreeWithoutALog(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Path = ""
	h := newHarness(t, f)
	for _, c := range []string{"/tree", "/label x", "/fork"} {
		h.typ(c)
		h.enter()
		h.idle()
	}
	require.Equal(t, 3, strings.Count(h.screen(), "not recorded (--no-session)"), h.screen())
}
