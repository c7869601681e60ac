package tui

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// requireSafe fails when the frame as drawn without safeFrame, which
// would hide a surface that forgot, holds anything a terminal obeys but
// the UI's styling. (It leaves the harness's model unguarded.)
func (h *harness) requireSafe(what string) {
	h.t.Helper()
	if !h.m.unguarded {
		h.m.unguarded, h.m.view = true, viewCache{}
	}
	out, _ := h.m.draw()
	require.Empty(h.t, termtext.Leaks([]byte(out)), "%s: %q", what, out)
	require.NoError(h.t, termtext.Check([]byte(sgr.ReplaceAllString(out, ""))), "%s:\n%s", what, h.screen())
}

// hostileAll is every sample of the corpus, one per line.
var hostileAll = termtext.HostileText()

// Everything outside text reaches in the full-screen UI — the model's
// reply and reasoning, a tool's name, input and output, notices and who
// sent them, status segments, prompt changes and their text, a refused
// edit, errors and retries, a model's name, the questions' titles,
// messages, options and hints, the notices said before the UI started,
// the extensions' command names, usages and descriptions in the palette
// and /help, /prompt's blocks and sources, /session — is drawn with what
// a terminal would obey in it shown, never passed.
func TestHostileTextOnEverySurface(t *testing.T) {
	t.Parallel()
	f := newFake()
	x := hostileAll
	f.info.Model, f.info.Provider, f.info.ID = x, x, x
	f.info.Extensions = []string{x}
	f.cmds = []extension.Command{{Extension: x, Name: "hx" + x, Usage: x, Description: x}}
	f.system = []conversation.SystemText{{Text: x, Source: x, Key: x}, {Text: x, Source: "project /p/" + x}}
	q, _ := json.Marshal(x)
	answered := make(chan testAnswer, 8)
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TurnStart{Text: text}
		for i := 0; i < len(x); i += 5 {
			ch <- host.ThinkingDelta{Text: x[i:min(len(x), i+5)]}
		}
		for i := 0; i < len(x); i += 5 {
			ch <- host.TextDelta{Text: x[i:min(len(x), i+5)]}
		}
		ch <- host.Reply{Message: conversation.AssistantText(x), Streamed: true}
		ch <- host.Reply{Message: conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
			{Type: conversation.TypeThinking, Thinking: x}, {Type: conversation.TypeText, Text: x}}}}
		for _, name := range []string{"bash", "edit", "write", x} {
			in := `{"command":` + string(q) + `,"path":` + string(q) + `,"content":` + string(q) +
				`,"edits":[{"old_text":` + string(q) + `,"new_text":"y"}]}`
			ch <- host.ToolStart{ID: name, Name: name, Input: json.RawMessage(in)}
			ch <- host.ToolEnd{ID: name, Result: x, IsError: name == "bash"}
		}
		ch <- host.Notice{Level: host.NoticeWarning, By: x, Text: x}
		ch <- host.Status{By: x, Key: x, Text: x}
		ch <- host.SystemChanged{By: x, Mode: conversation.ModeAppend, Text: x, Source: x}
		ch <- host.SystemChanged{By: x, Mode: conversation.ModeAppend, Key: x + ":k", Text: x, Source: x}
		ch <- host.SystemRefused{By: x, Err: errors.New(x)}
		ch <- host.Retry{Attempt: 1, Max: 2, Reason: x}
		ch <- host.Error{Err: errors.New(x)}
		ch <- host.CompactionStart{}
		ch <- host.CompactionDone{Err: errors.New(x)}
		ch <- host.ModelChanged{Model: x}
		for i, kind := range []extension.QuestionKind{extension.AskConfirm, extension.AskSelect, extension.AskInput} {
			ev, a := newAsk(asked{ID: int64(i + 1), By: x, Type: kind, Title: x, Message: x, Hint: x,
				Options: []string{x, x}, Highlight: []string{x}, Deadline: fixedNow.Add(time.Minute)})
			ch <- askEvent{ev.(askEvent).a.safe()}
			answered <- <-a
		}
		ch <- host.TurnEnd{}
	}
	h := newHarness(t, f, func(o *Options) { o.Notices = []string{x} })
	h.requireSafe("the first frame")
	h.typ("go")
	h.enter()
	for i := range 3 {
		h.wait(func() bool { return len(h.m.asks) > 0 }, "a question")
		h.requireSafe("question")
		h.now = h.now.Add(typingPause)
		for range 40 {
			h.key(tea.KeyPressMsg{Code: tea.KeyDown})
			h.requireSafe("question scrolled")
		}
		if i == 2 {
			h.send(tea.PasteMsg{Content: x})
			h.requireSafe("the input holds a paste")
		}
		h.key(tea.KeyPressMsg{Code: tea.KeyEscape})
		<-answered
	}
	h.idle()
	h.requireSafe("the turn's end")
	for range 20 {
		h.key(ctrl('o'))
		h.requireSafe("ctrl+o")
		h.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
		h.requireSafe("scrolled up")
	}
	h.key(tea.KeyPressMsg{Code: tea.KeyEscape})
	h.typ("/")
	h.requireSafe("the palette")
	h.typ("hx")
	h.requireSafe("the palette filtered")
	h.key(ctrl('u'))
	for _, page := range []string{"/help", "/prompt"} {
		h.typ(page)
		h.enter()
		h.requireSafe(page)
		for range 30 {
			h.key(tea.KeyPressMsg{Code: tea.KeyPgDown})
			h.requireSafe(page + " scrolled")
		}
		h.key(tea.KeyPressMsg{Code: 'q', Text: "q"})
	}
	h.typ("/session")
	h.enter()
	h.wait(func() bool { return strings.Contains(h.screen(), "tokens") }, "/session")
	h.requireSafe("/session")
	cmd := h.m.runExtension(f.cmds[0].Name, x)
	h.requireSafe("an extension's command runs")
	h.exec(cmd)
	h.idle()
	h.requireSafe("its output")
	h.typ("/model")
	h.enter()
	h.requireSafe("/model")
}

// The editor shows what it holds (a paste) escaped; /tree puts a
// message back in it byte for byte.
func TestHostilePasteInTheEditor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	h.send(tea.PasteMsg{Content: "x\u009b2J\u202e\x1b]52;c;eA==\a"})
	h.requireSafe("the editor")
	require.Equal(t, "x\u009b2J\u202e\x1b]52;c;eA==\a", h.m.ed.message(), "what is sent is what was pasted")
}

// The sessions /resume lists and the tree /tree draws come from logs:
// their rows, labels, previews and the prompt as of an entry are shown
// escaped.
func TestHostileSessionsAndTree(t *testing.T) {
	t.Parallel()
	x := hostileAll
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := realSession(t, &parrot{}, path)
	s = recordAs(t, s, &parrot{}, path, "test", conversation.ModeAppend, x)
	h := treeHarness(t, s, func(o *Options) {
		appOf(o).sessions = func() ([]SessionItem, error) {
			return []SessionItem{
				{Path: "/l/" + x, ID: x, Messages: 2, First: x, Labels: []string{x}},
				{Path: path, ID: "s1", First: "ok"},
				{Path: "/l/bad", ID: x, Err: errors.New(x)},
			}, nil
		}
		appOf(o).reopen = func(context.Context, string) (Session, error) { return nil, errors.New("no") }
	})
	h.send(tea.PasteMsg{Content: x})
	h.enter()
	h.idle()
	h.requireSafe("the turn")
	h.typ("/label " + "l\u202eabel")
	h.enter()
	h.settle()
	h.typ("/tree")
	h.enter()
	h.wait(func() bool { _, ok := h.m.ov.(*treeNav); return ok }, "the navigator")
	for range 8 {
		h.settle()
		h.requireSafe("/tree")
		h.key(key("up"))
	}
	h.typ("p")
	h.requireSafe("/tree p")
	h.key(key("esc"))
	h.key(key("esc"))
	h.typ("/resume")
	h.enter()
	h.wait(func() bool { _, ok := h.m.ov.(*resumePicker); return ok }, "the picker")
	for range 3 {
		h.requireSafe("/resume")
		h.key(key("down"))
	}
}

// safeFrame keeps SGR sequences and nothing else a terminal obeys.
func TestSafeFrame(t *testing.T) {
	t.Parallel()
	in := "\x1b[1mbold\x1b[m \x1b[38;2;1;2;3mrgb\x1b[m \x1b[4:3mcurly\x1b[m" + hostileAll + "\x1b[2J\x1b]8;;u\x1b\\l\x1b[m"
	out := safeFrame(in)
	require.Empty(t, termtext.Leaks([]byte(out)))
	require.NoError(t, termtext.Check([]byte(sgr.ReplaceAllString(out, ""))))
	require.True(t, strings.HasPrefix(out, "\x1b[1mbold\x1b[m \x1b[38;2;1;2;3mrgb\x1b[m \x1b[4:3mcurly\x1b[m"), "the styling stays")
	require.Contains(t, out, "␛[2J␛]8;;u␛\\l\x1b[m")
	require.Equal(t, "plain", safeFrame("plain"))
	require.Equal(t, out, safeFrame(out), "a safe frame stays as it is")
}

// Whatever a frame holds, what reaches the terminal is SGR and text a
// terminal does not obey.
func FuzzSafeFrame(f *testing.F) {
	f.Add(hostileAll)
	f.Add("\x1b[1ma\x1b[m\x1b[\x1b[1\x1b[1;m\r")
	f.Fuzz(func(t *testing.T, s string) {
		out := safeFrame(s)
		if err := termtext.Check([]byte(sgr.ReplaceAllString(out, ""))); err != nil {
			t.Fatalf("safeFrame(%q) = %q: %v", s, out, err)
		}
		if again := safeFrame(out); again != out {
			t.Fatalf("not stable: %q then %q", out, again)
		}
	})
}
