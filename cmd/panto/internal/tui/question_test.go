package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/host/extension"
)

// put asks a question from outside a turn, as an extension does between
// turns, and waits for it to be up (not drawn yet).
func (h *harness) put(a asked) <-chan testAnswer {
	h.t.Helper()
	ev, answers := newAsk(a)
	n := len(h.m.asks)
	h.sess.events <- ev
	h.wait(func() bool { return len(h.m.asks) > n }, "the question is up")
	return answers
}

func answeredNow(ch <-chan testAnswer) (testAnswer, bool) {
	select {
	case a := <-ch:
		return a, true
	default:
		return testAnswer{}, false
	}
}

func yKey() tea.KeyPressMsg { return tea.KeyPressMsg{Code: 'y', Text: "y"} }

// A y typed for the next message as the guard's question comes up — before
// it is drawn, within the grace after, or while the user goes on typing —
// goes to the editor and never answers it; a y after a pause in typing
// does (the adversary pass's typist answered it with the y of "tidy").
func TestQuestionTakesKeysOnlyAfterItWasSeen(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	h.typ("r")
	answers := h.put(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run this command?", Message: "rm -rf victim"})
	h.key(yKey()) // typed before the box was ever drawn
	_, ok := answeredNow(answers)
	require.False(t, ok, "a key from before the question never answers it")
	s := h.screen() // drawn now
	require.Contains(t, s, "rm -rf victim")
	h.now = h.now.Add(answerGrace - time.Millisecond)
	h.key(yKey())
	_, ok = answeredNow(answers)
	require.False(t, ok, "a key within the grace never answers it")
	require.Equal(t, "ryy", h.m.ed.value(), "the keys went where they were meant")
	require.Len(t, h.m.asks, 1)

	// The grace is over, but the user is still typing their message: the
	// keys go on into the editor, and the box says so.
	h.now = h.now.Add(time.Millisecond)
	h.key(yKey())
	_, ok = answeredNow(answers)
	require.False(t, ok, "a key typed on, just after the grace, never answers it")
	require.Contains(t, h.screen(), "typing goes to your message; pause to answer")
	for range 10 {
		h.now = h.now.Add(typingPause - time.Millisecond) // a slow typist
		h.key(yKey())
	}
	_, ok = answeredNow(answers)
	require.False(t, ok, "keys typed at any steady pace never answer it")
	require.Equal(t, "ryyyyyyyyyyyyy", h.m.ed.value(), "the keys went where they were meant")

	h.now = h.now.Add(typingPause) // they stopped to read it
	require.NotContains(t, h.screen(), "pause to answer")
	require.Contains(t, h.screen(), "your message holds text: Tab answers this")
	h.yes()
	_, ok = answeredNow(answers)
	require.False(t, ok, "with a message in the editor, y and Enter are the message's")
	h.wait(func() bool { return slices.Contains(h.sess.sentTexts(), "ryyyyyyyyyyyyyy") }, "they went to the message, and its Enter sent it")
	h.typ("r")
	h.now = h.now.Add(typingPause)
	h.key(tea.KeyPressMsg{Code: tea.KeyTab}) // the editor holds a message: Tab takes the question
	h.yes()
	a, ok := answeredNow(answers)
	require.True(t, ok)
	require.True(t, a.Yes, "a key after a pause in typing answers")
	require.Equal(t, "r", h.m.ed.value(), "the message being written is kept")
	require.Empty(t, h.m.asks)
}

// A question that comes up while nobody types takes keys after its grace
// alone.
func TestQuestionAfterAPauseTakesKeysAfterTheGrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	h.typ("r")
	h.now = h.now.Add(typingPause)
	answers := h.put(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run this command?", Message: "rm -rf victim"})
	h.screen()
	h.now = h.now.Add(answerGrace)
	require.NotContains(t, h.screen(), "pause to answer")
	h.key(tea.KeyPressMsg{Code: tea.KeyTab}) // the editor holds a message: Tab takes the question
	h.yes()
	a, ok := answeredNow(answers)
	require.True(t, ok && a.Yes)
	require.Equal(t, "r", h.m.ed.value())
}

// Every question that comes to the top gets a grace of its own: the
// second of two, up the moment the first is answered, is not answered by
// the next key.
func TestEachQuestionHasItsOwnGrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	first := h.put(asked{ID: 1, By: "a", Type: extension.AskConfirm, Title: "one?"})
	second := h.put(asked{ID: 2, By: "b", Type: extension.AskConfirm, Title: "two?"})
	h.screen()
	h.now = h.now.Add(answerGrace)
	h.yes()
	a, ok := answeredNow(first)
	require.True(t, ok && a.Yes)
	require.Contains(t, h.screen(), "b asks: two?")
	h.key(yKey())
	_, ok = answeredNow(second)
	require.False(t, ok, "the second question came up with the first answer: the next key is too soon")
	h.now = h.now.Add(typingPause)           // that key was typing: a pause of its own
	h.key(tea.KeyPressMsg{Code: tea.KeyTab}) // the editor holds a message: Tab takes the question
	h.key(tea.KeyPressMsg{Code: 'n', Text: "n"})
	a, ok = answeredNow(second)
	require.True(t, ok && !a.Yes && !a.Dismissed)
}

// A 400-line command shows whole: the box says which lines show of how
// many, the choice line is always on screen, the part the guard matched
// is highlighted; yes needs the end and the highlighted line to have been
// on screen (no works at once); a control character shows escaped.
func TestLongQuestionScrollsAndIsReadBeforeYes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	var cmd strings.Builder
	for i := range 400 {
		if i == 200 {
			cmd.WriteString("rm -rf ~ \x1b[2K\x1b[1G# harmless\n")
			continue
		}
		fmt.Fprintf(&cmd, "echo line %d\n", i)
	}
	answers := h.put(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run this command?",
		Message: cmd.String(), Highlight: []string{"rm -rf ~"}})
	s := h.screen()
	require.Contains(t, s, "guard asks: Run this command?")
	require.Regexp(t, `lines 1–\d+ of 400`, s)
	require.Contains(t, s, "[y] yes   [n] no", "the choice line shows")
	require.Contains(t, s, "echo line 0")
	require.NotContains(t, s, "rm -rf")
	h.now = h.now.Add(answerGrace)

	h.key(yKey())
	_, ok := answeredNow(answers)
	require.False(t, ok, "not read: no yes")
	require.Contains(t, h.screen(), "read it all first")
	h.key(tea.KeyPressMsg{Code: tea.KeyEnd})
	s = h.screen()
	require.Contains(t, s, "echo line 399")
	require.Contains(t, s, "of 400 · ↑↓ PgDn · Tab: 1 highlighted not seen")
	h.key(yKey())
	_, ok = answeredNow(answers)
	require.False(t, ok, "the end, but not the highlighted line")

	h.key(tea.KeyPressMsg{Code: tea.KeyTab})
	s = h.screen()
	require.Contains(t, s, "rm -rf ~ ␛[2K␛[1G# harmless", "the line the guard matched, escaped")
	out, _ := h.m.draw()
	require.Contains(t, out, h.m.th.Highlight.Render("rm -rf ~"), "highlighted")
	h.yes()
	a, ok := answeredNow(answers)
	require.True(t, ok && a.Yes)

	// No needs no reading.
	answers = h.put(asked{ID: 2, By: "guard", Type: extension.AskConfirm, Title: "Run?", Message: cmd.String()})
	h.screen()
	h.now = h.now.Add(answerGrace)
	h.key(tea.KeyPressMsg{Code: 'n', Text: "n"})
	a, ok = answeredNow(answers)
	require.True(t, ok && !a.Yes)
}

// The box fits the screen whatever it asks: at 60×16 a long title, a
// long message and the choice line are all there, the frame keeps its
// rows.
func TestQuestionBoxFitsTheScreen(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	h.send(tea.WindowSizeMsg{Width: 60, Height: 16})
	h.put(asked{ID: 1, By: "x", Type: extension.AskConfirm, Title: strings.Repeat("a very long title ", 20),
		Message: strings.Repeat("word ", 500), Deadline: fixedNow.Add(time.Minute)})
	h.put(asked{ID: 2, By: "y", Type: extension.AskSelect, Title: "pick", Options: []string{"a", "b"}})
	s := h.frame()
	require.Len(t, strings.Split(s, "\n"), 16)
	require.Contains(t, s, "[y] yes   [n] no")
	require.Contains(t, s, "no answer in 1m0s counts as none")
	require.Contains(t, s, "1 more question(s) waiting")
	require.Regexp(t, `lines 1–\d+ of \d+`, s)
}

// Questions cannot trap the user: with a thousand questions up, or one
// asked again as soon as it is dismissed, Ctrl-C twice quits; every
// question is dismissed, and one that comes after is dismissed unseen.
func TestCtrlCTwiceLeavesWhateverIsAsked(t *testing.T) {
	t.Parallel()
	t.Run("a thousand", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newFake())
		var dismissed atomic.Int64
		for i := range 1000 {
			ev, _ := newAsk(asked{ID: int64(i), By: "flood", Type: extension.AskConfirm, Title: "again?"})
			a := ev.(askEvent).a
			a.Dismiss = func() { dismissed.Add(1) }
			h.exec(h.m.event(askEvent{a}))
		}
		require.Len(t, h.m.asks, 1000)
		h.screen()
		h.key(ctrl('c'))
		require.Contains(t, h.screen(), "Ctrl-C again to quit")
		h.key(ctrl('c'))
		require.True(t, h.quit, "the second Ctrl-C quits")
		require.EqualValues(t, 1000, dismissed.Load(), "every question is dismissed")
		require.Empty(t, h.m.asks)

		ev, answers := newAsk(asked{ID: 5000, By: "flood", Type: extension.AskConfirm, Title: "after?"})
		h.exec(h.m.event(ev))
		a, ok := answeredNow(answers)
		require.True(t, ok && a.Dismissed, "a question after quitting is dismissed")
		require.Empty(t, h.m.asks, "and never shown")
	})
	t.Run("asked again", func(t *testing.T) {
		t.Parallel()
		f := newFake()
		h := newHarness(t, f)
		var asks atomic.Int64
		var again func()
		again = func() {
			n := asks.Add(1)
			if n > 50 {
				return // (a session closing makes the host's Ask fail)
			}
			ev, answers := newAsk(asked{ID: n, By: "nag", Type: extension.AskConfirm, Title: "now?"})
			f.events <- ev
			go func() {
				if a := <-answers; a.Dismissed {
					again()
				}
			}()
		}
		again()
		h.wait(func() bool { return len(h.m.asks) > 0 }, "the question")
		h.screen()
		h.key(ctrl('c'))
		h.wait(func() bool { return asks.Load() >= 2 && len(h.m.asks) > 0 }, "asked again")
		h.screen()
		h.key(ctrl('c'))
		require.True(t, h.quit)
	})
	t.Run("ctrl+d", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newFake())
		answers := h.put(asked{ID: 1, By: "nag", Type: extension.AskConfirm, Title: "now?"})
		h.key(ctrl('d'))
		require.True(t, h.quit, "Ctrl-D on an empty editor quits with a question up")
		a, ok := answeredNow(answers)
		require.True(t, ok && a.Dismissed)
	})
}

// A question asked while the session closes (a session_end hook's) is
// dismissed at once, never shown: quitting does not wait on it.
func TestQuittingDismissesWhatTheSessionAsksAsItCloses(t *testing.T) {
	t.Parallel()
	f := newFake()
	got := make(chan testAnswer, 1)
	f.onClose = func() {
		ev, answers := newAsk(asked{ID: 9, By: "bye", Type: extension.AskConfirm, Title: "save?"})
		f.events <- ev
		select {
		case a := <-answers:
			got <- a
		case <-time.After(10 * time.Second):
		}
	}
	h := newHarness(t, f)
	h.key(ctrl('d'))
	require.True(t, h.quit)
	start := time.Now()
	require.NoError(t, h.m.Shutdown(context.Background()))
	select {
	case a := <-got:
		require.True(t, a.Dismissed)
	default:
		t.Fatalf("the question was not answered (Shutdown took %s)", time.Since(start))
	}
	require.True(t, f.closed)
	require.Empty(t, h.m.asks)
}

// Any question an extension can ask draws in its box: every line fits,
// the choice line is there, nothing a terminal obeys gets through.
func FuzzQuestionBox(f *testing.F) {
	f.Add("Run this?", "rm -rf ~\n\x1b]52;c;x\a\u202e", "rm -rf", 40, 12, 3)
	f.Add("", strings.Repeat("word ", 300), "word", 10, 5, 100)
	f.Fuzz(func(t *testing.T, title, message, highlight string, width, height, scroll int) {
		if len(message) > 1<<14 || len(title) > 1<<12 {
			return
		}
		width, height = 10+abs(width)%120, 3+abs(height)%60
		m := New(context.Background(), Options{Now: func() time.Time { return fixedNow }, NoColor: true})
		m.update(tea.WindowSizeMsg{Width: width, Height: height})
		m.ask(asked{ID: 1, By: "x", Type: extension.AskConfirm, Title: title, Message: message,
			Highlight: []string{highlight, ""}, Answer: func(extension.Answer) {}, Dismiss: func() {}}.safe())
		for i := range 3 {
			out, _ := m.draw()
			lines := strings.Split(out, "\n")
			if len(lines) > m.height {
				t.Fatalf("%d lines on a screen of %d", len(lines), m.height)
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > m.width {
					t.Fatalf("a line of %d cells on a screen of %d: %q", w, m.width, ansi.Strip(l))
				}
			}
			if !strings.Contains(ansi.Strip(out), "[y] yes") && m.transcriptHeight() >= 6 {
				t.Fatalf("no choice line:\n%s", ansi.Strip(out))
			}
			if err := termtext.Check([]byte(sgr.ReplaceAllString(out, ""))); err != nil {
				t.Fatal(err)
			}
			m.asks[0].off += scroll * (i + 1)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// The third adversary pass: after a pause of a second (the question now
// takes keys), the user goes back to typing their message. Every key of
// it goes to the editor — none is eaten — and the y of "type" or "you"
// is not a yes: a yes is y and then Enter, and a y followed by anything
// else was the start of a word.
func TestTypingAgainAfterAPauseNeverAnswers(t *testing.T) {
	t.Parallel()
	for _, resumed := range []string{" the type checker is slow", "you know", "yes and also", "Yy", " only"} {
		h := newHarness(t, newFake())
		h.typ("please also tidy the readme")
		answers := h.put(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run this command?", Message: "rm -rf ../victim"})
		h.screen()
		h.now = h.now.Add(typingPause + time.Millisecond) // a pause: the question takes keys now
		for _, r := range resumed {
			h.key(tea.KeyPressMsg{Code: r, Text: string(r)})
			h.now = h.now.Add(90 * time.Millisecond)
		}
		_, ok := answeredNow(answers)
		require.False(t, ok, "%q answered the question", resumed)
		require.Equal(t, "please also tidy the readme"+resumed, h.m.ed.value(), "no key of %q was eaten", resumed)
		require.Len(t, h.m.asks, 1)
	}
}

// A y and an Enter that arrive together — a paste without brackets, a
// text expander, keys a slow link bunched up — are not a person's yes:
// both go to the editor.
func TestYAndEnterTogetherAreNotAYes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	answers := h.put(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run this command?", Message: "rm -rf victim"})
	h.screen()
	h.now = h.now.Add(typingPause)
	h.key(yKey())
	h.now = h.now.Add(minYesGap - time.Millisecond)
	h.enter()
	_, ok := answeredNow(answers)
	require.False(t, ok, "y⏎ in one burst answered")
	require.Len(t, h.m.asks, 1)
	h.wait(func() bool { return slices.Contains(h.sess.sentTexts(), "y") }, "both keys went to the editor: it sent y")
}

// The Enter meant to send the message being typed, pressed after a pause
// with a select up, never chooses: a choice is made with ↑↓ first (the
// adversary pass's "Allow: ./deploy.sh --prod --wipe" was chosen so).
func TestEnterAloneNeverChoosesInASelect(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	answers := h.put(asked{ID: 1, By: "deploy", Type: extension.AskSelect, Title: "Run it?", Options: []string{"Allow: ./deploy.sh --prod --wipe", "Deny"}})
	h.screen()
	h.now = h.now.Add(1500 * time.Millisecond) // a pause, then Enter
	h.enter()
	_, ok := answeredNow(answers)
	require.False(t, ok, "an Enter alone chose")
	require.Contains(t, h.screen(), "choose with ↑↓ first, then Enter")
	require.Contains(t, h.screen(), "↑↓ then Enter chooses")

	// Typing again takes a move made before back.
	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	h.key(tea.KeyPressMsg{Code: tea.KeyUp})
	h.typ("!")
	h.m.ed.reset()
	h.now = h.now.Add(typingPause)
	h.enter()
	_, ok = answeredNow(answers)
	require.False(t, ok, "a move made before typing again chose")

	h.key(tea.KeyPressMsg{Code: tea.KeyDown})
	h.enter()
	a, ok := answeredNow(answers)
	require.True(t, ok)
	require.Equal(t, 1, a.Index, "Deny, chosen with ↓ then Enter")
}

// While the editor holds a message being written, its writer's keys go
// there, however long they paused: the end of a sentence ("…librar",
// a pause, "y⏎") never says yes (the fifth adversary pass's F1), and the
// Enter meant to send it sends it. Tab takes the question.
func TestAMessageBeingWrittenKeepsItsKeys(t *testing.T) {
	t.Parallel()
	for _, kind := range []extension.QuestionKind{extension.AskConfirm, extension.AskSelect} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newFake())
			h.typ("please also update the librar")
			answers := h.put(asked{ID: 1, By: "guard", Type: kind, Title: "Run this command?", Message: "rm -rf victim", Options: []string{"Allow", "Deny"}})
			h.screen()
			h.now = h.now.Add(4500 * time.Millisecond) // a long hesitation
			h.key(tea.KeyPressMsg{Code: tea.KeyDown})
			h.yes()
			_, ok := answeredNow(answers)
			require.False(t, ok, "the end of the message answered")
			h.wait(func() bool { return slices.Contains(h.sess.sentTexts(), "please also update the library") }, "the message, whole, was sent")
			require.Len(t, h.m.asks, 1)
		})
	}
}

// A select's or an input's subject taller than the box scrolls with PgDn,
// and the question is answered only once it was all on screen.
func TestALongSelectOrInputIsReadBeforeItIsAnswered(t *testing.T) {
	t.Parallel()
	long := "./deploy.sh " + strings.Repeat("--flag value ", 800) + "&& rm -rf ~/precious"
	for _, kind := range []extension.QuestionKind{extension.AskSelect, extension.AskInput} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newFake())
			q := asked{ID: 1, By: "ext", Type: kind, Title: long}
			if kind == extension.AskSelect {
				q.Options = []string{"Allow", "Deny"}
			}
			answers := h.put(q)
			s := h.screen()
			require.Contains(t, s, "· PgUp PgDn")
			require.NotContains(t, s, "rm -rf ~/precious")
			h.now = h.now.Add(typingPause)
			answer := func() {
				if kind == extension.AskSelect {
					h.key(tea.KeyPressMsg{Code: tea.KeyDown})
					h.key(tea.KeyPressMsg{Code: tea.KeyUp})
				} else {
					h.key(tea.KeyPressMsg{Code: tea.KeyTab})
					h.typ("ok")
				}
				h.enter()
			}
			answer()
			_, ok := answeredNow(answers)
			require.False(t, ok, "answered unread")
			require.Contains(t, h.screen(), "answers once all is read")
			for range 200 {
				if strings.Contains(h.screen(), "rm -rf ~/precious") {
					break
				}
				h.key(tea.KeyPressMsg{Code: tea.KeyPgDown})
			}
			require.Contains(t, h.screen(), "rm -rf ~/precious", "PgDn reaches the end")
			h.enter()
			a, ok := answeredNow(answers)
			require.True(t, ok, "read: answered")
			if kind == extension.AskSelect {
				require.Equal(t, 0, a.Index)
			} else {
				require.Equal(t, "ok", a.Text)
			}
		})
	}
}

// An input takes keys only once Tab took its field: the rest of a
// sentence typed after a pause goes to the message.
func TestAnInputTakesKeysOnlyAfterTab(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	h.typ("rename it to")
	answers := h.put(asked{ID: 1, By: "ext", Type: extension.AskInput, Title: "New name?"})
	h.screen()
	h.now = h.now.Add(1500 * time.Millisecond)
	h.typ(" foo")
	h.enter()
	_, ok := answeredNow(answers)
	require.False(t, ok, "the rest of the sentence answered")
	h.wait(func() bool { return slices.Contains(h.sess.sentTexts(), "rename it to foo") }, "the sentence, whole, went as the message it was")
	require.Contains(t, h.screen(), "Tab answers in the field")
	h.now = h.now.Add(typingPause)
	h.key(tea.KeyPressMsg{Code: tea.KeyTab})
	h.typ("bar")
	h.enter()
	a, ok := answeredNow(answers)
	require.True(t, ok)
	require.Equal(t, "bar", a.Text)
}

// A paste with a question up is the message's, never an answer and never
// lost (it was dropped: the fourth adversary pass's c41).
func TestAPasteWithAQuestionUpGoesToTheMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake())
	answers := h.put(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run this command?", Message: "rm -rf victim"})
	h.screen()
	h.now = h.now.Add(typingPause)
	h.send(tea.PasteMsg{Content: "y\nmore pasted text"})
	h.settle()
	_, ok := answeredNow(answers)
	require.False(t, ok)
	require.Contains(t, h.m.ed.value(), "more pasted text", "the paste is in the editor")
}

// Issue 20 item 13: Ctrl-C on a guard's question during a turn only
// answered "no" and the turn went on; it dismisses the question and
// stops the turn, as Ctrl-C does anywhere. Esc only dismisses.
func TestCtrlCOnAQuestionStopsTheTurn(t *testing.T) {
	t.Parallel()
	for _, k := range []tea.KeyPressMsg{ctrl('c'), {Code: tea.KeyEscape}} {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			f := newFake()
			f.turn = slowTurn
			h := newHarness(t, f)
			h.typ("go")
			h.enter()
			h.wait(func() bool { return strings.Contains(h.screen(), "partial") }, "the reply streams")
			answers := h.put(asked{ID: 1, By: "guard", Type: extension.AskConfirm, Title: "Run rm?", Deadline: fixedNow.Add(time.Minute)})
			h.screen()
			h.key(k)
			a, ok := answeredNow(answers)
			require.True(t, ok && a.Dismissed)
			if k.String() == "ctrl+c" {
				h.idle()
				require.ErrorIs(t, context.Cause(f.turnCtx[0]), errInterrupted, "the turn stopped")
				require.Contains(t, h.screen(), "dismissed; the turn stopped")
			} else {
				require.NoError(t, f.turnCtx[0].Err(), "Esc: the turn goes on")
			}
		})
	}
}
