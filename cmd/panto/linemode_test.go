package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Newcomer defect: in the line loop, Ctrl-D on a half-typed line sent
// it. Text after the last newline when the input ends is not sent, and
// the user is told.
func TestLineModeCtrlDDoesNotSendHalfTypedText(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var out, errb strings.Builder
	e := &env{
		stdin: strings.NewReader("hello\nhalf typed"), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off"}[k] },
		cwd:    root, terminal: true,
	}
	require.Equal(t, 0, run(context.Background(), e, []string{"--provider", "echo", "--no-session"}), errb.String())
	require.Contains(t, out.String(), `you said "hello"`)
	require.NotContains(t, out.String(), "half typed", "never sent")
	require.Contains(t, errb.String(), `panto: not sent: "half typed" (the input ended before Enter`)
}
