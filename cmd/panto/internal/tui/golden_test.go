package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// Golden frames: the real program (teatest drives it), its output fed
// to a terminal emulator, the screen's text compared with
// testdata/<test name>.golden (charmbracelet/x/exp/golden, which
// teatest uses: its -update flag is the package's). Fixed size, no colour (ASCII profile), a fixed
// clock and paths, so the frames are stable; go test -update rewrites
// them.

// screen is a terminal emulator fed from the program's output.
type screen struct {
	emu *vt.Emulator
	out io.Reader
}

func newScreen(w, h int, out io.Reader) *screen {
	e := vt.NewEmulator(w, h)
	go io.Copy(io.Discard, e) // the emulator's answers to queries
	return &screen{emu: e, out: out}
}

// text is the screen, trailing blanks trimmed, the spinner's frames
// made one (they turn with the real clock).
func (s *screen) text() string {
	var lines []string
	for _, l := range strings.Split(s.emu.String(), "\n") {
		lines = append(lines, strings.TrimRight(spinnerFrames.Replace(l), " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

var spinnerFrames = strings.NewReplacer("⠋", "⠿", "⠙", "⠿", "⠹", "⠿", "⠸", "⠿", "⠼", "⠿", "⠴", "⠿", "⠦", "⠿", "⠧", "⠿", "⠇", "⠿", "⠏", "⠿")

// waitFor pumps output into the emulator until the screen holds all of
// want and stays the same for a moment.
func (s *screen) waitFor(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	last, since := "", time.Now()
	for time.Now().Before(deadline) {
		b, _ := io.ReadAll(s.out)
		// teatest's output is no terminal: bubbletea writes bare "\n"
		// and counts on the terminal's ONLCR.
		s.emu.Write(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")))
		txt := s.text()
		all := true
		for _, w := range want {
			all = all && strings.Contains(txt, w)
		}
		if txt != last {
			last, since = txt, time.Now()
		}
		if all && time.Since(since) > 150*time.Millisecond {
			return txt
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the screen never showed %q:\n%s", want, s.text())
	return ""
}

// goldenTurn is a turn that shows most of what a transcript holds.
func goldenTurn(ctx context.Context, text string, ch chan<- host.Event) {
	ch <- host.TurnStart{Text: text}
	ch <- host.ThinkingDelta{Text: "The user wants a fix.\nCheck the test first.\n"}
	for _, piece := range []string{"I'll fix the **off-by-one** in `count`:\n\n", "- read the test\n- change the bound\n\n"} {
		ch <- host.TextDelta{Text: piece}
	}
	// At $3 and $15 a million tokens (the host prices them).
	ch <- host.Usage{InputTokens: 12400, OutputTokens: 230, Model: "claude-test", CostUSD: (12400*3 + 230*15) / 1e6, CostKnown: true}
	ch <- host.Reply{Message: conversation.AssistantText("x"), Streamed: true, StopReason: host.StopToolUse}
	ch <- host.ToolStart{ID: "1", Name: "edit", Input: json.RawMessage(`{"path":"count.go","edits":[{"old_text":"for i := 0; i <= n; i++ {","new_text":"for i := 0; i < n; i++ {"}]}`)}
	ch <- host.ToolStart{ID: "2", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}
	ch <- host.ToolEnd{ID: "1", Name: "edit", Result: "Edited count.go: applied 1 edit (at line 12).", Duration: 4 * time.Millisecond}
	ch <- host.ToolEnd{ID: "2", Name: "bash", Result: "ok  \texample.com/count\t0.004s\n[exit code 0]", Duration: 1300 * time.Millisecond}
	ch <- host.SystemChanged{By: "tools", Mode: conversation.ModeAppend, Key: "tools:guidance", Text: "…", Source: "extension tools"}
	ch <- host.TextDelta{Text: "## Done\n\n> The test passes now.\n\n```go\nfor i := 0; i < n; i++ {\n```\n"}
	ch <- host.Usage{InputTokens: 12900, OutputTokens: 80, Model: "claude-test", CostUSD: (12900*3 + 80*15) / 1e6, CostKnown: true}
	ch <- host.Reply{Message: conversation.AssistantText("x"), Streamed: true}
	ch <- host.TurnEnd{}
}

func goldenModel(t *testing.T, f *fakeSession, o ...func(*Options)) *Model {
	opts := Options{
		CWD: "/home/ann/proj", Home: "/home/ann", NoColor: true, Theme: "dark",
		Now: func() time.Time { return fixedNow },
		App: &fakeApp{open: func(context.Context) (Session, error) { return f, nil }},
		// The frames of a real program in a terminal emulator: on the
		// alternate screen, where a frame is the whole screen (what the
		// normal screen leaves in the scrollback depends on when each
		// print lands; TestGoldenNormalScreen is its golden).
		AltScreen: true,
	}
	for _, fn := range o {
		fn(&opts)
	}
	return New(context.Background(), opts)
}

func goldenFake() *fakeSession {
	f := newFake()
	f.info.Provider, f.info.Model = "anthropic", "claude-test"
	f.unread = []host.Event{host.SystemChanged{By: "panto", Mode: conversation.ModeAppend, Text: "seed", Source: "project /home/ann/proj/.panto/SYSTEM.md"}}
	f.turn = goldenTurn
	return f
}

func runGolden(t *testing.T, w, h int, f *fakeSession, drive func(tm *teatest.TestModel, s *screen) string) {
	t.Helper()
	tm := teatest.NewTestModel(t, goldenModel(t, f), teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	s := newScreen(w, h, tm.Output())
	got := drive(tm, s)
	golden.RequireEqual(t, got) // testdata/<test name>.golden
	// Twice: mid-turn, the first stops the turn.
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func TestGoldenTurn(t *testing.T) {
	t.Parallel()
	for _, size := range []struct {
		name string
		w, h int
	}{{"turn-100x30", 100, 30}, {"turn-60x24", 60, 24}} {
		t.Run(size.name, func(t *testing.T) {
			t.Parallel()
			runGolden(t, size.w, size.h, goldenFake(), func(tm *teatest.TestModel, s *screen) string {
				s.waitFor(t, "claude-test")
				tm.Type("fix the off-by-one")
				tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
				return s.waitFor(t, "The test passes now.", "↑25.3k")
			})
		})
	}
}

func TestGoldenConfirm(t *testing.T) {
	t.Parallel()
	f := goldenFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TextDelta{Text: "echo: calling bash\n"}
		ch <- host.Reply{Message: conversation.AssistantText("x"), Streamed: true}
		ch <- host.ToolStart{ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"rm -rf build"}`)}
		q, answers := newAsk(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run this command?",
			Message: "rm -rf build\n\n(it matches guard's pattern rm -rf)", Deadline: fixedNow.Add(5 * time.Minute)})
		ch <- q
		<-answers
		ch <- host.TurnEnd{}
	}
	runGolden(t, 80, 24, f, func(tm *teatest.TestModel, s *screen) string {
		s.waitFor(t, "claude-test")
		tm.Type(`tool:bash {"command":"rm -rf build"}`)
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		got := s.waitFor(t, "[y] yes")
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
		return got
	})
}

func TestGoldenPalette(t *testing.T) {
	t.Parallel()
	f := goldenFake()
	f.cmds = []extension.Command{{Extension: "sysprompt", Name: "system-append", Usage: "TEXT", Description: "append a block to the system prompt"}}
	runGolden(t, 80, 24, f, func(tm *teatest.TestModel, s *screen) string {
		s.waitFor(t, "claude-test")
		// "/s": panto's commands with an s, and the extension's (the
		// whole list is taller than the palette).
		tm.Type("/s")
		got := s.waitFor(t, "/system-append TEXT")
		tm.Send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		return got
	})
}

// A resumed session's frame: the end of the conversation.
func TestGoldenResume(t *testing.T) {
	t.Parallel()
	f := goldenFake()
	f.info.Resumed = true
	f.unread = nil
	f.msgs = []conversation.Message{
		conversation.SystemMessage("seed", conversation.ModeAppend).WithSource("project /home/ann/proj/.panto/SYSTEM.md"),
		conversation.UserText("what does this project do?"),
		conversation.AssistantText("It is an **agent host**: the system prompt is conversation state.\n\n1. recorded\n2. reconstructable"),
		conversation.SystemMessage("You are a pirate.", conversation.ModeReplace).WithSource("extension persona"),
		conversation.UserText("and now?"),
		conversation.AssistantText("Arr."),
	}
	runGolden(t, 80, 24, f, func(tm *teatest.TestModel, s *screen) string {
		return s.waitFor(t, "resumed: 6 messages")
	})
}

// The normal screen after a turn: what went into the scrollback, in the
// order printed, then the frame under it.
func TestGoldenNormalScreen(t *testing.T) {
	t.Parallel()
	f := goldenFake()
	h := newHarness(t, f, func(o *Options) {
		o.CWD, o.Home, o.Theme = "/home/ann/proj", "/home/ann", "dark"
	})
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.typ("fix the off-by-one")
	h.enter()
	h.idle()
	golden.RequireEqual(t, h.screen())
}
