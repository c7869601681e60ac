package tui

import (
	"fmt"
	"regexp"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/editor"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
)

// composer is the message being written: the editor, pasted blocks kept
// whole, and the history of sent messages.
//
// A paste arrives as one message (bracketed paste) and never sends. A
// large one shows as a token, "[paste #1 +40 lines]", and the text it
// stands for is put back, byte for byte, when the message is sent: the
// editor need not hold a 10,000-line log to send it.
type composer struct {
	ta     *editor.Model
	pastes map[string]string
	npaste int
	hist   *history.Cursor
}

// pasteLines is how many lines make a paste a token.
const pasteLines = 8

// pasteBytes is how long a paste can be before it is a token.
const pasteBytes = 2000

// The prompt of the editor's first line, and of the others.
const (
	promptFirst = "❯ "
	promptRest  = "  "
)

func newComposer() *composer {
	ta := editor.New()
	ta.Prompt, ta.Continuation = promptFirst, promptRest
	ta.Placeholder = "Write a message · / commands · @ files · Shift+Enter or Ctrl-J new line"
	return &composer{ta: ta, pastes: map[string]string{}, hist: history.NewCursor(nil)}
}

func (e *composer) setWidth(w int) { e.ta.SetWidth(max(w, 10)) }

func (e *composer) setMaxHeight(h int) { e.ta.MaxHeight = max(1, h) }

// value is the text as shown (paste tokens unexpanded).
func (e *composer) value() string { return e.ta.Value() }

// empty reports whether the editor holds nothing.
func (e *composer) empty() bool { return e.ta.Empty() }

// message is the text to send: each paste token replaced by its text.
func (e *composer) message() string {
	text := e.ta.Value()
	if len(e.pastes) == 0 {
		return text
	}
	return pasteToken.ReplaceAllStringFunc(text, func(tok string) string {
		if body, ok := e.pastes[tok]; ok {
			return body
		}
		return tok
	})
}

var pasteToken = regexp.MustCompile(`\[paste #[0-9]+ \+[0-9]+ lines?(?:, [0-9]+ chars)?\]`)

// reset empties the editor (after a send, or Ctrl-C).
func (e *composer) reset() {
	e.ta.Reset()
	e.pastes = map[string]string{}
}

// normalise makes a paste's line ends newlines: terminals send CR LF or
// CR for them.
func normalise(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// paste inserts pasted text at the cursor: as is when it is small, as a
// token when it is large.
func (e *composer) paste(s string) {
	s = normalise(s)
	if s == "" {
		return
	}
	e.ta.InsertString(e.tokenFor(s))
}

// tokenFor returns s, or a token standing for it when it is too large to
// edit in place.
func (e *composer) tokenFor(s string) string {
	lines := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	if lines < pasteLines && len(s) < pasteBytes {
		return s
	}
	e.npaste++
	tok := fmt.Sprintf("[paste #%d +%d lines]", e.npaste, lines)
	if lines == 1 {
		tok = fmt.Sprintf("[paste #%d +1 line, %d chars]", e.npaste, len([]rune(s)))
	}
	e.pastes[tok] = s
	return tok
}

// set replaces the text (a recalled message), a large one as a token.
func (e *composer) set(s string) {
	e.reset()
	e.ta.InsertString(e.tokenFor(s))
}

// onFirstLine reports whether the cursor is on the first visual row: Up
// recalls history there.
func (e *composer) onFirstLine() bool { return e.ta.OnFirstRow() }

// onLastLine reports whether the cursor is on the last visual row.
func (e *composer) onLastLine() bool { return e.ta.OnLastRow() }

// update passes a key to the editor.
func (e *composer) update(k tea.KeyPressMsg) bool { return e.ta.Update(k) }

// wordBeforeCursor returns the word the cursor ends.
func (e *composer) wordBeforeCursor() string { return e.ta.WordBeforeCursor() }

// replaceWordBeforeCursor deletes the word before the cursor and types s.
func (e *composer) replaceWordBeforeCursor(s string) { e.ta.ReplaceWordBeforeCursor(s) }
