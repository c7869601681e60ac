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
