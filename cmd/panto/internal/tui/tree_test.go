package tui

import (
	"context"
	"errors"
	"os"
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
	return serializers.Reply{Message: conversation.AssistantText("re: " + last.Typed()), StopReason: serializers.StopEndTurn}, nil
}

// realSession opens a recorded host session seeded with "seed".
func realSession(t *testing.T, model host.Sender, path string) *host.Session {
	t.Helper()
	s, err := host.Open(context.Background(), host.Config{
		Log: host.Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "parrot", Model: host.Model{Name: "m1"},
		Prompt: func(rules.Vars) (host.Prompt, error) {
			return host.Prompt{Blocks: []host.PromptBlock{{Text: "seed"}}}, nil
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// runTurn runs a turn of s to its end.
func runTurn(t *testing.T, s *host.Session, text string) {
	t.Helper()
	events := s.Subscribe(t.Context())
	require.NoError(t, s.Turn(context.Background(), text))
	for ev := range events {
		if end, ok := ev.(host.TurnEnd); ok {
			require.NoError(t, end.Err)
			return
		}
	}
}

// recordAs closes s, records text in the log at path as the extension by
// records a system edit, and opens the log again: nothing outside host
// can record in an extension's name, so the test writes the log itself.
func recordAs(t *testing.T, s *host.Session, model host.Sender, path, by string, mode conversation.Mode, text string) *host.Session {
	t.Helper()
	require.NoError(t, s.Close(context.Background()))
	w, _, err := sessionlog.Open(path)
	require.NoError(t, err)
	_, err = w.Append(sessionlog.MessageEntry(conversation.SystemMessage(text, mode).WithSource("extension " + by)))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return realSession(t, model, path)
}

// leafOf is the session's current leaf.
func leafOf(t *testing.T, s *host.Session) string {
	t.Helper()
	tree, err := s.Tree()
	require.NoError(t, err)
	return tree.Leaf()
}

func treeHarness(t *testing.T, s Session, opts ...func(*Options)) *harness {
	t.Helper()
	h := newHarness(t, nil, append([]func(*Options){func(o *Options) {
		appOf(o).open = func(context.Context) (Session, error) { return s, nil }
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
	runTurn(t, s, "one")
	s = recordAs(t, s, model, path, "persona", conversation.ModeReplace, "You are a pirate.")
	runTurn(t, s, "two")
	h := treeHarness(t, s, altScreen)
	h.typ("/tree")
	h.enter()
	h.wait(paneReady(h), "the pane")
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
	h.wait(paneReady(h), "the pane")
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
	runTurn(t, s, "one")
	reply := leafOf(t, s)
	h := treeHarness(t, s)
	h.typ("/tree")
	h.enter()
	h.wait(paneReady(h), "the pane")
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
	dir := t.TempDir()
	p1, p2, bad := filepath.Join(dir, "s1.jsonl"), filepath.Join(dir, "s2.jsonl"), filepath.Join(dir, "bad.jsonl")
	for _, p := range []string{p1, p2, bad} {
		require.NoError(t, os.WriteFile(p, nil, 0o600))
	}
	a, b := newFake(), newFake()
	a.info.Path = p1
	b.info = host.Info{ID: "s2", Path: p2, Provider: "echo", Model: "echo", Resumed: true}
	b.msgs = []conversation.Message{conversation.UserText("hello from b"), conversation.AssistantText("b's reply")}
	var reopened []string
	h := newHarness(t, a, altScreen, func(o *Options) {
		appOf(o).sessions = func() ([]SessionItem, error) {
			return []SessionItem{
				{Path: p1, ID: "s1", Messages: 0, First: "first of a"},
				{Path: p2, ID: "s2", Messages: 2, First: "hello from b"},
				{Path: bad, ID: "bad", Messages: 1, First: "a log that will not open"},
			}, nil
		}
		appOf(o).reopen = func(_ context.Context, path string) (Session, error) {
			reopened = append(reopened, path)
			switch path {
			case p2:
				return b, nil
			case p1:
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
	require.NotContains(t, scr, "resumed: 2 messages", "the switch is said once (issue 20 item 13)")
	require.Contains(t, scr, "hello from b")
	require.NotContains(t, scr, "you said", "a's conversation is gone")

	h.typ("/resume")
	h.enter()
	h.key(key("down"))
	h.key(key("down"))
	h.enter()
	h.wait(func() bool { return h.m.busy == idle && h.m.sess != nil }, "the switch back")
	h.settle()
	require.Equal(t, []string{p2, bad, p2}, reopened)
	require.Contains(t, h.screen(), "torn header")
	require.Contains(t, h.screen(), "(back in the session left)")
	require.Equal(t, "s2", h.m.sess.Info().ID)
	a.closed, b.closed = false, false
	require.NoError(t, h.m.Shutdown(context.Background()))
	require.True(t, b.closed, "quitting closes the session in use")
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

// gate is a parrot whose first request waits for open to be closed.
type gate struct {
	parrot
	open  chan struct{}
	once  bool
	texts []string
}

func (g *gate) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	if !g.once {
		g.once = true
		select {
		case <-g.open:
		case <-ctx.Done():
			return serializers.Reply{}, ctx.Err()
		}
	}
	g.texts = append(g.texts, req.Messages[len(req.Messages)-1].Typed())
	return g.parrot.Send(ctx, req, fn)
}

// A message queued after a queued /tree is sent when the navigator
// closes, before anything typed later.
func TestQueuedMessageAfterTheNavigator(t *testing.T) {
	t.Parallel()
	model := &gate{open: make(chan struct{})}
	s := realSession(t, model, filepath.Join(t.TempDir(), "s.jsonl"))
	h := treeHarness(t, s)
	h.typ("first")
	h.enter()
	h.wait(func() bool { return h.m.busy == turning }, "the turn runs")
	h.typ("/tree")
	h.enter()
	h.typ("QUEUED")
	h.enter()
	close(model.open)
	h.wait(func() bool { _, ok := h.m.ov.(*treeNav); return ok }, "the navigator opens after the turn")
	require.Equal(t, []string{"first"}, model.texts, "nothing is sent while the navigator is up")
	h.key(key("esc"))
	h.idle()
	require.Equal(t, []string{"first", "QUEUED"}, model.texts)
}

// In the navigator a reply that called tools stands for its results
// too: Enter continues after them. /tree ID jumps as in the line loop.
// Ctrl-D does not quit from the navigator; a paste into the label is
// one line.
func TestNavigatorOnAToolCallingReply(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	add := func(m conversation.Message) string {
		out, err := w.Append(sessionlog.MessageEntry(m))
		require.NoError(t, err)
		return out[0].ID
	}
	add(conversation.SystemMessage("seed", conversation.ModeAppend))
	add(conversation.UserText("u1"))
	add(conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse("c1", "read", []byte(`{}`))}})
	results := add(conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("c1", "file text", false)}})
	a1 := add(conversation.AssistantText("a1"))
	add(conversation.UserText("u2"))
	add(conversation.AssistantText("a2"))
	require.NoError(t, w.Close())

	model := &parrot{}
	s := realSession(t, model, path)
	h := treeHarness(t, s)
	h.typ("/tree")
	h.enter()
	h.wait(paneReady(h), "the pane")
	h.key(ctrl('d'))
	require.False(t, h.quit, "Ctrl-D does not quit from the navigator")
	h.key(key("l"))
	h.send(tea.PasteMsg{Content: "two\nlines"})
	require.Equal(t, "two lines", h.m.ov.(*treeNav).label.Value())
	h.key(key("esc"))

	for range 3 { // from a2: u2, a1, the reply that called read
		h.key(key("up"))
	}
	h.enter()
	h.idle()
	require.NotContains(t, h.screen(), "/tree: ")
	require.Equal(t, results, leafTarget(t, s), "the move goes to the reply's results")

	h.typ("/tree " + a1[:8])
	h.enter()
	h.idle()
	require.Equal(t, a1, leafTarget(t, s))
}

// leafTarget is the entry the session continues from: its leaf, or the
// target of the move that is its leaf.
func leafTarget(t *testing.T, s *host.Session) string {
	t.Helper()
	tree, err := s.Tree()
	require.NoError(t, err)
	n, err := tree.Node(tree.Leaf())
	require.NoError(t, err)
	if n.Type == sessionlog.TypeMove {
		return n.ParentID
	}
	return n.ID
}

// From a session not recorded (--no-session), a /resume that fails
// stays in it: it could not be opened again.
func TestResumeFromAnUnrecordedSessionThatFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "s2.jsonl")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	a := newFake()
	a.info.Path = ""
	h := newHarness(t, a, func(o *Options) {
		appOf(o).sessions = func() ([]SessionItem, error) { return []SessionItem{{Path: target, ID: "s2", Messages: 2}}, nil }
		appOf(o).reopen = func(context.Context, string) (Session, error) { return nil, errors.New("locked by pid 42") }
	})
	h.typ("/resume")
	h.enter()
	h.enter()
	h.wait(func() bool { return h.m.busy == idle && h.m.sess != nil }, "the switch fails")
	h.settle()
	require.False(t, h.quit)
	require.False(t, a.closed, "the unrecorded session stays open")
	require.Contains(t, strings.Join(strings.Fields(h.screen()), " "), "locked by pid 42")
	h.typ("still here")
	h.enter()
	h.idle()
	require.Equal(t, []string{"still here"}, a.sentTexts())
}

// paneReady reports the /tree pane showing a prompt: its title, not the
// line that says it is being read ("reading the prompt as of …").
func paneReady(h *harness) func() bool {
	return func() bool {
		s := h.screen()
		return strings.Contains(s, "as of ") && !strings.Contains(s, "reading the prompt")
	}
}

// On a change of the prompt, the pane says what changed here: the diff
// of the prompt as of the row above against the prompt the row made.
func TestTreePaneShowsWhatChangedHere(t *testing.T) {
	t.Parallel()
	model := &parrot{}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := realSession(t, model, path)
	runTurn(t, s, "one")
	s = recordAs(t, s, model, path, "persona", conversation.ModeReplace, "You are a pirate.")
	runTurn(t, s, "two")
	h := treeHarness(t, s, altScreen)
	h.typ("/tree")
	h.enter()
	h.wait(paneReady(h), "the pane")
	require.NotContains(t, h.screen(), "what changed here", "a reply changed nothing")

	h.key(key("up")) // › two
	h.key(key("up")) // ⚙ persona
	h.wait(func() bool { return strings.Contains(h.screen(), "what changed here") }, "what changed here")
	scr := h.screen()
	require.Contains(t, scr, "what changed here: +1 −1 lines")
	require.Contains(t, scr, "- seed")
	require.Contains(t, scr, "+ You are a pirate.")
}
