package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The interactive loop, run in-process with a scripted "terminal".
func TestInteractive(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	project := filepath.Join(root, "p")
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".panto"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".panto", "SYSTEM.md"), []byte("Be brief."), 0o644))
	vars := map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off"}
	var out, errb strings.Builder
	e := &env{
		stdin:    strings.NewReader("/help\n\nhello\n/prompt\n/session\n/bogus\nsecond\n/quit\nnever sent\n"),
		stdout:   &out,
		stderr:   &errb,
		getenv:   func(k string) string { return vars[k] },
		cwd:      project,
		terminal: true,
	}
	code := run(context.Background(), e, []string{"--provider", "echo"})
	require.Equal(t, 0, code, errb.String())
	s := out.String()
	require.Contains(t, s, "echo/echo · session "+filepath.Join(root, ".local/share/panto/sessions"))
	require.Contains(t, s, "/prompt    show the effective system prompt")
	require.Contains(t, s, `echo: you said "hello"`)
	require.Contains(t, s, "--- block 1 · project "+filepath.Join(project, ".panto", "SYSTEM.md")+" ---\nBe brief.", "each block with where it came from")
	require.Contains(t, s, "messages 3") // the seed, hello and its reply: /session runs before "second"
	require.Contains(t, s, `echo: you said "second"`)
	require.NotContains(t, s, "never sent")
	require.Contains(t, errb.String(), "unknown command /bogus")
}

// Ctrl-D (end of input) leaves cleanly.
func TestInteractiveEOF(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var out, errb strings.Builder
	e := &env{
		stdin: strings.NewReader("hi\n"), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off"}[k] },
		cwd:    root, terminal: true,
	}
	require.Equal(t, 0, run(context.Background(), e, []string{"--provider", "echo", "--no-session"}), errb.String())
	require.Contains(t, out.String(), "not recorded (--no-session)")
	require.Contains(t, out.String(), `you said "hi"`)
}

// Extension commands in interactive mode: listed by /help, dispatched by
// name, their edits shaping the next turn.
func TestInteractiveExtensionCommands(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var out, errb strings.Builder
	e := &env{
		stdin:  strings.NewReader("/help\n/system-append Answer in French.\nbonjour\n/system-append\n/quit\n"),
		stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off"}[k] },
		cwd:    root, terminal: true,
	}
	code := run(context.Background(), e, []string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "sysprompt")})
	require.Equal(t, 0, code, errb.String())
	s := out.String()
	require.Contains(t, s, "Extension commands:\n  /system-append TEXT")
	require.Contains(t, s, "(sysprompt)")
	require.Contains(t, s, "appended\n")
	require.Contains(t, s, "2. Answer in French.")
	require.Contains(t, errb.String(), "/system-append:", "an empty argument is the extension's error, shown")
}

// /model switches the model, records it, and a resume goes on with it
// unless --model says otherwise.
func TestInteractiveModelSwitchLasts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	vars := map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off"}
	loop := func(stdin string, args ...string) (string, string) {
		var out, errb strings.Builder
		e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
			getenv: func(k string) string { return vars[k] }, cwd: root, terminal: true}
		require.Equal(t, 0, run(context.Background(), e, args), errb.String())
		return out.String(), errb.String()
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".config", "panto"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".config", "panto", "config.toml"),
		[]byte("provider = \"echo\"\nmodels = [\"echo-big\", \"echo-small\"]\n"), 0o644))
	out, _ := loop("/model\n/model 3\nhi\n")
	require.Contains(t, out, "* 1. echo\n  2. echo-big\n  3. echo-small\n")
	require.Contains(t, out, "model echo-small (recorded")
	out, _ = loop("/session\n", "-c")
	require.Contains(t, out, "echo/echo-small", "the resume goes on with the recorded model")
	out, _ = loop("/session\n", "-c", "--model", "echo")
	require.Contains(t, out, "echo/echo ·", "--model wins")
	_, errs := loop("/model 9\n")
	require.Contains(t, errs, "/model 9: want 1 to 3")
}
