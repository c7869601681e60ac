package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/internal/golden"
)

// What the user typed is recorded as such, end to end with a
// USER_PROMPT.md: the model still gets the USER_PROMPT.md before every
// message, byte for byte as before, but the log marks that block as
// panto's, so the tree, the session list, a jump back and the export show
// and hand back what was typed — in a log written before the marker too.

// typedUserPrompt is the project's USER_PROMPT.md in these tests.
const typedUserPrompt = "Answer in one paragraph.\n"

// typedHarness is a harness whose project has a USER_PROMPT.md.
func typedHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "USER_PROMPT.md"), typedUserPrompt)
	return h
}

// typedUserIDs are the ids of a log's user messages, in file order.
func typedUserIDs(t *testing.T, path string) []string {
	t.Helper()
	var ids []string
	for _, e := range entriesOfType(t, path, "message") {
		if e["message"].(map[string]any)["role"] == "user" {
			ids = append(ids, e["id"].(string))
		}
	}
	return ids
}

// typedTreeRows are the texts of the user rows of panto session tree.
func typedTreeRows(t *testing.T, h *harness, args ...string) []string {
	t.Helper()
	var tree struct {
		Rows []struct{ Kind, Text string }
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok(append([]string{"session", "tree", "--json"}, args...)...).stdout), &tree))
	var out []string
	for _, r := range tree.Rows {
		if r.Kind == "user" {
			out = append(out, r.Text)
		}
	}
	return out
}

// typedUserLines are the user rows of panto session tree as printed.
func typedUserLines(t *testing.T, h *harness, args ...string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(h.ok(append([]string{"session", "tree"}, args...)...).stdout, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "user" {
			out = append(out, strings.Join(f[3:], " "))
		}
	}
	return out
}

// The log marks the USER_PROMPT.md block as panto's, with its file; the
// model still gets it; session tree and session list show what was typed.
func TestTypedTextInTheTreeAndTheList(t *testing.T) {
	t.Parallel()
	h := typedHarness(t)
	r := h.ok("-p", "fix the lexer bug", "--provider", "echo")
	require.Contains(t, r.stdout, `you said "Answer in one paragraph.\nfix the lexer bug"`, "the model gets the USER_PROMPT.md, as before")
	h.ok("-c", "-p", "now the escapes", "--provider", "echo")

	log := h.sessionFiles()[0]
	var contents [][]any
	for _, e := range entriesOfType(t, log, "message") {
		if m := e["message"].(map[string]any); m["role"] == "user" {
			contents = append(contents, m["content"].([]any))
		}
	}
	require.Len(t, contents, 2)
	for _, c := range contents {
		require.Len(t, c, 2)
		require.Equal(t, map[string]any{"type": "text", "added": "project " + filepath.Join(h.projectDir(), "USER_PROMPT.md"), "text": typedUserPrompt}, c[0])
		require.NotContains(t, c[1], "added")
	}

	require.Equal(t, []string{"fix the lexer bug", "now the escapes"}, typedUserLines(t, h))
	require.Equal(t, []string{"fix the lexer bug", "now the escapes"}, typedTreeRows(t, h))

	list := h.ok("session", "list").stdout
	require.Contains(t, list, "fix the lexer bug")
	require.NotContains(t, list, "Answer in one paragraph")
	// Listed again from the summary sidecar: the same.
	require.Equal(t, list, h.ok("session", "list").stdout)
}

// /tree ID on a message of the user's in the line loop hands back what
// was typed, not the USER_PROMPT.md glued to it; sent again, it gets the
// USER_PROMPT.md once, as any message does.
func TestTypedTextBackFromALineLoopJump(t *testing.T) {
	t.Parallel()
	h := typedHarness(t)
	h.ok("-p", "fix the lexer bug", "--provider", "echo")
	log := h.sessionFiles()[0]
	id := typedUserIDs(t, log)[0]
	out, _ := h.lineLoop(strings.NewReader("/tree "+id[:8]+"\n"), "--provider", "echo", "-c")
	require.Contains(t, out, "your message there was:\n  fix the lexer bug\n")
	require.NotContains(t, out, "your message there was:\n  Answer")
}

// The full-screen /tree navigator shows what was typed on the user's
// rows, and Enter on one puts what was typed back in the editor.
func TestTypedTextBackFromAFullScreenJump(t *testing.T) {
	t.Parallel()
	h := typedHarness(t)
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo")
	u.ready("echo/echo")
	u.typ("fix the lexer bug")
	u.keys("Enter")
	u.wait(`you said "Answer in one paragraph.\nfix the lexer bug"`)
	u.typ("/tree")
	u.keys("Enter")
	s := u.wait("/tree · ")
	require.Contains(t, s, "› fix the lexer bug")
	require.NotContains(t, s, "› Answer in one paragraph")
	u.keys("Up") // the user's row, above the reply
	u.keys("Enter")
	s = u.wait("your message there is back in the editor")
	require.Contains(t, s, "❯ fix the lexer bug")
	require.NotContains(t, s, "❯ Answer")
	require.Equal(t, 0, u.quit())
}

// The export shows what was typed as the message, and the USER_PROMPT.md
// block as panto's, with its file.
func TestTypedTextInTheExport(t *testing.T) {
	t.Parallel()
	h := typedHarness(t)
	h.ok("-p", "fix the lexer bug", "--provider", "echo")
	src := "project " + filepath.Join(h.projectDir(), "USER_PROMPT.md")
	md := h.ok("session", "export", "--format", "md").stdout
	require.Contains(t, md, "\nfix the lexer bug\n")
	require.Contains(t, md, "> _added by panto, not typed:_ **"+src+"**\n>\n> ```text\n> Answer in one paragraph.\n> ```")
	page := h.ok("session", "export", "--format", "html").stdout
	require.Contains(t, page, `<div class="t">fix the lexer bug</div>`)
	require.Contains(t, page, `<details class="added"><summary>added by panto, not typed: <span class="src">`+src+`</span></summary>`)
}

// typedOldLog puts sessionlog/testdata/userprompt-old.jsonl — written by
// a panto before the marker, with a USER_PROMPT.md — in h's sessions
// folder as this directory's, and returns its path.
func typedOldLog(t *testing.T, h *harness) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "sessionlog", "testdata", "userprompt-old.jsonl"))
	require.NoError(t, err)
	cwd, err := json.Marshal(h.project)
	require.NoError(t, err)
	data = bytes.Replace(data, []byte(`"cwd":"/home/ann/proj"`), append([]byte(`"cwd":`), cwd...), 1)
	dir := filepath.Join(h.home, "data", "panto", "sessions", layers.EncodePath(h.project))
	require.NoError(t, os.MkdirAll(dir, 0o700))
	path := filepath.Join(dir, "20261201T194629Z_f6a2860b-4644-4fa6-bef9-ff39e68751ee.jsonl")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// A log written before the marker reads back unchanged and behaves as
// docs/session-format.md says: what was typed is each user message's
// last text block, in the tree, the list and a jump; the export shows
// every block as the log has it, nothing marked; a turn on it now
// records its USER_PROMPT.md marked.
func TestTypedTextOfAnOldLog(t *testing.T) {
	t.Parallel()
	h := typedHarness(t)
	path := typedOldLog(t, h)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	require.Equal(t, []string{"fix the lexer bug", "now the escapes"}, typedUserLines(t, h))
	list := h.ok("session", "list").stdout
	require.Contains(t, list, "fix the lexer bug")
	require.NotContains(t, list, "Answer in one paragraph")
	md := h.ok("session", "export", "--format", "md").stdout
	require.Contains(t, md, "\nAnswer in one paragraph.\n")
	require.Contains(t, md, "\nnow the escapes\n")
	require.NotContains(t, md, "added by panto")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "reading changes nothing")

	id := typedUserIDs(t, path)[1]
	out, _ := h.lineLoop(strings.NewReader("/tree "+id[:8]+"\nnow the escapes, again\n"), "--provider", "echo", "-c")
	require.Contains(t, out, "your message there was:\n  now the escapes\n")
	require.Contains(t, out, `you said "Answer in one paragraph.\nnow the escapes, again"`)
	require.Equal(t, []string{"fix the lexer bug", "now the escapes", "now the escapes, again"}, typedTreeRows(t, h, "--full"))
}

// The request the model gets with a USER_PROMPT.md is what panto sent
// before the marker existed, byte for byte (the golden file was written
// by that panto, before prompt caching too, which is off here): the
// marker never reaches the wire.
func TestTypedTextRequestUnchanged(t *testing.T) {
	t.Parallel()
	h := typedHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"), "prompt_cache = false\n")
	fake := newFake(t, anthropicText("a1"), anthropicText("a2"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	args := []string{"--provider", "anthropic", "--base-url", fake.srv.URL}
	h.ok(append(args, "-p", "fix the lexer bug")...)
	h.ok(append(args, "-c", "-p", "now the escapes")...)
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, requestField(t, fake.request(t, 1).body, "messages"), "", "  "))
	buf.WriteByte('\n')
	golden.Check(t, filepath.Join("testdata", "typed-request-messages.json"), buf.Bytes())
	require.NotContains(t, string(fake.request(t, 1).body), "added")
}
