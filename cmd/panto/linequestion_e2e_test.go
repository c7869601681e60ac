package main

import (
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
)

// Issue 15, items 3, 4 and 9, in the line loop: a question is answered
// only by a line typed after it appeared, a confirm takes the word yes,
// and the user can always leave, however an extension asks. The real
// panto under a pseudo-terminal, with the lineasker test extension.

// lineAskConfirm is a user message that makes lineasker ask one confirm
// after delay.
func lineAskConfirm(delay time.Duration) string {
	return `tool:lineask {"what":"confirm","title":"Delete it?","message":"rm -rf victim","delay_ms":` + itoa(int(delay.Milliseconds())) + `}`
}

// lineAskStart starts the line loop with lineasker at its prompt.
func lineAskStart(t *testing.T) *lineTerm {
	h := newHarness(t)
	p := h.lineTermStart(append([]string{"--plain", "--no-session"}, lineAskArgs()...)...)
	p.waitFor(t, "> ")
	return p
}

const lineAskChoice = "type yes to confirm, anything else is no: "

// lineAskAsked starts every question of lineasker.
const lineAskAsked = "? lineasker asks: "

// A line typed before the question appeared never answers it: it is
// discarded, and the user is told.
func TestLineQuestionDiscardsTypeAhead(t *testing.T) {
	t.Parallel()
	p := lineAskStart(t)
	// "yes" is typed ahead: the question comes a second later.
	p.typeIn(t, lineAskConfirm(time.Second)+"\ryes\r")
	p.waitFor(t, lineAskAsked)
	p.waitFor(t, "panto: discarded 1 line typed before the question")
	require.NotContains(t, p.out.String(), "confirmed=", "the line typed ahead answered nothing")
	time.Sleep(2 * lineloop.Grace)
	p.typeIn(t, "yes\r")
	p.waitFor(t, "confirmed=true")
	p.waitCount(t, "> ", 2)
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), p.out.String())
}

// A line half typed before the question (still in the terminal's input
// queue) is discarded too: Enter after the question sends an empty line.
func TestLineQuestionDiscardsHalfTypedLine(t *testing.T) {
	t.Parallel()
	p := lineAskStart(t)
	p.typeIn(t, lineAskConfirm(time.Second)+"\ryes")
	p.waitFor(t, "rm -rf victim\r\n")
	time.Sleep(2 * lineloop.Grace)
	p.typeIn(t, "\r")
	p.waitFor(t, "confirmed=false")
	p.waitCount(t, "> ", 2)
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), p.out.String())
}

// A line that ends as the question appears was typed before it could be
// read: it is ignored, and the choice is asked again.
func TestLineQuestionGrace(t *testing.T) {
	t.Parallel()
	// The test types as soon as it sees the question; on a machine so
	// loaded that this takes longer than the grace, the line counts, so
	// it tries up to three times.
	for attempt := range 3 {
		p := lineAskStart(t)
		p.typeIn(t, lineAskConfirm(0)+"\r")
		p.waitFor(t, "rm -rf victim\r\n")
		p.typeIn(t, "yes\r")
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(p.out.String(), "confirmed=") && !strings.Contains(p.out.String(), "panto: ignored a line") {
			require.True(t, time.Now().Before(deadline), p.out.String())
			time.Sleep(5 * time.Millisecond)
		}
		if strings.Contains(p.out.String(), "confirmed=true") {
			t.Logf("attempt %d: the line came after the grace", attempt+1)
			continue
		}
		p.waitCount(t, lineAskChoice, 2) // asked again, last on the screen
		time.Sleep(2 * lineloop.Grace)
		p.typeIn(t, "no\r")
		p.waitFor(t, "confirmed=false")
		require.NotContains(t, p.out.String(), "confirmed=true")
		return
	}
	t.Fatal("a line typed as the question appeared answered it, three times")
}

// A confirm takes the word yes: "y" is a no, and panto says so.
func TestLineQuestionConfirmWantsYes(t *testing.T) {
	t.Parallel()
	p := lineAskStart(t)
	p.typeIn(t, lineAskConfirm(0)+"\r")
	p.waitFor(t, "rm -rf victim\r\n")
	time.Sleep(2 * lineloop.Grace)
	p.typeIn(t, "y\r")
	p.waitFor(t, "confirmed=false")
	require.Contains(t, p.out.String(), "(no: only the word yes confirms)")
	p.waitCount(t, "> ", 2)
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), p.out.String())
}

// However an extension asks — the same question again as soon as it is
// dismissed, or a thousand at once — Ctrl-D, /quit and Ctrl-C twice
// leave.
func TestLineQuestionUserCanAlwaysLeave(t *testing.T) {
	t.Parallel()
	again := `tool:lineask {"what":"again","title":"Again?","n":1000000}`
	many := `tool:lineask {"what":"many","title":"Many?","n":1000}`
	for _, tc := range []struct{ name, ask, keys string }{
		{"again ctrl-d", again, "\x04"},
		{"again quit", again, "/quit\r"},
		{"again ctrl-c twice", again, "\x03"},
		{"many ctrl-d", many, "\x04"},
		{"many ctrl-c twice", many, "\x03"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := lineAskStart(t)
			p.typeIn(t, tc.ask+"\r")
			p.waitFor(t, lineAskAsked)
			time.Sleep(2 * lineloop.Grace)
			p.typeIn(t, tc.keys)
			if tc.keys == "\x03" {
				time.Sleep(lineloop.Grace)
				p.typeIn(t, "\x03")
			}
			code := p.wait(t)
			if tc.keys == "\x03" && code == 128+int(syscall.SIGINT) {
				code = 0 // the second Ctrl-C came while the turn was still stopping: panto stopped
			}
			require.Equal(t, 0, code, p.out.String())
		})
	}
}

// lineLoopAnswering runs the line loop in-process, as h.lineLoop does,
// with first typed at once and answer typed once a question has been on
// the screen for longer than the grace; it returns stdout and stderr.
func (h *harness) lineLoopAnswering(first, answer string, args ...string) (string, string) {
	h.t.Helper()
	in, typed := io.Pipe()
	var out, errb syncBuffer
	go func() {
		io.WriteString(typed, first+"\n")
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), " asks: ") && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(2 * lineloop.Grace)
		io.WriteString(typed, answer+"\n")
		typed.Close()
	}()
	e := &env{
		stdin: in, stdout: &out, stderr: &errb,
		getenv:   func(k string) string { return h.env[k] },
		environ:  h.environ,
		cwd:      h.project,
		terminal: true,
	}
	code := run(context.Background(), e, args)
	require.Equal(h.t, 0, code, errb.String())
	return out.String(), errb.String()
}

// Item 4: the guard's question about a 300-line command shows all of it,
// the part that matched marked under it, the length said, and the choice
// line after it all; nothing in the command can hide what it does.
func TestLineQuestionShowsTheWholeCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	victim := h.victim()
	p := h.lineTermStart(append([]string{"--plain"}, guardArgs(h)...)...)
	p.waitFor(t, "> ")
	cmd := strings.Repeat(": safe\n", 299) + "echo ok\x1b[2K\x1b[1G; rm -rf victim"
	p.typeIn(t, "tool:bash "+asciiJSON(t, map[string]string{"command": cmd})+"\r")
	p.waitFor(t, "(it matches guard's pattern")
	time.Sleep(lineloop.Grace)
	out := p.out.String()
	require.Equal(t, 299, strings.Count(out, "  : safe\r\n"), "every line")
	require.Contains(t, out, "  echo ok␛[2K␛[1G; rm -rf victim\r\n  "+strings.Repeat(" ", 17)+"^^^^^^\r\n", "the match marked under it")
	require.Contains(t, out, "  (302 lines: the whole message is above)\r\n  "+lineAskChoice)
	time.Sleep(2 * lineloop.Grace)
	p.typeIn(t, "no\r")
	p.waitFor(t, "guard blocked this command: the user")
	p.waitCount(t, "> ", 2)
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), p.out.String())
	require.DirExists(t, victim)
	lineTermSafe(t, p.bytes())
}

// A paste never answers a question: while one is up the line loop asks
// the terminal to mark pastes, and a pasted block whose first line is
// yes is ignored, whole (the fourth adversary pass's c18 confirmed
// rm -rf so).
func TestLineQuestionIgnoresAPaste(t *testing.T) {
	t.Parallel()
	p := lineAskStart(t)
	p.typeIn(t, lineAskConfirm(0)+"\r")
	p.waitFor(t, "rm -rf victim\r\n")
	require.Contains(t, p.out.String(), "\x1b[?2004h", "pastes are marked while the question is up")
	time.Sleep(2 * lineloop.Grace)
	p.typeIn(t, "\x1b[200~yes\rplease also update the changelog\r\x1b[201~")
	p.waitFor(t, "ignored pasted text: a paste never answers a question")
	// Pasted text that holds an end marker of its own (the fifth
	// adversary pass's F2) ends nothing: what came with it is the paste's.
	time.Sleep(2 * lineloop.Grace)
	p.typeIn(t, "\r\x1b[200~\x1b[201~yes\ryes\r\x1b[201~\r")
	time.Sleep(4 * lineloop.Grace)
	require.NotContains(t, p.out.String(), "confirmed=true")
	p.typeIn(t, "yes\r")
	p.waitFor(t, "confirmed=true")
	p.waitFor(t, "\x1b[?2004l")
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), p.out.String())
}
