package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sessionlog"
)

// panto TEXT: the arguments are the first message (print mode's prompt
// without a terminal); a first word like a mistyped command still gets
// a suggestion, and -- sends it anyway.
func TestPositionalMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.ok("--provider", "echo", "hello", "there")
	require.Contains(t, r.stdout, `echo: you said "hello there"`)

	r = h.run("", "--provider", "echo", "sesion", "list")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "unknown command \"sesion\": did you mean `panto session`? (to send it as a message: panto -- sesion list)")

	r = h.ok("--provider", "echo", "--", "sesion", "list")
	require.Contains(t, r.stdout, `echo: you said "sesion list"`)

	r = h.run("", "--provider", "echo", "-p", "one", "two")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "the prompt is given twice")

	// Piped stdin is appended, as to -p.
	r = h.run("some input", "--provider", "echo", "review this:")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.Contains(r.stdout, `review this:\n\nsome input`), r.stdout)
}

// In the line loop (no full screen), panto TEXT sends TEXT first, then
// reads what is typed.
func TestPositionalMessageLineLoop(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var out, errb strings.Builder
	e := &env{
		stdin: strings.NewReader("second\n"), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off"}[k] },
		cwd:    root, terminal: true,
	}
	code := run(context.Background(), e, []string{"--provider", "echo", "first", "one"})
	require.Equal(t, 0, code, errb.String())
	s := out.String()
	i, j := strings.Index(s, `echo: you said "first one"`), strings.Index(s, `echo: you said "second"`)
	require.True(t, i >= 0 && j > i, s)
}

// A mistyped provider gets the nearest one's name.
func TestProviderDidYouMean(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("", "--provider", "antropic", "-p", "hi")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--provider "antropic": did you mean anthropic? (want anthropic, openai or echo)`)
	r = h.run("", "--provider", "zzz", "-p", "hi")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--provider "zzz": want anthropic, openai or echo`)
}

// panto session list shows a session's name (/name records it in the
// log), and --json has it.
func TestSessionListShowsTheName(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "hello", "--provider", "echo")
	path := h.sessionFiles()[0]
	w, _, err := sessionlog.Open(path)
	require.NoError(t, err)
	_, err = w.Append(sessionlog.SessionInfoEntry("the parser port"))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	r := h.ok("session", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Equal(t, []string{"ID", "NAME", "UPDATED"}, strings.Fields(lines[0])[:3])
	require.Contains(t, lines[1], "the parser port")
	r = h.ok("session", "list", "--json")
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 1)
	require.Equal(t, "the parser port", rows[0]["name"])
	require.Equal(t, "hello", rows[0]["first"])
	require.Equal(t, path, rows[0]["path"])
}
