package transcript

import (
	"fmt"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// SystemChange is one recorded change of the system prompt, said in a
// line: "persona replaced the system prompt".
type SystemChange struct {
	Says string
	// Text is the block's text, shown when expanded.
	Text string
}

// System is a run of changes of the system prompt, one line each; Ctrl-O
// shows their text. No peer shows these: the prompt is part of panto's
// conversation, so its changes are part of the transcript.
type System struct {
	Changes  []SystemChange
	expanded bool
	version  int
	c        cache
}

// Add adds a change to the run.
func (s *System) Add(ch SystemChange) {
	s.Changes = append(s.Changes, ch)
	s.version++
}

// Amend changes the last change's line (a re-seed learns what changed as
// its blocks come).
func (s *System) Amend(says string, text string) {
	if n := len(s.Changes); n > 0 {
		s.Changes[n-1].Says = says
		s.Changes[n-1].Text += text
		s.version++
	}
}

// Toggle shows or hides the blocks' text.
func (s *System) Toggle() { s.expanded = !s.expanded; s.version++ }

// Expanded reports whether the text shows.
func (s *System) Expanded() bool { return s.expanded }

// Foldable implements Collapsible.
func (s *System) Foldable() bool {
	for _, c := range s.Changes {
		if c.Text != "" {
			return true
		}
	}
	return s.expanded
}

// expandedMax bounds the text shown of one block.
const expandedMax = 60

// Render implements Item.
func (s *System) Render(c Ctx) Lines {
	if l, ok := s.c.get(c, s.version); ok {
		return l
	}
	th := c.Theme
	var out []string
	for _, ch := range s.Changes {
		out = append(out, th.System.Render(cut("⚙ "+termtext.Line(ch.Says), c.Width)))
		if !s.expanded || ch.Text == "" {
			continue
		}
		lines := wrapText(ch.Text, c.Width-4)
		hidden := 0
		if len(lines) > expandedMax {
			hidden = len(lines) - expandedMax
			lines = lines[:expandedMax]
		}
		for _, l := range lines {
			out = append(out, th.Border.Render("  │ ")+th.Dim.Render(l))
		}
		if hidden > 0 {
			out = append(out, th.Border.Render("  │ ")+th.Dim.Render(fmt.Sprintf("… %d more lines (/prompt shows the prompt)", hidden)))
		}
	}
	return s.c.put(c, s.version, Strings(out))
}
