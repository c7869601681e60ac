package main

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPromptVariables(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env["PANTO_TEAM_LEAD"] = "Ann"
	h.write(filepath.Join(h.userDir(), "config.toml"), "provider = \"echo\"\n")
	// The user's own SYSTEM.md: a project's cannot read the environment.
	h.write(filepath.Join(h.userDir(), "SYSTEM.md"), "Work in {{ cwd }} on {{os}}/{{arch}}, {{date}}.\nModel {{model}} via {{provider}}; lead {{env.PANTO_TEAM_LEAD}}.\nShell stays: ${HOME} and a lone {{ brace.\n")
	r := h.ok("prompt", "--json")
	want := "Work in " + h.project + " on " + runtime.GOOS + "/" + runtime.GOARCH + ", " + time.Now().Format("2006-01-02") +
		".\nModel echo via echo; lead Ann.\nShell stays: ${HOME} and a lone {{ brace.\n"
	require.Contains(t, r.stdout, jsonString(want))

	h.ok("-p", "hi")
	log := h.sessionFiles()[0]
	require.Equal(t, "append:"+want, systemEntries(t, log)[0], "the log holds the rendered text")
}

func TestStrictRenderingRefusesToSend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"ok\n{{nope}}", "SYSTEM.md line 2: unknown variable nope"},
		{"{{env.PANTO_UNSET_VAR}}", "SYSTEM.md line 1: a project's prompt files cannot read your environment (only your own layers' files can): env.PANTO_UNSET_VAR"},
		{"{{two words}}", "SYSTEM.md line 1: malformed variable {{two words}}"},
	} {
		h := newHarness(t)
		h.write(filepath.Join(h.projectDir(), "SYSTEM.md"), tc.text)
		r := h.run("", "-p", "hi", "--provider", "echo")
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, filepath.Join(h.projectDir(), tc.want))
		require.Empty(t, r.stdout)
		require.Empty(t, h.sessionFiles(), "no session is left behind")
	}
}

func TestExtensionVariablesEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "Team {{team}}.")
	r := h.ok("-p", "hi", "--provider", "echo", "--extension", filepath.Join(pluginDir, "varext"))
	require.Contains(t, r.stdout, "2. Team platform.")
	require.Contains(t, systemEntries(t, h.sessionFiles()[0]), "append:Team platform works in "+h.project+".",
		"the host renders an extension's text; built-ins win over an extension's cwd")
	require.NotContains(t, r.stdout, "accepted")
	require.Contains(t, r.stderr, "extension varext line 1: unknown variable nope")
}

func TestUserPromptPrependedAndRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "USER_PROMPT.md"), "Project: answer briefly.")
	h.write(filepath.Join(h.baseDir(), "USER_PROMPT.md"), "Base: on {{os}}.")
	r := h.ok("-p", "hello", "--provider", "echo")
	require.Contains(t, r.stdout, `you said "Project: answer briefly.Base: on `+runtime.GOOS+`.hello"`)
	var user map[string]any
	for _, l := range logLines(t, h.sessionFiles()[0]) {
		if m, ok := l["message"].(map[string]any); ok && m["role"] == "user" {
			user = m
		}
	}
	content := user["content"].([]any)
	require.Len(t, content, 3, "the log shows exactly what was sent")
	require.Equal(t, "Project: answer briefly.", content[0].(map[string]any)["text"])
	require.Equal(t, "hello", content[2].(map[string]any)["text"])
}

func jsonString(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		switch r {
		case '\n':
			b = append(b, '\\', 'n')
		case '"':
			b = append(b, '\\', '"')
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, '"'))
}
