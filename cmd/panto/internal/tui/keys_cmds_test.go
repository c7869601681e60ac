package tui

import (
	"context"
	"errors"

	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
	"os/exec"

	tea "charm.land/bubbletea/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// fakeEnv is an environment for Options.Getenv.
func fakeEnv(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// writeScript writes an executable shell script named name into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

// /copy puts the last reply on the clipboard by OSC 52 and by the
// display's clipboard tool; /copy N the Nth-last block.
func TestCopy(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	got := filepath.Join(bin, "got")
	writeScript(t, bin, "wl-copy", "cat > "+got)
	f := newFake()
	f.msgs = []conversation.Message{
		conversation.UserText("list it"),
		{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse("t1", "bash", []byte(`{"command":"ls"}`))}},
		{Role: conversation.RoleUser, Content: []conversation.Block{conversation.ToolResult("t1", "a.go\nb.go", false)}},
		conversation.AssistantText("Two files: **a.go** and b.go."),
	}
	h := newHarness(t, f, func(o *Options) {
		o.Getenv = fakeEnv("PATH", bin, "WAYLAND_DISPLAY", "wayland-0")
	})
	h.typ("/copy")
	h.enter()
	h.settle()
	require.Equal(t, "Two files: **a.go** and b.go.", h.clipboard, "OSC 52 carries the reply's Markdown")
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, "Two files: **a.go** and b.go.", string(data), "wl-copy was given it too")
	require.Contains(t, h.screen(), "copied the last reply, 29 B (OSC 52 and wl-copy)")

	h.typ("/copy 2")
	h.enter()
	h.settle()
	require.Equal(t, "a.go\nb.go", h.clipboard, "2: the tool's output before the reply")
	require.Contains(t, h.screen(), "copied the tool output 2 from the end, 9 B")

	h.typ("/copy 9")
	h.enter()
	require.Contains(t, h.screen(), "/copy 9: there are 3 blocks to copy")
}

// Inside tmux, with no clipboard tool, the notice says OSC 52 may not
// get through.
func TestCopyInTmuxSaysSo(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.msgs = []conversation.Message{conversation.UserText("hi"), conversation.AssistantText("hello")}
	h := newHarness(t, f, func(o *Options) {
		o.Getenv = fakeEnv("PATH", t.TempDir(), "TMUX", "/tmp/tmux-1/default,1,0")
	})
	h.typ("/copy")
	h.enter()
	h.settle()
	require.Equal(t, "hello", h.clipboard)
	require.Contains(t, h.screen(), "copied the last reply, 5 B (OSC 52): inside tmux it reaches the clipboard only")
}

// runDirect runs an ExecProcess command in the command's goroutine, as
// the program would with the terminal handed over.
func runDirect(c *exec.Cmd, fn tea.ExecCallback) tea.Cmd {
	return func() tea.Msg { return fn(c.Run()) }
}

// Ctrl-G opens the message in $VISUAL and puts the saved text back.
func TestCtrlGEditsInVisual(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	seen := filepath.Join(bin, "seen")
	// The editor sees the message, and saves another.
	ed := writeScript(t, bin, "ed", `for f; do :; done; cp "$f" `+seen+`; printf 'edited\nover two lines\n' > "$f"`)
	h := newHarness(t, newFake(), func(o *Options) {
		o.Getenv = fakeEnv("VISUAL", ed+" --wait", "EDITOR", "nano")
	})
	h.m.execProcess = runDirect
	h.typ("draft one")
	h.key(ctrl('g'))
	h.settle()
	data, err := os.ReadFile(seen)
	require.NoError(t, err, h.screen())
	require.Equal(t, "draft one", string(data))
	require.Equal(t, "edited\nover two lines", h.m.ed.value())
	h.enter()
	h.idle()
	require.Equal(t, []string{"edited\nover two lines"}, h.sess.sentTexts())
}

// With neither $VISUAL nor $EDITOR, Ctrl-G says what to set; a failing
// editor leaves the message as it was.
func TestCtrlGWithoutEditor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake(), func(o *Options) { o.Getenv = fakeEnv() })
	h.m.execProcess = runDirect
	h.typ("keep me")
	h.key(ctrl('g'))
	require.Contains(t, h.screen(), "set $VISUAL or $EDITOR")
	require.Equal(t, "keep me", h.m.ed.value())

	h2 := newHarness(t, newFake(), func(o *Options) { o.Getenv = fakeEnv("EDITOR", "false") })
	h2.m.execProcess = runDirect
	h2.typ("keep me")
	h2.key(ctrl('g'))
	h2.settle()
	require.Contains(t, h2.screen(), "the message is as it was")
	require.Equal(t, "keep me", h2.m.ed.value())
}

// !!cmd runs a shell command in the session's directory and shows its
// output; it reaches the model only with the next message, and !cmd
// never does (issue 20: "!cmd ... shows its output, !!cmd also sends it").
func TestShellCommand(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	h.typ("!!pwd; echo to-stderr >&2; exit 3")
	h.enter()
	h.idle()
	s := h.screen()
	require.Contains(t, s, "$ pwd; echo to-stderr >&2; exit 3")
	require.Contains(t, s, filepath.Base(h.m.o.CWD), "it ran in the session's directory")
	require.Contains(t, s, "to-stderr")
	require.Contains(t, s, "(exit status 3)")
	require.Empty(t, f.sentTexts(), "nothing went to the model by itself")

	h.typ("!echo private-bit")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), "private-bit")
	require.Contains(t, h.screen(), "(not sent to the model)")

	h.typ("what failed?")
	h.enter()
	h.idle()
	sent := f.sentTexts()
	require.Len(t, sent, 1)
	require.Contains(t, sent[0], "$ pwd; echo to-stderr >&2; exit 3")
	require.Contains(t, sent[0], "to-stderr")
	require.Contains(t, sent[0], "(exit status 3)")
	require.NotContains(t, sent[0], "private-bit", "! is never sent")
	require.True(t, strings.HasSuffix(sent[0], "\nwhat failed?"))
	require.Contains(t, h.screen(), "with the output of the shell command above")

	h.typ("and now?")
	h.enter()
	h.idle()
	require.Equal(t, "and now?", f.sentTexts()[1], "the output goes once")
}

// Esc stops a shell command.
func TestShellCommandEsc(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	h.typ("!echo started; sleep 30")
	h.enter()
	h.wait(func() bool { return h.m.busy != idle }, "the command runs")
	h.key(tea.KeyPressMsg{Code: tea.KeyEscape})
	h.idle()
	require.Contains(t, h.screen(), "(stopped (Esc))")
}

// /new closes the session and opens a new one in its place; the
// conversation left is gone from the screen.
func TestNewSession(t *testing.T) {
	t.Parallel()
	a, b := newFake(), newFake()
	b.info = host.Info{ID: "s2new", Path: "/tmp/s2.jsonl", Provider: "echo", Model: "echo"}
	// The alternate screen: the frame holds the whole transcript (on
	// the normal one, the one left stays in the terminal's scrollback).
	h := newHarness(t, a, altScreen, func(o *Options) {
		appOf(o).newSess = func(context.Context) (Session, error) { return b, nil }
	})
	h.typ("hi")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), "you said")
	h.typ("/new")
	h.enter()
	h.wait(func() bool { return h.m.sess == Session(b) && h.m.busy == idle }, "the switch")
	h.settle()
	require.True(t, a.closed, "the session left is closed")
	s := h.screen()
	require.Contains(t, s, "a new session s2new (the session left is s1: panto --resume s1)")
	require.NotContains(t, s, "you said")
	h.typ("again")
	h.enter()
	h.idle()
	require.Equal(t, []string{"again"}, b.sentTexts())
}

// /export writes the HTML export and says where.
func TestExportCommand(t *testing.T) {
	t.Parallel()
	var asked []string
	h := newHarness(t, newFake(), func(o *Options) {
		appOf(o).export = func(_ context.Context, _ Session, p string) (string, error) {
			asked = append(asked, p)
			if p == "" {
				return "/work/panto-s1.html", nil
			}
			return "", errors.New("export: -o " + p + ": directory /nope does not exist")
		}
	})
	h.typ("/export")
	h.enter()
	h.settle()
	require.Contains(t, h.screen(), "exported the session as HTML to /work/panto-s1.html")
	h.typ("/export /nope/x.html")
	h.enter()
	h.settle()
	require.Contains(t, h.screen(), "directory /nope does not exist")
	require.Equal(t, []string{"", "/nope/x.html"}, asked)
}

// panto "TEXT": the first message is sent once the session opens.
func TestFirstMessage(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f, func(o *Options) { o.First = "what is this project?" })
	h.idle()
	require.Equal(t, []string{"what is this project?"}, f.sentTexts())
	require.Contains(t, h.screen(), "you said what is this project?")
}

// thinkTurn thinks three lines, then answers.
func thinkTurn(ctx context.Context, text string, ch chan<- host.Event) {
	ch <- host.TurnStart{Text: text}
	ch <- host.ThinkingDelta{Text: "first thought\nsecond thought\nthird thought"}
	ch <- host.TextDelta{Text: "the answer to " + text}
	ch <- host.Reply{Message: conversation.AssistantText("the answer to " + text), Streamed: true}
	ch <- host.TurnEnd{}
}

// Ctrl-T shows every reply's thinking whole, the next ones' too, and
// folds it again; Ctrl-T no longer swaps characters in the editor. On
// the alternate screen the replies shown are redrawn.
func TestCtrlTTogglesThinking(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = thinkTurn
	h := newHarness(t, f, altScreen)
	h.typ("one")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), "∴ thinking, 3 lines")
	require.NotContains(t, h.screen(), "second thought")
	h.typ("ab")
	h.key(ctrl('t'))
	require.Equal(t, "ab", h.m.ed.value(), "Ctrl-T is not the editor's")
	s := h.screen()
	require.Contains(t, s, "second thought")
	require.Contains(t, s, "thinking shown · Ctrl-T folds it")
	h.key(ctrl('u'))
	h.typ("two")
	h.enter()
	h.idle()
	require.Equal(t, 2, strings.Count(h.screen(), "second thought"), "a reply after it shows its thinking too")
	h.key(ctrl('t'))
	require.NotContains(t, h.screen(), "second thought")
	require.Equal(t, 2, strings.Count(h.screen(), "∴ thinking, 3 lines"))
}

// An unknown /command gets the nearest one's name.
func TestUnknownCommandSuggests(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.cmds = []extension.Command{{Extension: "sysprompt", Name: "system-append"}}
	h := newHarness(t, f)
	h.typ("/hlep")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), "unknown command /hlep: did you mean /help?")
	h.typ("/system-apend x")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), "unknown command /system-apend: did you mean /system-append?")
	h.typ("/zzzz")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), "unknown command /zzzz (see /help)")
}

// Esc in the palette takes its "/" away: the next text is a message.
func TestEscInPaletteClearsTheSlash(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f)
	h.typ("/")
	require.True(t, h.m.comp.open())
	h.key(tea.KeyPressMsg{Code: tea.KeyEscape})
	require.False(t, h.m.comp.open())
	require.Equal(t, "", h.m.ed.value())
	h.typ("hello")
	h.enter()
	h.idle()
	require.Equal(t, []string{"hello"}, f.sentTexts())
}

// /name names the session; /resume shows the names and filters on them.
func TestNameAndResumeShowsIt(t *testing.T) {
	t.Parallel()
	f := newFake()
	h := newHarness(t, f, func(o *Options) {
		appOf(o).sessions = func() ([]SessionItem, error) {
			return []SessionItem{
				{Path: "/tmp/s1.jsonl", ID: "s1", Messages: 2, First: "hi", Name: f.name},
				{Path: "/tmp/s2.jsonl", ID: "s2", Messages: 4, First: "other", Name: "the parser port"},
			}, nil
		}
	})
	h.typ("/name")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), "the session has no name")
	h.typ("/name fix the count bug")
	h.enter()
	h.idle()
	require.Contains(t, h.screen(), `named the session "fix the count bug"`)
	require.Equal(t, "fix the count bug", f.name)
	h.typ("/resume")
	h.enter()
	h.settle()
	s := h.screen()
	require.Contains(t, s, "fix the count bug")
	require.Contains(t, s, "the parser port")
	h.typ("parser")
	s = h.screen()
	require.Contains(t, s, "the parser port")
	require.NotContains(t, s, "s1  ", "filtered on the name")
}

// On the normal screen, a reply printed into the scrollback after Ctrl-T
// shows its thinking whole.
func TestCtrlTThinkingIntoTheScrollback(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.turn = thinkTurn
	h := newHarness(t, f)
	h.typ("one")
	h.enter()
	h.idle()
	require.NotContains(t, strings.Join(h.scrollback, "\n"), "second thought")
	h.key(ctrl('t'))
	h.typ("two")
	h.enter()
	h.idle()
	require.Contains(t, strings.Join(h.scrollback, "\n"), "second thought")
}

// [keys] rebinds an action: its key does it, its default key does
// nothing; "" unbinds; a name that is no action is said, with the
// nearest.
func TestKeysRebind(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	ed := writeScript(t, bin, "ed", `printf 'from the editor' > "$1"`)
	f := newFake()
	f.turn = thinkTurn
	h := newHarness(t, f, altScreen, func(o *Options) {
		o.Getenv = fakeEnv("EDITOR", ed)
		o.Keys = map[string]string{"external_editor": "ctrl+e", "toggle_thinking": "", "toggle_thinkin": "f2"}
	})
	h.m.execProcess = runDirect
	require.Contains(t, h.screen(), `config [keys]: no action "toggle_thinkin" (did you mean toggle_thinking?)`)
	h.typ("draft")
	h.key(ctrl('g'))
	h.settle()
	require.Equal(t, "draft", h.m.ed.value(), "Ctrl-G is unbound")
	h.key(ctrl('e'))
	h.settle()
	require.Equal(t, "from the editor", h.m.ed.value(), "Ctrl-E opens the editor")
	h.enter()
	h.idle()
	h.key(ctrl('t'))
	require.NotContains(t, h.screen(), "second thought", "Ctrl-T is unbound")
}

func TestActionsTable(t *testing.T) {
	t.Parallel()
	tbl := ActionsTable()
	require.Contains(t, tbl, "| `external_editor` | `ctrl+g` |")
	require.Contains(t, tbl, "| `expand_all` | `ctrl+shift+o` |")
	require.Contains(t, tbl, "| `permission_mode` | `shift+tab` |")
}

// writeLog writes a session log at path holding msgs.
func writeLog(t *testing.T, path, id string, msgs ...conversation.Message) {
	t.Helper()
	w, err := sessionlog.Create(path, sessionlog.Header{ID: id, Cwd: "/p"})
	require.NoError(t, err)
	for _, m := range msgs {
		_, err := w.Append(sessionlog.MessageEntry(m))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
}

// /resume filters on every message's text, renames and deletes (once y
// confirms), and switches to every directory's sessions with Ctrl-A.
func TestResumePickerSearchRenameDelete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeLog(t, p1, "aaaa1111", conversation.UserText("first of a"))
	writeLog(t, p2, "bbbb2222", conversation.UserText("hello"), conversation.AssistantText("the LEXER bug is here"))
	f := newFake()
	f.info.Path = p1
	h := newHarness(t, f, func(o *Options) {
		list := func() ([]SessionItem, error) {
			var out []SessionItem
			for _, p := range []string{p1, p2} {
				if _, err := os.Stat(p); err != nil {
					continue
				}
				sum, err := sessionlog.CachedSummary(p)
				require.NoError(t, err)
				out = append(out, SessionItem{Path: p, ID: sum.Header.ID, First: sum.FirstUserText, Name: sum.Name, Messages: sum.Messages, Cwd: o.CWD})
			}
			return out, nil
		}
		appOf(o).sessions = list
		appOf(o).allSessions = func() ([]SessionItem, error) {
			l, _ := list()
			return append(l, SessionItem{Path: "/elsewhere/c.jsonl", ID: "cccc3333", First: "over there", Cwd: "/elsewhere"}), nil
		}
	})
	h.typ("/resume")
	h.enter()
	h.settle()
	require.Contains(t, h.screen(), "first of a")
	h.typ("lexer")
	h.settle()
	s := h.screen()
	require.Contains(t, s, "bbbb2222", "found by its reply's text")
	require.NotContains(t, s, "aaaa1111")

	h.key(ctrl('r'))
	h.typ("lexer fix")
	require.Contains(t, h.screen(), "name: lexer fix")
	h.enter()
	h.settle()
	require.Contains(t, h.screen(), "lexer fix  2 msgs", "the list shows the new name")
	sum, err := sessionlog.CachedSummary(p2)
	require.NoError(t, err)
	require.Equal(t, "lexer fix", sum.Name, "recorded in its log")

	h.key(ctrl('d'))
	require.Contains(t, h.screen(), "delete session bbbb2222 and its log? y deletes")
	h.key(tea.KeyPressMsg{Code: 'n', Text: "n"})
	require.FileExists(t, p2, "any other key keeps it")
	h.key(ctrl('d'))
	h.key(tea.KeyPressMsg{Code: 'y', Text: "y"})
	h.settle()
	require.NoFileExists(t, p2)
	require.NotContains(t, h.screen(), "bbbb2222", "the list is read again")

	h.key(ctrl('u')) // the filter cleared: the session in use
	h.key(ctrl('d'))
	require.Contains(t, h.screen(), "the session in use is not deleted")
	require.FileExists(t, p1)

	h.key(ctrl('a'))
	h.settle()
	require.Contains(t, h.screen(), "Sessions of every directory")
	h.typ("over there")
	h.enter()
	h.settle()
	s = h.screen()
	require.Contains(t, s, "that session is of /elsewhere: cd /elsewhere && panto --resume cccc3333")
	require.Same(t, Session(f), h.m.sess, "not switched")
	require.Contains(t, s, `named the session "lexer fix"`)
	require.Contains(t, s, "deleted the session log")
	require.Contains(t, s, filepath.Base(p2))
}
