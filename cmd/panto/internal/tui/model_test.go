package tui

import (
	"context"
	"encoding/json"
	"errors"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// Enter sends; Shift+Enter, Alt+Enter and Ctrl-J insert a new line.
func TestEnterSendsNewlineKeysDoNot(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	h.typ("one")
	h.key(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModShift})
	h.typ("two")
	h.key(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	h.typ("three")
	h.key(ctrl('j'))
	h.typ("four")
	require.Equal(t, "one\ntwo\nthree\nfour", h.m.ed.value())
	require.Empty(t, f.sentTexts(), "no newline key sends")
	h.enter()
	h.idle()
	require.Equal(t, []string{"one\ntwo\nthree\nfour"}, f.sentTexts())
	require.Contains(t, h.screen(), "you said one two three four", "the reply, rendered (bold markers gone)")
	require.True(t, h.m.ed.empty())
}

// Newcomer defect: the Up arrow was sent to the model as "\x1b[A", and
// Ctrl-L as "\x0c". Here Up recalls history and Ctrl-L redraws; neither
// is ever text.
func TestUpArrowAndCtrlLAreNotText(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	h.typ("first")
	h.enter()
	h.idle()
	h.key(tea.KeyPressMsg{Code: tea.KeyUp})
	require.Equal(t, "first", h.m.ed.value(), "Up on the first line recalls the last message")
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	require.Equal(t, "", h.m.ed.value(), "Down past the newest gives the draft back")
	h.typ("x")
	h.key(ctrl('l'))
	require.True(t, h.clear, "Ctrl-L redraws")
	require.Equal(t, "x", h.m.ed.value())
	h.enter()
	h.idle()
	for _, s := range f.sentTexts() {
		require.NotContains(t, s, "\x1b")
		require.NotContains(t, s, "\x0c")
	}
	require.Equal(t, []string{"first", "x"}, f.sentTexts())
}

// History: Up recalls on the first line only (elsewhere it moves the
// cursor), multi-line entries come back whole, and the draft survives.
func TestHistory(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	h.m.ed.hist.Prepend([]string{"old one", "multi\nline"})
	h.typ("draft")
	h.key(tea.KeyPressMsg{Code: tea.KeyUp})
	require.Equal(t, "multi\nline", h.m.ed.value())
	h.key(tea.KeyPressMsg{Code: tea.KeyUp})
	require.Equal(t, "multi\nline", h.m.ed.value(), "the cursor was on the last line: Up moves it up first")
	h.key(tea.KeyPressMsg{Code: tea.KeyUp})
	require.Equal(t, "old one", h.m.ed.value())
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	require.Equal(t, "draft", h.m.ed.value())
}

// History is kept per project in a file, loaded after the first frame.
func TestHistoryPersists(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "state", "history", "x.jsonl")
	h := newHarness(t, newFake(), func(o *Options) { o.HistoryFile = file })
	h.typ("remember me")
	h.key(ctrl('j'))
	h.typ("  indented")
	h.enter()
	h.idle()
	got, err := history.Load(file)
	require.NoError(t, err)
	require.Equal(t, []string{"remember me\n  indented"}, got)
	h2 := newHarness(t, newFake(), func(o *Options) { o.HistoryFile = file })
	h2.key(tea.KeyPressMsg{Code: tea.KeyUp})
	require.Equal(t, "remember me\n  indented", h2.m.ed.value())
}

// Newcomer defects: a pasted four-line function became four requests and
// lost its indentation; a 6,000-character paste was cut to 4,095. A
// paste is one message, byte for byte.
func TestPasteIsOneMessageWhole(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	fn := "func f() {\r\n\tif x {\r\n\t\treturn 1\r\n\t}\r\n}"
	h.send(tea.PasteStartMsg{})
	h.send(tea.PasteMsg{Content: fn})
	h.send(tea.PasteEndMsg{})
	h.settle()
	require.Empty(t, f.sentTexts(), "a paste never sends")
	h.enter()
	h.idle()
	require.Equal(t, []string{"func f() {\n\tif x {\n\t\treturn 1\n\t}\n}"}, f.sentTexts(), "tabs and lines kept")

	long := strings.Repeat("0123456789", 600) + "END"
	h.send(tea.PasteMsg{Content: long})
	h.settle()
	require.Contains(t, h.m.ed.value(), "[paste #", "a long paste shows as a token")
	h.typ(" tail")
	h.enter()
	h.idle()
	sent := f.sentTexts()
	require.Equal(t, long+" tail", sent[len(sent)-1], "no length cut")

	small := "two\n  lines"
	h.send(tea.PasteMsg{Content: small})
	h.settle()
	require.Equal(t, small, h.m.ed.value(), "a small paste is edited in place")
}

// Newcomer defect: Ctrl-D sent half-typed text. Here it quits only on an
// empty editor.
func TestCtrlDQuitsOnlyWhenEmpty(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	h.typ("half")
	h.key(tea.KeyPressMsg{Code: tea.KeyLeft})
	h.key(ctrl('d'))
	require.False(t, h.quit)
	require.Equal(t, "hal", h.m.ed.value(), "Ctrl-D deletes the character under the cursor")
	require.Empty(t, f.sentTexts())
	h.key(ctrl('u'))
	h.key(ctrl('d'))
	require.True(t, h.quit)
	require.Empty(t, f.sentTexts())
}

// Ctrl-C clears the editor; twice on an empty one quits; an idle Ctrl-C
// that is not followed by another within the window does not.
func TestCtrlC(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	h.typ("some text")
	h.key(ctrl('c'))
	require.True(t, h.m.ed.empty())
	require.False(t, h.quit)
	h.key(ctrl('c'))
	require.False(t, h.quit)
	require.Contains(t, h.screen(), "Ctrl-C again to quit")
	h.now = h.now.Add(3 * time.Second)
	h.key(ctrl('c'))
	require.False(t, h.quit, "too late: that one arms again")
	h.key(ctrl('c'))
	require.True(t, h.quit)
}

// A slow turn, for interrupting.
func slowTurn(ctx context.Context, text string, ch chan<- host.Event) {
	ch <- host.TurnStart{Text: text}
	ch <- host.TextDelta{Text: "partial "}
	<-ctx.Done()
	err := context.Cause(ctx)
	ch <- host.Error{Err: err}
	ch <- host.TurnEnd{Err: err}
}

// Esc and Ctrl-C interrupt a running turn: its context is cancelled,
// the half reply is marked, the session goes on.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	for _, k := range []tea.KeyPressMsg{{Code: tea.KeyEscape}, ctrl('c')} {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			f := newFake()
			f.turn = slowTurn
			h := newHarness(t, f)
			h.typ("go")
			h.enter()
			h.wait(func() bool { return strings.Contains(h.screen(), "partial") }, "the reply streams")
			require.Contains(t, h.screen(), "working")
			h.key(k)
			h.idle()
			require.ErrorIs(t, context.Cause(f.turnCtx[0]), errInterrupted)
			require.Contains(t, h.screen(), "interrupted: nothing of this half reply was recorded")
			require.False(t, h.quit)
			f.turn = echoTurn
			h.typ("again")
			h.enter()
			h.idle()
			require.Contains(t, h.screen(), "you said again")
		})
	}
}

// Messages sent while a turn runs wait for it; those typed before the
// session opened are sent once it has.
func TestQueue(t *testing.T) {
	t.Parallel()
	f := newFake()
	gate := make(chan struct{})
	h := newHarness(t, nil, func(o *Options) {
		appOf(o).open = func(context.Context) (Session, error) { <-gate; return f, nil }
	})
	require.Contains(t, h.screen(), "starting extensions")
	h.typ("early")
	h.enter()
	require.Contains(t, h.screen(), "queued")
	require.Empty(t, f.sentTexts())
	close(gate)
	h.wait(func() bool { return len(f.sentTexts()) == 1 }, "the early message is sent")
	h.idle()
	require.Equal(t, []string{"early"}, f.sentTexts())
	require.NotContains(t, h.screen(), "queued")
}

// Newcomer defect: markdown was printed raw, so a reply's "> quote"
// looked like panto's prompt. It is rendered.
func TestMarkdownRendered(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		reply := "# Title\n\n> a quote\n\n- item\n\n`code`\n"
		ch <- host.TextDelta{Text: reply}
		ch <- host.Reply{Message: conversation.AssistantText(reply), Streamed: true}
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f)
	h.typ("md")
	h.enter()
	h.idle()
	s := h.screen()
	require.Contains(t, s, "│ a quote")
	require.NotContains(t, s, "> a quote")
	require.Contains(t, s, "• item")
	require.Contains(t, s, "# Title", "NO_COLOR keeps the heading's marker")
}

// Newcomer defect: no spinner, no token count, no context use. While a
// turn runs the activity bar spins with the elapsed time; the status
// line counts tokens and shows the context's use.
func TestSpinnerTokensContext(t *testing.T) {
	t.Parallel()
	f := newFake()
	release := make(chan struct{})
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.Usage{InputTokens: 1500, OutputTokens: 20, Model: "echo", CostUSD: (1500*3 + 20*15) / 1e6, CostKnown: true}
		<-release
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f)
	h.typ("hi")
	h.enter()
	h.wait(func() bool { return h.m.status.in > 0 }, "usage arrives")
	h.now = h.now.Add(2500 * time.Millisecond)
	s := h.screen()
	require.Contains(t, s, "working 2.5s")
	require.Regexp(t, `[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working`, s)
	require.Contains(t, s, "↑1.5k ↓20")
	require.Contains(t, s, "ctx 1.2k/200k 0%")
	require.Contains(t, s, "$0.005")
	close(release)
	h.idle()
	require.NotContains(t, h.screen(), "working")
}

// Resume draws the conversation so far: the newest at the bottom,
// rendered; older items only when scrolled to.
func TestResumeRedraws(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Resumed = true
	f.msgs = []conversation.Message{
		conversation.SystemMessage("You are terse.", conversation.ModeAppend).WithSource("project /p/.panto/SYSTEM.md"),
		conversation.UserText("earlier question"),
		{Role: conversation.RoleAssistant, Content: []conversation.Block{
			conversation.Text("earlier **answer**"),
			conversation.ToolUse("t1", "bash", json.RawMessage(`{"command":"ls"}`)),
		}},
		{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("t1", "a.go\n[exit code 0]", false)}},
		conversation.AssistantText("done"),
	}
	h := newHarness(t, f)
	s := h.screen()
	require.Contains(t, s, "▌ earlier question")
	require.Contains(t, s, "earlier answer")
	require.Contains(t, s, "✓ bash ls · exit 0")
	require.Contains(t, s, "resumed: 5 messages")
	require.Contains(t, s, "⚙ system prompt: project /p/.panto/SYSTEM.md")
}

// A long history renders from the bottom: the first frame renders a
// screenful, not the conversation.
func TestResumeRendersOnlyTheScreen(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Resumed = true
	for i := range 2000 {
		f.msgs = append(f.msgs, conversation.UserText("question "+itoa(i)), conversation.AssistantText("answer **"+itoa(i)+"**"))
	}
	h := newHarness(t, f, altScreen)
	require.Contains(t, h.screen(), "answer 1999")
	rendered := 0
	for _, it := range h.m.list.Items() {
		if r, ok := it.(interface{ Rendered() bool }); ok && r.Rendered() {
			rendered++
		}
	}
	require.Less(t, rendered, 40, "only the items on screen rendered")
	for range 3 {
		h.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	require.NotContains(t, h.screen(), "answer 1999")
	require.Contains(t, h.screen(), "more below")
}

// System-prompt changes show inline, saying who changed what.
func TestSystemChangesInline(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.unread = []host.Event{
		host.SystemChanged{By: "panto", Mode: conversation.ModeAppend, Text: "seed", Source: "built-in default"},
		host.SystemChanged{By: "tools", Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "use tools", Source: "extension tools"},
	}
	f.msgs = []conversation.Message{
		conversation.SystemMessage("seed", conversation.ModeAppend),
		conversation.KeyedSystemMessage("tools:guidance", "use tools"),
	}
	h := newHarness(t, f)
	f.events <- host.SystemChanged{By: "tools", Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "use tools well", Source: "extension tools"}
	f.events <- host.SystemChanged{By: "persona", Mode: conversation.ModeReplace, Text: "You are a pirate.", Source: "extension persona"}
	h.wait(func() bool { return strings.Contains(h.screen(), "persona replaced") }, "the changes show")
	s := h.screen()
	require.Contains(t, s, "⚙ system prompt: built-in default")
	require.Contains(t, s, "⚙ tools added to the system prompt (tools:guidance)")
	require.Contains(t, s, "⚙ tools updated its part of the system prompt (tools:guidance)")
	require.Contains(t, s, "⚙ persona replaced the system prompt")
	h.key(ctrl('o'))
	require.Contains(t, h.screen(), "You are a pirate.", "Ctrl-O shows the text")
}

// A re-seed says which file changed.
func TestReseedSaysWhatChanged(t *testing.T) {
	t.Parallel()
	p := promptTracker{cwd: "/p", home: "/home/ann"}
	p.apply("panto", conversation.ModeAppend, "", "seed", "project /p/.panto/SYSTEM.md")
	p.apply("panto", conversation.ModeAppend, "", "old", "project /p/.panto/APPEND_SYSTEM.md")
	p.apply("panto", conversation.ModeAppend, "", "mine", "user /home/ann/.config/panto/APPEND_SYSTEM.md")
	p.apply("tools", conversation.ModeAppend, "tools:guidance", "g", "extension tools")
	says, more := p.apply("panto", conversation.ModeReplace, "", "seed", host.ReseedSource+"project /p/.panto/SYSTEM.md")
	require.False(t, more)
	require.Equal(t, "re-seeded: .panto/APPEND_SYSTEM.md removed, ~/.config/panto/APPEND_SYSTEM.md removed", says)
	says, more = p.apply("panto", conversation.ModeAppend, "", "new", "project /p/.panto/APPEND_SYSTEM.md")
	require.True(t, more)
	require.Equal(t, "re-seeded: .panto/APPEND_SYSTEM.md changed, ~/.config/panto/APPEND_SYSTEM.md removed", says)
	says, _ = p.apply("panto", conversation.ModeAppend, "", "mine", "user /home/ann/.config/panto/APPEND_SYSTEM.md")
	require.Equal(t, "re-seeded: .panto/APPEND_SYSTEM.md changed", says)

	// An extension's replace in between does not count: the re-seed is
	// compared with what was configured.
	says, _ = p.apply("sysprompt", conversation.ModeReplace, "", "You are a pirate.", "extension sysprompt")
	require.Equal(t, "sysprompt replaced the system prompt", says)
	p.apply("panto", conversation.ModeReplace, "", "seed", host.ReseedSource+"project /p/.panto/SYSTEM.md")
	p.apply("panto", conversation.ModeAppend, "", "newer", "project /p/.panto/APPEND_SYSTEM.md")
	says, _ = p.apply("panto", conversation.ModeAppend, "", "mine", "user /home/ann/.config/panto/APPEND_SYSTEM.md")
	require.Equal(t, "re-seeded: .panto/APPEND_SYSTEM.md changed", says)
}

// A tool call: running with a spinner and its time, then its exit code
// and output; an edit as a diff; Ctrl-O expands the output.
func TestToolBlocks(t *testing.T) {
	t.Parallel()
	f := newFake()
	release := make(chan struct{})
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.ToolStart{ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"seq 20; exit 2"}`)}
		ch <- host.ToolStart{ID: "2", Name: "edit", Input: json.RawMessage(`{"path":"x.go","edits":[{"old_text":"return 1","new_text":"return 2"}]}`)}
		<-release
		var out strings.Builder
		for i := 1; i <= 20; i++ {
			out.WriteString(itoa(i) + "\n")
		}
		ch <- host.ToolEnd{ID: "1", Name: "bash", Result: out.String() + "[exit code 2]", IsError: true, Duration: 1200 * time.Millisecond}
		ch <- host.ToolEnd{ID: "2", Name: "edit", Result: "Edited x.go: applied 1 edit (at line 7).", Duration: 3 * time.Millisecond}
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f, altScreen)
	h.typ("tools")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "bash seq 20") }, "the call starts")
	h.now = h.now.Add(700 * time.Millisecond)
	require.Regexp(t, `[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash seq 20; exit 2 · 0.7s`, h.screen())
	close(release)
	h.idle()
	s := h.screen()
	require.Contains(t, s, "✗ bash seq 20; exit 2 · exit 2 · 1.2s")
	require.Contains(t, s, "… 12 earlier lines · ctrl+o shows them")
	require.Contains(t, s, "│ 20")
	require.NotContains(t, s, "│ 3\n")
	require.Contains(t, s, "✓ edit x.go")
	require.Contains(t, s, "@@ -7 +7 @@ (-1 +1)")
	require.Contains(t, s, "- return 1")
	require.Contains(t, s, "+ return 2")
	// Ctrl-O expands the nearest collapsible block on screen: the bash
	// output (the edit shows whole).
	for i := range h.m.list.Len() {
		if tl, ok := h.m.list.At(i).(interface{ Expanded() bool }); ok && tl.Expanded() {
			t.Fatalf("item %d expanded before Ctrl-O", i)
		}
	}
	h.key(ctrl('o'))
	require.Contains(t, h.screen(), "│ 12\n", "Ctrl-O shows the whole output")
	h.key(ctrl('o'))
	require.NotContains(t, h.screen(), "│ 12\n", "and folds it again")
}

// Retries and compaction show as they happen.
func TestRetryAndCompactionVisible(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.CompactionStart{Auto: true, Tokens: 160000}
		ch <- host.CompactionDone{Tokens: 30000}
		ch <- host.Retry{Attempt: 1, Max: 2, Wait: 2 * time.Second, Reason: "anthropic: 529 Overloaded"}
		ch <- host.Retry{Attempt: 2, Max: 2, Wait: 4 * time.Second, Reason: "anthropic: 529 Overloaded"}
		ch <- host.Error{Err: errors.New("anthropic: 529 Overloaded (after 2 retries)")}
		ch <- host.TurnEnd{Err: errors.New("anthropic: 529 Overloaded (after 2 retries)")}
	}
	h := newHarness(t, f)
	h.typ("x")
	h.enter()
	h.idle()
	s := h.screen()
	require.Contains(t, s, "compacted: the next request is ~30k tokens; the system prompt is unchanged")
	require.Contains(t, s, "overloaded, retry 2 of 2 in 4.0 s")
	require.NotContains(t, s, "retry 1 of 2", "the next attempt replaces the line")
	require.Contains(t, s, "✗ anthropic: 529 Overloaded (after 2 retries)")
}

// An extension's confirm is a dialog: y then Enter answers yes, n no,
// Esc dismisses; a letter is typing, and goes to the editor.
func TestConfirmDialog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  tea.KeyPressMsg
		want string
	}{{tea.KeyPressMsg{Code: 'y', Text: "y"}, "yes"}, {tea.KeyPressMsg{Code: 'n', Text: "n"}, "no"}, {tea.KeyPressMsg{Code: tea.KeyEscape}, "dismissed"}} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			got := make(chan string, 1)
			f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
				q, answers := newAsk(asked{ID: 7, By: "guard", Type: extension.AskConfirm,
					Title: "Run this command?", Message: "rm -rf victim", Deadline: fixedNow.Add(time.Minute)})
				ch <- q
				a := <-answers
				switch {
				case a.Dismissed:
					got <- "dismissed"
				case a.Yes:
					got <- "yes"
				default:
					got <- "no"
				}
				ch <- host.TurnEnd{}
			}
			h := newHarness(t, f)
			h.typ("tool:bash")
			h.enter()
			h.wait(func() bool { return len(h.m.asks) > 0 }, "the question shows")
			s := h.screen()
			require.Contains(t, s, "guard asks: Run this command?")
			require.Contains(t, s, "rm -rf victim")
			require.Contains(t, s, "[y] yes   [n] no")
			h.now = h.now.Add(typingPause) // read it
			h.typ("z")                     // typing: to the editor, not an answer
			require.Len(t, h.m.asks, 1)
			require.Equal(t, "z", h.m.ed.value())
			h.now = h.now.Add(typingPause)
			h.key(tea.KeyPressMsg{Code: tea.KeyTab}) // the editor holds "z": Tab takes the question
			h.key(tc.key)
			if tc.want == "yes" {
				require.Contains(t, h.screen(), "yes? Enter runs it")
				h.now = h.now.Add(100 * time.Millisecond)
				h.enter()
			}
			require.Equal(t, tc.want, <-got)
			h.idle()
			require.NotContains(t, h.screen(), "[y] yes")
		})
	}
}

// A select and an input question.
func TestSelectAndInputDialogs(t *testing.T) {
	t.Parallel()
	f := newFake()
	got := make(chan testAnswer, 2)
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		q, answers := newAsk(asked{ID: 1, By: "ext", Type: extension.AskSelect, Title: "Pick", Options: []string{"red", "green", "blue"}})
		ch <- q
		got <- <-answers
		q, answers = newAsk(asked{ID: 2, By: "ext", Type: extension.AskInput, Title: "Name?", Hint: "a name"})
		ch <- q
		got <- <-answers
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f)
	h.typ("go")
	h.enter()
	h.wait(func() bool { return len(h.m.asks) > 0 }, "the select shows")
	require.Contains(t, h.screen(), "green")
	h.now = h.now.Add(typingPause)
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	h.enter()
	require.Equal(t, 1, (<-got).Index)
	h.wait(func() bool { return len(h.m.asks) > 0 && h.m.asks[0].input != nil }, "the input shows")
	h.screen()
	h.now = h.now.Add(typingPause)
	h.key(tea.KeyPressMsg{Code: tea.KeyTab}) // the field takes keys
	h.typ("Ann")
	h.enter()
	require.Equal(t, "Ann", (<-got).Text)
	h.idle()
}

// A select's option too long for the list is shown whole under it while
// the cursor is on it. Before, it was cut with "…" and could not be read.
func TestSelectShowsALongOptionWhole(t *testing.T) {
	t.Parallel()
	f := newFake()
	long := "delete the branch " + strings.Repeat("and everything on it ", 8) + "THE-END"
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		q, answers := newAsk(asked{ID: 1, By: "ext", Type: extension.AskSelect, Title: "Pick", Options: []string{"keep", long}})
		ch <- q
		<-answers
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f)
	h.typ("go")
	h.enter()
	h.wait(func() bool { return len(h.m.asks) > 0 }, "the select shows")
	require.NotContains(t, h.screen(), "THE-END", "keep is under the cursor")
	h.now = h.now.Add(typingPause)
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	require.Contains(t, h.screen(), "THE-END")
	h.enter()
	h.idle()
}

// The palette: "/" lists panto's commands and the extensions', each with
// its description; typing filters; Enter runs.
func TestPalette(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.cmds = []extension.Command{{Extension: "sysprompt", Name: "system-append", Description: "append a block", Usage: "TEXT"}}
	h := newHarness(t, f)
	h.typ("/")
	require.True(t, h.m.comp.open())
	s := h.screen()
	for _, want := range []string{"/help", "/model", "/prompt", "/transcript", "/compact", "/session", "more"} {
		require.Contains(t, s, want)
	}
	h.typ("sys")
	require.Contains(t, h.screen(), "/system-append TEXT")
	require.Contains(t, h.screen(), "append a block (sysprompt)")
	require.NotContains(t, h.screen(), "/model")
	h.enter()
	require.Equal(t, "/system-append ", h.m.ed.value(), "a command that needs arguments is completed, not run")
	h.typ("Be brief.")
	h.enter()
	h.idle()
	require.Equal(t, []string{"system-append Be brief."}, f.commands)
	require.Contains(t, h.screen(), "ran system-append")

	h.typ("/sess")
	h.enter()
	require.Contains(t, h.screen(), "session s1")
}

// /model is a picker; choosing records the switch.
func TestModelPicker(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f, func(o *Options) { o.Models = []string{"echo-big", "echo-small"} })
	h.typ("/model")
	h.enter()
	s := h.screen()
	require.Contains(t, s, "* echo")
	require.Contains(t, s, "echo-big")
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	h.enter()
	h.settle()
	require.Equal(t, []string{"echo-small"}, f.models)
	require.Contains(t, h.screen(), "echo/echo-small")
}

// /prompt shows each block with its source; q closes it.
func TestPromptViewer(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.system = []conversation.SystemText{
		{Text: "You are terse.", Source: "project " + "/p/.panto/SYSTEM.md"},
		{Text: "Use the tools.", Key: "tools:guidance", Source: "extension tools"},
	}
	h := newHarness(t, f)
	h.typ("/prompt")
	h.enter()
	s := h.screen()
	require.Contains(t, s, "── block 1 · project /p/.panto/SYSTEM.md")
	require.Contains(t, s, "── block 2 · extension tools · section tools:guidance")
	require.Contains(t, s, "Use the tools.")
	h.typ("q")
	require.NotContains(t, h.screen(), "block 1")
}

// @ completes a path from the project into the message.
func TestAtCompletesPaths(t *testing.T) {
	t.Parallel()
	f := newFake()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "panto"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "panto", "main.go"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), nil, 0o644))
	h := newHarness(t, f, func(o *Options) { o.CWD = dir })
	h.typ("look at @mai")
	h.wait(func() bool { return h.m.files != nil }, "the files are listed")
	h.settle()
	require.Contains(t, h.screen(), "cmd/panto/main.go")
	h.key(tea.KeyPressMsg{Code: tea.KeyTab})
	require.Equal(t, "look at @cmd/panto/main.go ", h.m.ed.value())
}

// At 60 columns nothing is wider than the screen, and a resize redraws.
func TestNarrowAndResize(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		long := strings.Repeat("word ", 60) + "\n\n| a | b |\n|---|---|\n| " + strings.Repeat("x", 80) + " | y |\n"
		ch <- host.TextDelta{Text: long}
		ch <- host.ToolStart{ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"` + strings.Repeat("echo hi; ", 20) + `"}`)}
		ch <- host.ToolEnd{ID: "1", Name: "bash", Result: strings.Repeat("y", 150) + "\n[exit code 0]"}
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f, altScreen)
	for _, w := range []int{60, 100, 60, 40} {
		h.send(tea.WindowSizeMsg{Width: w, Height: 20})
		if w == 60 && len(f.sentTexts()) == 0 {
			h.typ("go")
			h.enter()
			h.idle()
		}
		v := h.m.View()
		lines := strings.Split(v.Content, "\n")
		require.Len(t, lines, 20, "width %d", w)
		for _, l := range lines {
			require.LessOrEqual(t, ansi.StringWidth(l), w, "width %d: %q", w, ansi.Strip(l))
		}
	}
}

// The status line: where, the branch, the model, extensions' segments.
func TestStatusLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/feature/x\n"), 0o644))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	f := newFake()
	h := newHarness(t, f, func(o *Options) { o.CWD = sub })
	f.events <- host.Status{By: "guard", Text: "2 asked"}
	h.wait(func() bool { return strings.Contains(h.screen(), "guard: 2 asked") }, "the segment shows")
	require.Contains(t, h.screen(), "(feature/x)")
	require.Contains(t, h.screen(), "echo/echo")
	f.events <- host.Status{By: "guard", Text: ""}
	h.wait(func() bool { return !strings.Contains(h.screen(), "guard:") }, "the segment is cleared")
}

// Notices, and an extension's Notify, show in the transcript.
func TestNotices(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f, func(o *Options) { o.Notices = []string{"skipping untrusted extension .panto/extensions/x"} })
	f.events <- host.Notice{Level: host.NoticeWarning, By: "guard", Text: "blocked: rm -rf victim"}
	h.wait(func() bool { return strings.Contains(h.screen(), "guard: blocked") }, "the notice shows")
	require.Contains(t, h.screen(), "⚠ skipping untrusted extension")
}

// A session that cannot open ends the UI with its error.
func TestOpenFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(o *Options) {
		appOf(o).open = func(context.Context) (Session, error) { return nil, errors.New("session log is locked") }
	})
	h.wait(func() bool { return h.quit }, "the UI quits")
	require.EqualError(t, h.m.Shutdown(context.Background()), "session log is locked")
}

// Quitting during a turn interrupts it and waits for its end; the
// session is closed.
func TestShutdownDuringTurn(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = slowTurn
	h := newHarness(t, f)
	h.typ("go")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "partial") }, "the reply streams")
	h.key(ctrl('u'))
	h.key(ctrl('d'))
	require.False(t, h.quit, "mid-reply, the first Ctrl-D stops the turn (issue 20 item 13)")
	require.ErrorIs(t, context.Cause(f.turnCtx[0]), errInterrupted)
	require.Contains(t, h.screen(), "Ctrl-D again to quit")
	h.key(ctrl('d'))
	require.True(t, h.quit)
	require.NoError(t, h.m.Shutdown(context.Background()))
	require.True(t, f.closed)
	require.ErrorIs(t, context.Cause(f.turnCtx[0]), errInterrupted)
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// The theme follows the terminal's answer, unless config fixed it.
func TestThemeFollowsBackground(t *testing.T) {
	t.Parallel()
	white := color.RGBA{0xff, 0xff, 0xff, 0xff}
	h := newHarness(t, newFake())
	require.True(t, h.m.th.Dark, "dark until the terminal says")
	h.send(tea.BackgroundColorMsg{Color: white})
	require.False(t, h.m.th.Dark)
	fixed := newHarness(t, newFake(), func(o *Options) { o.Theme = "dark" })
	fixed.send(tea.BackgroundColorMsg{Color: white})
	require.True(t, fixed.m.th.Dark)
	light := newHarness(t, newFake(), func(o *Options) { o.Theme = "light" })
	require.False(t, light.m.th.Dark)
}

// The mouse wheel scrolls the transcript.
func TestWheelScrolls(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Resumed = true
	for i := range 100 {
		f.msgs = append(f.msgs, conversation.UserText("q "+itoa(i)))
	}
	h := newHarness(t, f)
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	require.False(t, h.m.list.Following())
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	require.True(t, h.m.list.Following())
	require.Equal(t, tea.MouseModeCellMotion, h.m.View().MouseMode)
	nm := newHarness(t, f, func(o *Options) { o.NoMouse = true })
	require.Equal(t, tea.MouseModeNone, nm.m.View().MouseMode)
}

// A symbolic link at the history file's path is refused with a notice,
// never written through; the session goes on.
func TestHistoryLinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "bashrc")
	require.NoError(t, os.WriteFile(target, []byte("# mine\n"), 0o644))
	file := filepath.Join(dir, "history.jsonl")
	require.NoError(t, os.Symlink(target, file))
	f := newFake()
	h := newHarness(t, f, func(o *Options) { o.HistoryFile = file })
	h.typ("rm -rf ~")
	h.enter()
	h.idle()
	s := strings.Join(strings.Fields(h.screen()), " ")
	require.Contains(t, s, "not a regular file (a symbolic link is not followed)")
	require.Equal(t, 1, strings.Count(s, "not kept for ↑"), "said once")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "# mine\n", string(data), "nothing written through the link")
	require.Equal(t, []string{"rm -rf ~"}, f.sentTexts())
}

// A UI that fell too far behind the session (its subscription ended with
// Overflow) reads it afresh: it redraws the conversation from the
// session's messages, says so, and goes on reading a new subscription.
func TestOverflowRedraws(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.info.Resumed = true
	f.msgs = []conversation.Message{conversation.UserText("from the log")}
	h := newHarness(t, f)
	f.events <- host.Overflow{Pending: host.MaxPending}
	h.wait(func() bool { return strings.Contains(h.screen(), "fell behind") }, "the warning")
	require.Contains(t, h.screen(), "from the log")
	f.events <- host.Notice{Level: host.NoticeInfo, By: "ext", Text: "still read"}
	h.wait(func() bool { return strings.Contains(h.screen(), "still read") }, "an event after")
}

// A UI that fell behind during a turn asks the session whether the turn
// still runs: one that does goes on (its TurnEnd is still to come on the
// new subscription); one that ended while its TurnEnd was among the
// events missed is over, and the next message can be sent.
func TestOverflowDuringATurn(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TurnStart{Text: text}
	}
	h := newHarness(t, f)
	f.setBusy(true)
	h.typ("hello")
	h.key(tea.KeyPressMsg{Code: tea.KeyEnter})
	h.wait(func() bool { return h.m.busy == turning }, "the turn runs")
	f.events <- host.Overflow{Pending: host.MaxPending}
	h.wait(func() bool { return strings.Contains(h.screen(), "fell behind") }, "the warning")
	require.Equal(t, turning, h.m.busy, "a turn that still runs goes on")
	f.setBusy(false)
	f.events <- host.Overflow{Pending: host.MaxPending}
	h.wait(func() bool { return h.m.busy == idle }, "the turn whose TurnEnd was missed is over")
	f.turn = echoTurn
	h.typ("again")
	h.key(tea.KeyPressMsg{Code: tea.KeyEnter})
	h.wait(func() bool { return strings.Contains(h.screen(), "you said") }, "the next turn runs")
}

// Issue 20 item 1: Esc (or Ctrl-C) on a turn with a message queued
// behind it sent that message at once, as a new request that could run
// tools. The queued messages go back into the editor instead, ahead of
// what it holds, and nothing more is sent.
func TestInterruptTakesQueuedMessagesBack(t *testing.T) {
	t.Parallel()
	for _, k := range []tea.KeyPressMsg{{Code: tea.KeyEscape}, ctrl('c')} {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			f := newFake()
			f.turn = slowTurn
			h := newHarness(t, f)
			h.typ("go")
			h.enter()
			h.wait(func() bool { return strings.Contains(h.screen(), "partial") }, "the reply streams")
			h.typ("queued hello")
			h.enter()
			h.typ("second")
			h.enter()
			require.Contains(t, h.screen(), "2 queued")
			require.Contains(t, h.screen(), "⏵ queued: queued hello", "shown above the editor")
			require.NotContains(t, strings.Join(h.scrollback, "\n"), "queued hello", "not in the conversation: not sent")
			h.key(k)
			h.idle()
			require.Equal(t, []string{"go"}, f.sentTexts(), "nothing queued was sent")
			require.Equal(t, "queued hello\nsecond", h.m.ed.message())
			require.NotContains(t, h.screen(), "⏵ queued")
			require.Contains(t, h.screen(), "2 queued message(s) put back into the editor")
			f.turn = echoTurn
			h.enter()
			h.idle()
			require.Equal(t, []string{"go", "queued hello\nsecond"}, f.sentTexts(), "Enter sends them, as one message")
		})
	}
}
