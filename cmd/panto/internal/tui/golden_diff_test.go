package tui

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// An edit and a new file as a user reads them: the file's lines with
// their numbers, three lines of context, a new file's lines numbered.
func TestGoldenDiff(t *testing.T) {
	t.Parallel()
	f := goldenFake()
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TurnStart{Text: text}
		ch <- host.Reply{Message: conversation.AssistantText("Fixing the bound."), StopReason: host.StopToolUse}
		ch <- host.ToolStart{ID: "1", Name: "edit", Input: json.RawMessage(`{"path":"count.go","edits":[{"old_text":"i <= n","new_text":"i < n"}]}`)}
		ch <- host.ToolEnd{ID: "1", Name: "edit", Duration: 4 * time.Millisecond, Result: "Edited count.go: applied 1 edit (at line 12).\n\n" +
			"@@ -9,7 +9,7 @@\n // count sums 0..n-1.\n func count(n int) int {\n \tsum := 0\n-\tfor i := 0; i <= n; i++ {\n+\tfor i := 0; i < n; i++ {\n \t\tsum += i\n \t}\n \treturn sum"}
		ch <- host.ToolStart{ID: "2", Name: "write", Input: json.RawMessage(`{"path":"count_test.go","content":"package count\n\nimport \"testing\"\n"}`)}
		ch <- host.ToolEnd{ID: "2", Name: "write", Duration: 2 * time.Millisecond, Result: "Created count_test.go: wrote 33 bytes."}
		ch <- host.TurnEnd{}
	}
	runGolden(t, 80, 24, f, func(tm *teatest.TestModel, s *screen) string {
		s.waitFor(t, "claude-test")
		tm.Type("fix the off-by-one")
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		return s.waitFor(t, "import \"testing\"")
	})
}
