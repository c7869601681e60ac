package tui

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

func (h *harness) printed() string { return strings.Join(h.scrollback, "\n") }

func (h *harness) frame() string { return ansi.Strip(h.m.View().Content) }

// Issue 20 item 3: on the normal screen (the default) what settled goes
// into the terminal's scrollback as it settles, and the frame holds only
// what still changes: a streaming reply is in the frame, not the
// scrollback; once it ends it is in the scrollback, and the frame is the
// editor and the status line.
func TestNormalScreenPrintsWhatSettled(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = slowTurn
	h := newHarness(t, f)
	require.False(t, h.m.View().AltScreen, "the normal screen by default")
	h.typ("go")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.frame(), "partial") }, "the reply streams")
	require.Contains(t, h.printed(), "▌ go", "the message sent is in the scrollback")
	require.NotContains(t, h.printed(), "partial", "the streaming reply is not, yet")
	require.NotContains(t, h.frame(), "▌ go", "nor twice on screen")

	h.key(tea.KeyPressMsg{Code: tea.KeyEscape})
	h.idle()
	require.Contains(t, h.printed(), "partial")
	require.Contains(t, h.printed(), "interrupted: nothing of this half reply was recorded")
	require.NotContains(t, h.frame(), "partial")
	require.LessOrEqual(t, strings.Count(h.frame(), "\n"), 4, "the frame is the live part only:\n%s", h.frame())
}

// After the UI quits, what was still in the frame follows the rest into
// the scrollback, and one line says how to come back to the session.
func TestFarewellLeavesTheConversationAndHowToResume(t *testing.T) {
	t.Parallel()
	f := newFake()
	stuck := make(chan struct{})
	defer close(stuck)
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TurnStart{Text: text}
		ch <- host.TextDelta{Text: "partial "}
		<-stuck // a turn slow to stop: quitting does not wait for it
	}
	h := newHarness(t, f)
	h.typ("go")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.frame(), "partial") }, "the reply streams")
	h.key(ctrl('d'))
	h.key(ctrl('d'))
	require.True(t, h.quit)
	bye := ansi.Strip(h.m.farewell())
	require.NotContains(t, bye, "▌ go", "printed already: not twice")
	require.Contains(t, bye, "partial")
	require.Contains(t, bye, "cut short by quitting")
	require.Contains(t, bye, "resume with panto -c or panto --resume s1")

	// The alternate screen prints the whole transcript on exit.
	g := newFake()
	a := newHarness(t, g, altScreen)
	a.typ("hello")
	a.enter()
	a.idle()
	require.Empty(t, a.scrollback, "nothing printed while it runs")
	a.key(ctrl('d'))
	bye = ansi.Strip(a.m.farewell())
	require.Contains(t, bye, "▌ hello")
	require.Contains(t, bye, "you said hello")
	require.True(t, strings.HasSuffix(bye, "\n\nresume with panto -c or panto --resume s1\n"), "%q", bye)
}

// A resumed session prints the tail of its history into the scrollback,
// not all of it: the first frame costs what its last screens cost.
func TestResumePrintsTheTail(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Resumed = true
	for i := range 2000 {
		f.msgs = append(f.msgs, conversation.UserText("question "+itoa(i)), conversation.AssistantText("answer **"+itoa(i)+"**"))
	}
	h := newHarness(t, f)
	out := h.printed()
	require.Contains(t, out, "answer 1999")
	require.NotContains(t, out, "answer 1000")
	require.Regexp(t, `resumed: 4000 messages \(the last \d+ blocks shown; PgUp shows them all`, strings.Join(strings.Fields(out), " "))
	rendered := 0
	for _, it := range h.m.list.Items() {
		if r, ok := it.(interface{ Rendered() bool }); ok && r.Rendered() {
			rendered++
		}
	}
	require.Less(t, rendered, 50, "only the tail rendered")
	// PgUp opens the whole transcript on the alternate screen.
	h.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
	require.True(t, h.m.View().AltScreen)
	require.Contains(t, h.frame(), "answer 1999")
	h.key(tea.KeyPressMsg{Code: tea.KeyHome})
	require.Contains(t, h.frame(), "question 0")
	h.key(tea.KeyPressMsg{Code: 'q', Text: "q"})
	require.False(t, h.m.View().AltScreen, "back to the normal screen")
}

// toolTurn runs a bash call that waits for release (or the interrupt).
func toolTurn(release chan struct{}) func(ctx context.Context, text string, ch chan<- host.Event) {
	return func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TurnStart{Text: text}
		ch <- host.ToolStart{ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"make"}`)}
		select {
		case <-release:
		case <-ctx.Done():
		}
		ch <- host.ToolEnd{ID: "1", Name: "bash", Result: "built\n[exit code 0]"}
		err := context.Cause(ctx)
		ch <- host.TurnEnd{Err: err}
	}
}

// Issue 20 (queue and steer): Alt+Enter while a turn runs steers — the
// message goes to the turn, shown above the editor until the host
// delivers it, then in the conversation, marked steered; Enter queues a
// follow-up, shown above the editor too, and sent when the turn ends.
func TestSteerAndQueue(t *testing.T) {
	t.Parallel()
	f, h, release := toolRunning(t)
	h.typ("use -j4")
	h.key(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	require.Equal(t, []string{"use -j4"}, f.steered, "given to the turn")
	require.Contains(t, h.frame(), "↳ steering: use -j4")
	h.typ("then test it")
	h.enter()
	require.Contains(t, h.frame(), "⏵ queued: then test it")
	require.Contains(t, h.frame(), "2 queued")
	require.Empty(t, h.m.ed.message())

	f.events <- host.Steered{Text: "use -j4"}
	h.settle()
	require.NotContains(t, h.frame(), "↳ steering")
	require.Contains(t, h.screen(), "steered into the turn")
	f.turn = echoTurn
	close(release)
	h.idle()
	h.idle()
	require.Equal(t, []string{"build it", "then test it"}, f.sentTexts(), "the follow-up went when the turn ended")
	require.Contains(t, h.printed(), "you said then test it")
}

// Alt+↑ takes the queued and steered messages back into the editor to
// edit them, and the turn goes on.
func TestAltUpTakesQueuedMessagesBack(t *testing.T) {
	t.Parallel()
	f, h, release := toolRunning(t)
	h.typ("steer me")
	h.key(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	h.typ("follow me")
	h.enter()
	h.key(tea.KeyPressMsg{Code: tea.KeyUp, Mod: tea.ModAlt})
	require.Equal(t, "steer me\nfollow me", h.m.ed.message())
	require.Empty(t, f.steered, "taken from the host too")
	require.NotContains(t, h.frame(), "queued:")
	require.NoError(t, f.turnCtx[0].Err(), "the turn goes on")
	close(release)
	h.idle()
	require.Equal(t, []string{"build it"}, f.sentTexts(), "nothing sent by itself")
}

// Issue 20 item 4: on the alternate screen, Esc while scrolled up during
// a turn goes to the end (as it does idle) and says so while streaming;
// only a second Esc interrupts.
func TestEscScrolledUpGoesToTheEndFirst(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = slowTurn
	h := newHarness(t, f, altScreen)
	for i := range 40 {
		h.m.add(&transcript.User{Text: "line " + itoa(i)})
	}
	h.typ("go")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "partial") }, "the reply streams")
	h.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
	require.Contains(t, h.screen(), "↓ more below: Esc goes to the end")
	h.key(tea.KeyPressMsg{Code: tea.KeyEscape})
	require.NoError(t, f.turnCtx[0].Err(), "not interrupted")
	require.True(t, h.m.list.Following())
	h.key(tea.KeyPressMsg{Code: tea.KeyEscape})
	h.idle()
	require.ErrorIs(t, context.Cause(f.turnCtx[0]), errInterrupted)
}

// Issue 20 item 6: Ctrl-O toggles the block you read — scrolled up, the
// one in the middle of the screen, not the bottom-most — and never one
// off screen; Ctrl-Shift-O expands every block.
func TestCtrlOTogglesTheFocusedBlock(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		for _, id := range []string{"1", "2", "3"} {
			ch <- host.ToolStart{ID: id, Name: "bash", Input: json.RawMessage(`{"command":"seq ` + id + `"}`)}
			var out strings.Builder
			for i := 1; i <= 30; i++ {
				out.WriteString(id + "-" + itoa(i) + "\n")
			}
			ch <- host.ToolEnd{ID: id, Name: "bash", Result: out.String() + "[exit code 0]"}
		}
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f, altScreen)
	h.send(tea.WindowSizeMsg{Width: 80, Height: 30})
	h.typ("run")
	h.enter()
	h.idle()
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp}) // three lines up
	s := h.screen()
	require.Contains(t, s, "bash seq 2", "the second block is in the middle of the screen:\n%s", s)
	require.Contains(t, s, "bash seq 3", "the third starts at its bottom")
	h.key(ctrl('o'))
	tools := func(id string) bool {
		for _, it := range h.m.list.Items() {
			if tl, ok := it.(interface {
				Expanded() bool
				Foldable() bool
			}); ok && strings.Contains(strings.Join(renderPlain(h, it), "\n"), "bash seq "+id) {
				return tl.Expanded()
			}
		}
		return false
	}
	require.True(t, tools("2"), "the block in the middle of the screen expanded")
	require.False(t, tools("3"), "not the bottom-most one on screen")
	h.key(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl | tea.ModShift})
	require.True(t, tools("1") && tools("2") && tools("3"), "Ctrl-Shift-O expands them all")
}

// renderPlain is an item's lines at the harness's width, plain.
func renderPlain(h *harness, it transcript.Item) []string {
	ls := it.Render(h.m.ctxFor())
	out := make([]string, ls.Len())
	for i := range out {
		out[i] = ansi.Strip(ls.Line(i))
	}
	return out
}

// With the mouse taken (mouse = true), a click on a block folds or
// expands it.
func TestClickTogglesABlock(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = seq30Turn
	h := newHarness(t, f, altScreen)
	h.typ("run")
	h.enter()
	h.idle()
	require.NotContains(t, h.screen(), "│ n15\n")
	y := -1
	for i, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, "bash seq 30") {
			y = i
		}
	}
	require.GreaterOrEqual(t, y, 0)
	h.send(tea.MouseClickMsg{Button: tea.MouseLeft, Y: y + 2})
	require.Contains(t, h.screen(), "│ n15\n", "the click expanded it")
}

// Issue 20 item 9: the first start teaches the keys a newcomer needs —
// the version, /help, Esc, Ctrl-O, quitting — in one line, and a
// section an extension adds reads as words, not jargon.
func TestFirstStartTeaches(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.unread = []host.Event{host.SystemChanged{By: "tools", Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "use tools", Source: "extension tools"}}
	h := newHarness(t, f, func(o *Options) { o.Version = "1.2.3" })
	s := h.screen()
	require.Contains(t, s, "panto 1.2.3 · /help · Esc stops a turn · Ctrl-O expands a block · Ctrl-D quits")
	require.Contains(t, s, "⚙ tools added to the system prompt (tools:guidance)")
	require.NotContains(t, s, "section added")
}

// Issue 20 item 13: /session wrapped the log's path mid-path (it cannot
// be copied whole); it has a line of its own.
func TestSessionPathOnItsOwnLine(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Path = "/home/ann/.local/state/panto/sessions/0123456789abcdef/2026-12-03.jsonl"
	h := newHarness(t, f)
	h.typ("/session")
	h.enter()
	h.wait(func() bool { return slices.Contains(strings.Split(h.screen(), "\n"), "    "+f.info.Path) }, "the path on its own line")
}

// Issue 20 item 13: the status line's ctx was stale after a change of
// the system prompt (/system-append); it is asked again.
func TestCtxFollowsAPromptChange(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	require.Contains(t, h.frame(), "ctx 1.2k/200k")
	f.mu.Lock()
	f.extraTokens = 5000
	f.mu.Unlock()
	f.events <- host.SystemChanged{By: "sysprompt", Mode: conversation.ModeAppend, Text: strings.Repeat("rule ", 5000), Source: "extension sysprompt"}
	h.settle()
	require.Contains(t, h.frame(), "ctx 6.2k/200k")
}

// Issue 20 item 13: the idle editor's border had a gap ("── ───").
func TestIdleBorderHasNoGap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	require.Contains(t, strings.Split(h.frame(), "\n"), strings.Repeat("─", 80))
}

// What settles while a page is up (the alternate screen, where nothing
// printed lands) waits, and goes into the scrollback when it closes.
func TestPrintsWaitForAPage(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = slowTurn
	h := newHarness(t, f)
	h.typ("go")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.frame(), "partial") }, "the reply streams")
	h.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
	require.True(t, h.m.View().AltScreen)
	h.m.interrupt() // the turn ends behind the page
	h.idle()
	require.NotContains(t, h.printed(), "partial", "not printed while the page is up")
	h.key(tea.KeyPressMsg{Code: 'q', Text: "q"})
	require.Contains(t, h.printed(), "partial", "printed once it closed")
}

// A /resume of a log gone since it was listed keeps the session, and
// says so in the scrollback (the normal screen held it back).
func TestResumeOfAVanishedLogSaysSo(t *testing.T) {
	t.Parallel()
	a := newFake()
	gone := filepath.Join(t.TempDir(), "gone.jsonl")
	h := newHarness(t, a, func(o *Options) {
		appOf(o).sessions = func() ([]SessionItem, error) {
			return []SessionItem{{Path: a.info.Path, ID: "s1"}, {Path: gone, ID: "s2", First: "gone"}}, nil
		}
	})
	h.typ("/resume")
	h.enter()
	require.True(t, h.m.View().AltScreen)
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	h.enter()
	h.wait(func() bool { return h.m.busy == idle && h.m.sess != nil }, "the switch gives up")
	h.settle()
	require.False(t, h.m.View().AltScreen)
	require.Contains(t, h.printed(), "no longer exists")
}

// /transcript opens the whole conversation on a page, every block
// expanded.
func TestTranscriptCommand(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = seq30Turn
	h := newHarness(t, f)
	h.typ("run")
	h.enter()
	h.idle()
	require.NotContains(t, h.printed(), "│ n3\n", "folded in the scrollback")
	h.typ("/transcript")
	h.enter()
	require.True(t, h.m.View().AltScreen)
	h.key(tea.KeyPressMsg{Code: tea.KeyHome})
	require.Contains(t, h.frame(), "│ n3\n", "expanded on the page")
}

// seq30Turn runs a bash call whose output is 30 lines, n1 to n30.
func seq30Turn(ctx context.Context, text string, ch chan<- host.Event) {
	ch <- host.ToolStart{ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"seq 30"}`)}
	var out strings.Builder
	for i := 1; i <= 30; i++ {
		out.WriteString("n" + itoa(i) + "\n")
	}
	ch <- host.ToolEnd{ID: "1", Name: "bash", Result: out.String()}
	ch <- host.TurnEnd{}
}

// toolRunning is a UI whose turn runs a bash call until release closes;
// the session takes steered messages.
func toolRunning(t *testing.T) (*fakeSession, *harness, chan struct{}) {
	f := newFake()
	f.steerable = true
	release := make(chan struct{})
	f.turn = toolTurn(release)
	h := newHarness(t, f)
	h.typ("build it")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.frame(), "bash make") }, "the call runs")
	return f, h, release
}

// /reload opens the same log again: its conversation is in the
// scrollback already and is not printed twice; what the reload did is.
func TestReloadDoesNotPrintTheConversationAgain(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	h.typ("hello")
	h.enter()
	h.idle()
	f.msgs = []conversation.Message{conversation.UserText("hello"), conversation.AssistantText("you said **hello**")}
	again := newFake()
	again.info = f.info
	again.info.Resumed, again.info.Loaded = true, 2
	again.msgs = f.msgs
	h.exec(func() tea.Msg { return switchedMsg{sess: again, what: "reloaded: restarted the extensions"} })
	h.wait(func() bool { return h.m.sess == Session(again) }, "the reload")
	h.settle()
	require.Equal(t, 1, strings.Count(h.printed(), "you said hello"), h.printed())
	require.Contains(t, h.printed(), "reloaded: restarted the extensions")
	require.NotContains(t, h.printed(), "resumed: 2 messages")
}

// A panto whose extensions are not installed offers the model no tools:
// the start says so, and how to get them.
func TestNoExtensionsSaysTheModelHasNoTools(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Extensions = nil
	h := newHarness(t, f)
	require.Contains(t, strings.Join(strings.Fields(h.screen()), " "), "no extensions are loaded, so the model has no tools (read, edit, bash): make install")
	g := newHarness(t, newFake())
	require.NotContains(t, g.screen(), "no extensions are loaded")
}
