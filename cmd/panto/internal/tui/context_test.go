package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// contextFake is a session with tools and request messages, as
// *host.Session has them, for /context.
type contextFake struct {
	*fakeSession
	tools []sessionlog.Tools
}

func (c *contextFake) Tools() []sessionlog.Tools { return c.tools }
func (c *contextFake) RequestMessages() []conversation.Message {
	return append([]conversation.Message{conversation.UserText("[Summary of the earlier conversation, written when it was compacted]\n\nAnn asked for a fix of count.go.")},
		c.msgs...)
}

func contextSession() *contextFake {
	f := goldenFake()
	f.info.Extensions = []string{"tools"}
	f.system = []conversation.SystemText{
		{Text: "You are a careful reviewer. Prefer small diffs and say why.", Source: "project /home/ann/proj/.panto/SYSTEM.md"},
		{Text: "# Tools from the tools extension\n\n## bash\n\nRun commands with bash -c; prefer the file tools to read files.", Key: "tools:guidance", Source: "extension tools"},
	}
	f.msgs = []conversation.Message{
		conversation.UserText("fix the off-by-one"),
		{Role: conversation.RoleAssistant, Content: []conversation.Block{conversation.ToolUse("1", "bash", []byte(`{"command":"go test ./..."}`))}},
		{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("1", "ok  \texample.com/count\t0.004s\n", false)}},
	}
	// A turn whose request the provider counted: 180 input tokens, 120
	// of them read from the cache (Anthropic counts them apart).
	f.turn = func(ctx context.Context, text string, ch chan<- host.Event) {
		ch <- host.TurnStart{Text: text}
		ch <- host.TextDelta{Text: "The test passes now."}
		ch <- host.Usage{InputTokens: 60, CacheReadTokens: 120, OutputTokens: 9, Model: "claude-test"}
		ch <- host.Reply{Message: conversation.AssistantText("The test passes now."), Streamed: true}
		ch <- host.TurnEnd{}
	}
	params := json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"the command"}},"required":["command"]}`)
	return &contextFake{fakeSession: f, tools: []sessionlog.Tools{{Extension: "tools", Tools: []sessionlog.ToolDef{
		{Name: "bash", Description: "Run a command with bash -c in the project", Parameters: params},
		{Name: "read", Description: "Read a file", Parameters: params},
	}}}}
}

// runContext runs the program on c at w×h, as runGolden does.
func runContext(t *testing.T, c *contextFake, w, h int, drive func(tm *teatest.TestModel, s *screen) string) string {
	t.Helper()
	m := goldenModel(t, c.fakeSession, func(o *Options) {
		o.App = &fakeApp{open: func(context.Context) (Session, error) { return c, nil }}
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	s := newScreen(w, h, tm.Output())
	got := drive(tm, s)
	tm.Send(tea.KeyPressMsg{Code: 'q'})
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	return got
}

// /context: the breakdown on a page, with the last request's real count
// (the turn's last Usage) beside the estimates.
func TestGoldenContext(t *testing.T) {
	t.Parallel()
	c := contextSession()
	got := runContext(t, c, 100, 30, func(tm *teatest.TestModel, s *screen) string {
		s.waitFor(t, "claude-test")
		tm.Type("fix the off-by-one")
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		s.waitFor(t, "The test passes now.")
		tm.Type("/context")
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		return s.waitFor(t, "≈ SHARE OF THE REAL 180", "window: 200,000 tokens")
	})
	golden.RequireEqual(t, got)
}

// Before any request of this run, and with none in a log: the estimates
// alone, on a narrow screen too.
func TestContextWithoutARequest(t *testing.T) {
	t.Parallel()
	c := contextSession()
	got := runContext(t, c, 60, 30, func(tm *teatest.TestModel, s *screen) string {
		s.waitFor(t, "claude-test")
		tm.Type("/context")
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		return s.waitFor(t, "no request recorded")
	})
	require.NotContains(t, got, "SHARE")
	for _, want := range []string{"block 1", "tools:guidance", "compaction summary", "tool results", "2 tools"} {
		require.Contains(t, got, want)
	}
	for _, l := range strings.Split(got, "\n") {
		require.LessOrEqual(t, ansi.StringWidth(l), 60, "every line fits: %q", l)
	}
}
