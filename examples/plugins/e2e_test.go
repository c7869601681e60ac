package plugins_test

// End-to-end: the real panto binary, the example extensions built as any
// third party would build them, the offline echo provider (its reply lists
// the effective system prompt it was sent, block by block), and HOME, the
// XDG folders and PANTO_HOME in the test's own folder.

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	seed     = "You are a test agent.\n"
	greeting = "Greetings from the hello extension."
)

// (a) Each command records its system entry at once, and the next request
// carries the edited prompt. An extension's replace does not move the
// reconciliation anchor (spec amendment 3): with the files unchanged, it
// survives the next resume (docs/system-prompt.md).
func TestCommandsRecordEditsAndShapeTheNextRequest(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	sp := "--extension=" + ext("sysprompt")

	out := m.panto("-p", "/system-append Answer in French.", "--provider", "echo", sp)
	require.Equal(t, "appended\n", out, "the command's output, and nothing else, on stdout")
	logs, err := filepath.Glob(filepath.Join(m.home, "panto", "sessions", "*", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	m.session = logs[0]
	entries := m.logEntries()
	require.Equal(t, "message", entries[len(entries)-1].Type)
	require.JSONEq(t, systemMessageJSON("append", "Answer in French.", "extension sysprompt"), string(entries[len(entries)-1].Message))

	out = m.panto("-c", "-p", "hi", "--provider", "echo", sp)
	require.Contains(t, out, echoPrompt("You are a test agent.", "Answer in French."))

	out = m.panto("-c", "-p", "/system-replace You are a pirate.", "--provider", "echo", sp)
	require.Equal(t, "replaced\n", out)
	entries = m.logEntries()
	require.JSONEq(t, systemMessageJSON("replace", "You are a pirate.", "extension sysprompt"), string(entries[len(entries)-1].Message))
	require.Equal(t, []string{"You are a pirate."}, m.promptAt(-1), "the prompt the log now holds")

	require.Equal(t, []string{
		"system append " + seed,
		"lifecycle started [sysprompt]",
		"model_change",
		"permissions",
		"system append Answer in French.",
		"lifecycle resumed reseeded=false",
		"user",
		"request_settings", // recorded before the first request
		"assistant",
		"lifecycle resumed reseeded=false",
		"system replace You are a pirate.",
	}, m.kinds())

	// The files did not change: the next resume records no system entry,
	// and its request carries the extension's replacement.
	out = m.panto("-c", "-p", "hi again", "--provider", "echo")
	require.Contains(t, out, echoPrompt("You are a pirate."))
	kinds := m.kinds()
	require.Equal(t, []string{"system replace You are a pirate.", "lifecycle resumed reseeded=false", "user", "assistant"}, kinds[len(kinds)-4:])

	// A changed file still re-seeds wholesale, the replacement included.
	m.write(filepath.Join(".panto", "APPEND_SYSTEM.md"), "Run make test.\n")
	out = m.panto("-c", "-p", "and now", "--provider", "echo")
	require.Contains(t, out, echoPrompt("You are a test agent.", "Run make test."))
}

// (b) An extension's append survives a resume with unchanged files: the
// resume records no system entry, and the block stays in the prompt; a
// re-seed discards it, and hello adds it again after the new lifecycle
// entry.
func TestExtensionAppendSurvivesUnchangedResume(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	out := m.turn("one", "hello")
	require.Contains(t, out, echoPrompt("You are a test agent.", greeting))

	out = m.turn("two", "hello")
	require.Contains(t, out, echoPrompt("You are a test agent.", greeting))
	// Without the extension too: the block is conversation state.
	out = m.turn("three")
	require.Contains(t, out, echoPrompt("You are a test agent.", greeting))
	require.Equal(t, []string{
		"system append " + seed,
		"lifecycle started [hello]",
		"model_change",
		"permissions",
		"system append " + greeting,
		"user", "request_settings", "assistant", // the settings before the first request only
		"lifecycle resumed reseeded=false",
		"user", "assistant",
		"lifecycle resumed reseeded=false",
		"user", "assistant",
	}, m.kinds())

	// The files change: a re-seed, then hello's block again.
	m.write(filepath.Join(".panto", "APPEND_SYSTEM.md"), "Run make test.\n")
	out = m.turn("four", "hello")
	require.Contains(t, out, echoPrompt("You are a test agent.", "Run make test.", greeting))
	kinds := m.kinds()
	require.Equal(t, []string{
		"system replace " + seed,
		"system append Run make test.\n",
		"lifecycle resumed reseeded=true",
		"system append " + greeting,
		"user", "assistant",
	}, kinds[len(kinds)-6:])
}

// (c) panto prompt --at N shows the prompt before and after each edit.
func TestPromptAtEachEdit(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	m.turn("/system-append Note one.", "sysprompt")
	m.turn("/system-append Note two.", "sysprompt")
	m.turn("/system-replace Fresh start.", "sysprompt")
	// Messages: 1 the seed, 2 and 3 the appends, 4 the replace.
	require.Equal(t, []string{}, m.promptAt(0))
	require.Equal(t, []string{seed}, m.promptAt(1))
	require.Equal(t, []string{seed, "Note one."}, m.promptAt(2))
	require.Equal(t, []string{seed, "Note one.", "Note two."}, m.promptAt(3))
	require.Equal(t, []string{"Fresh start."}, m.promptAt(4))
	require.Equal(t, []string{"Fresh start."}, m.promptAt(-1))
}

// (d) hello's session-start block is recorded after the lifecycle entry,
// so it is never mistaken for configuration.
func TestSessionStartBlockFollowsLifecycle(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	m.turn("hi", "hello")
	entries := m.logEntries()
	require.Len(t, entries, 8)
	require.JSONEq(t, systemMessageJSON("append", seed, "project "+filepath.Join(m.project, ".panto", "SYSTEM.md")), string(entries[0].Message))
	require.Equal(t, "lifecycle", entries[1].Type)
	require.Equal(t, "started", entries[1].Event)
	require.Equal(t, []string{"hello"}, entries[1].Extensions)
	require.Equal(t, "model_change", entries[2].Type)
	require.Equal(t, "permissions", entries[3].Type)
	require.JSONEq(t, systemMessageJSON("append", greeting, "extension hello"), string(entries[4].Message))
	require.Equal(t, []string{"user", "request_settings", "assistant"}, m.kinds()[5:])
}

// persona records its choice as extension data, puts its block back after
// a re-seed, and notes a long conversation at the threshold its
// environment sets.
func TestPersonaAcrossResumes(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	m.env = append(m.env, "PANTO_PERSONA_THRESHOLD=2")
	require.Equal(t, "persona set to Ada\n", m.turn("/persona Ada", "persona"))
	require.Equal(t, "persona Ada already in force\n", m.turn("/persona Ada", "persona"))

	out := m.turn("one", "persona")
	require.Contains(t, out, echoPrompt("You are a test agent.", "Persona: Ada"))

	// The files change: the re-seed drops the block, persona restores it
	// before the request.
	m.write(filepath.Join(".panto", "APPEND_SYSTEM.md"), "Run make test.\n")
	out = m.turn("two", "persona")
	require.Contains(t, out, echoPrompt("You are a test agent.", "Run make test.", "Persona: Ada"))
	// The second reply reached the threshold: the note is in the next
	// request.
	out = m.turn("three", "persona")
	require.Contains(t, out, echoPrompt("You are a test agent.", "Run make test.", "Persona: Ada", "This conversation is long; be concise."))

	require.Equal(t, []string{
		"system append " + seed,
		"lifecycle started [persona]",
		"model_change",
		"permissions",
		`data persona {"persona":"Ada"}`,
		"system append Persona: Ada",
		"lifecycle resumed reseeded=false",
		"lifecycle resumed reseeded=false",
		"user", "request_settings", "assistant",
		"system replace " + seed,
		"system append Run make test.\n",
		"lifecycle resumed reseeded=true",
		"system append Persona: Ada",
		"user", "assistant",
		"system append This conversation is long; be concise.",
		"lifecycle resumed reseeded=false",
		"user", "assistant",
	}, m.kinds())
}

// panto ext check starts each example against a scratch session and
// shuts it down cleanly.
func TestExtCheck(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	for _, name := range []string{"sysprompt", "hello", "persona"} {
		out := m.panto("ext", "check", ext(name))
		require.Contains(t, out, "started "+name, name)
		require.Contains(t, out, "ok: shut down cleanly", name)
	}
	out := m.panto("ext", "check", ext("hello"))
	require.Contains(t, out, `system append by hello: "`+greeting+`"`)
	out = m.panto("ext", "check", ext("sysprompt"))
	require.Contains(t, out, "command: /system-append TEXT")
	require.Contains(t, out, "command: /system-replace TEXT")
}
