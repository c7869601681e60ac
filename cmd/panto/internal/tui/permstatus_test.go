package tui

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
)

// The status line shows a permission mode other than default, and warns
// of bypass; on a narrow line the warning outlasts all but the model.
func TestStatusShowsThePermissionMode(t *testing.T) {
	t.Parallel()
	th := theme.New(true, true)
	s := status{cwd: "/home/u/project", provider: "anthropic", model: "claude-sonnet-4-5", in: 1200, out: 300}
	require.NotContains(t, s.view(th, 200), "⏵")
	s.perm = "default"
	require.NotContains(t, s.view(th, 200), "⏵", "default is not shown")
	s.perm = "plan"
	require.Contains(t, s.view(th, 200), "⏵ plan")
	s.perm = "bypass"
	require.Contains(t, s.view(th, 200), "⚠ bypass permissions")
	narrow := s.view(th, 50)
	require.Contains(t, narrow, "⚠ bypass permissions")
	require.Contains(t, narrow, "anthropic/claude-sonnet-4-5")
	require.NotContains(t, narrow, "/home/u/project", "the directory went first")
}

// The context's share of the window is drawn in the warning colour from
// 80% and in the error colour past 100%: "ctx 231k/128k 181%" in the
// status grey looked like any other number.
func TestStatusColoursAFullContext(t *testing.T) {
	t.Parallel()
	th := theme.New(true, false)
	s := status{model: "m", provider: "p"}
	for _, c := range []struct {
		tokens int
		style  theme.Style
		text   string
	}{
		{50_000, th.Status, "ctx 50k/128k 39%"},
		{110_000, th.Warn, "ctx 110k/128k 85%"},
		{128_000, th.Warn, "ctx 128k/128k 100%"},
		{231_000, th.Error, "ctx 231k/128k 180%"},
	} {
		s.ctxTokens, s.ctxWindow = c.tokens, 128_000
		require.Contains(t, s.view(th, 200), c.style.Render(c.text), "at %d tokens", c.tokens)
	}
	require.NotEqual(t, th.Status.Render("x"), th.Warn.Render("x"), "the colours differ")
	require.NotEqual(t, th.Warn.Render("x"), th.Error.Render("x"), "the colours differ")
}
