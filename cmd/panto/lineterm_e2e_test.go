package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// Issue 15, item 5: no byte from outside reaches the terminal raw in the
// line loop, print mode at a terminal, the stderr progress lines and the
// subcommands. Each test runs the real panto under a pseudo-terminal
// (stdin, stdout and stderr), feeds a surface the hostile corpus, and
// checks every byte panto wrote with termtext.Check; the same command
// piped writes the bytes unchanged.

// lineTerm is panto with a pseudo-terminal as stdin, stdout and stderr;
// out is every byte it wrote (and the terminal echoed).
type lineTerm struct {
	cmd    *exec.Cmd
	tty    *os.File
	out    syncBuffer
	copied chan struct{}
}

// lineTermStart starts panto under a pty with args as they are (add
// --plain for the line loop).
func (h *harness) lineTermStart(args ...string) *lineTerm {
	h.t.Helper()
	p := &lineTerm{cmd: h.command("", args...), copied: make(chan struct{})}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = nil, nil, nil
	tty, err := pty.StartWithSize(p.cmd, &pty.Winsize{Rows: 50, Cols: 200})
	require.NoError(h.t, err)
	p.tty = tty
	go func() { io.Copy(&p.out, tty); close(p.copied) }()
	h.t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		tty.Close()
	})
	return p
}

// lineTermRun runs panto under a pty to its end; it returns all it wrote
// and its exit status.
func (h *harness) lineTermRun(args ...string) ([]byte, int) {
	h.t.Helper()
	p := h.lineTermStart(args...)
	code := p.wait(h.t.(*testing.T))
	return p.bytes(), code
}

func (p *lineTerm) bytes() []byte { return []byte(p.out.String()) }

// waitCount waits until the output holds s n times.
func (p *lineTerm) waitCount(t *testing.T, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(p.out.String(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %q (×%d) in the output:\n%s", s, n, p.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *lineTerm) waitFor(t *testing.T, s string) { t.Helper(); p.waitCount(t, s, 1) }

func (p *lineTerm) typeIn(t *testing.T, s string) {
	t.Helper()
	_, err := p.tty.WriteString(s)
	require.NoError(t, err)
}

// wait waits for panto to exit and for its output to be read; it returns
// the exit status.
func (p *lineTerm) wait(t *testing.T) int {
	t.Helper()
	code := waitExit(t, p.cmd, 30*time.Second)
	select {
	case <-p.copied:
	case <-time.After(5 * time.Second):
	}
	return code
}

// lineTermSafe requires that out holds no byte a terminal obeys and none
// of the corpus raw, and that each of visible (text that must have been
// shown) is there, escaped.
func lineTermSafe(t *testing.T, out []byte, visible ...string) {
	t.Helper()
	// panto's own controls: bracketed paste, on while a question is up.
	for _, own := range []string{"\x1b[?2004h", "\x1b[?2004l"} {
		out = bytes.ReplaceAll(out, []byte(own), nil)
	}
	require.NoError(t, termtext.Check(out), "raw bytes reached the terminal:\n%q", out)
	require.Empty(t, termtext.Leaks(out))
	for _, v := range visible {
		require.Contains(t, string(out), termtext.Sanitize(v), "shown escaped:\n%s", out)
	}
}

// The first sample (OSC 52) and the one that rewrites a line: shown
// escaped wherever the whole corpus is.
var lineTermMarks = []string{termtext.Hostile[0].Text, termtext.Hostile[5].Text}

// asciiJSON is v as JSON with every byte outside printable ASCII
// escaped, so it can be typed at a terminal (whose echo would otherwise
// show raw bytes that panto did not write).
func asciiJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	var b strings.Builder
	for _, r := range string(raw) {
		switch {
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// asSent is text as it arrives after a JSON round trip (what a provider
// or an extension can send): bytes that are not UTF-8 become U+FFFD.
func asSent(text string) string {
	raw, _ := json.Marshal(text)
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// lineTermAnthropic is an Anthropic stream that thinks, then answers.
func lineTermAnthropic(thinking, text string) reply {
	th, _ := json.Marshal(thinking)
	tx, _ := json.Marshal(text)
	return reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(
		"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":`+string(th)+`}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":`+string(tx)+`}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
		"message_stop", `{"type":"message_stop"}`,
	)}
}

// lineTermProvider is an Anthropic fake that answers every request
// with thinking and text made of the corpus.
func lineTermProvider(t *testing.T, h *harness, n int) []string {
	script := make([]reply, n)
	for i := range script {
		script[i] = lineTermAnthropic("thinking"+termtext.HostileText(), "reply"+termtext.HostileText()+"END\n")
	}
	fake := newFake(t, script...)
	h.env["ANTHROPIC_API_KEY"] = "k"
	return []string{"--provider", "anthropic", "--model", "claude-test", "--base-url", fake.srv.URL, "--no-extensions"}
}

func TestLineTermModelText(t *testing.T) {
	t.Parallel()
	t.Run("line loop", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		p := h.lineTermStart(append([]string{"--plain", "--no-session"}, lineTermProvider(t, h, 1)...)...)
		p.waitFor(t, "> ")
		p.typeIn(t, "hi\r")
		p.waitFor(t, "END")
		p.waitCount(t, "> ", 2)
		p.typeIn(t, "\x04")
		require.Equal(t, 0, p.wait(t), p.out.String())
		lineTermSafe(t, p.bytes(), lineTermMarks...)
	})
	t.Run("print mode", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		args := append([]string{"-p", "hi", "--no-session"}, lineTermProvider(t, h, 2)...)
		out, code := h.lineTermRun(args...)
		require.Equal(t, 0, code, "%s", out)
		lineTermSafe(t, out, lineTermMarks...)
		// Piped, the reply is exactly what the model sent.
		r := h.run("", args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, asSent("reply"+termtext.HostileText()+"END\n"), r.stdout)
	})
	t.Run("json mode", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		args := append([]string{"-p", "hi", "--no-session", "--mode", "json"}, lineTermProvider(t, h, 2)...)
		out, code := h.lineTermRun(args...)
		require.Equal(t, 0, code, "%s", out)
		lineTermSafe(t, out)
		// At a terminal the lines decode to what they do piped: the
		// escapes are JSON's, not the sanitizer's visible forms.
		r := h.run("", args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, lineTermJSONTexts(t, []byte(r.stdout)), lineTermJSONTexts(t, bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n"))))
		require.Contains(t, r.stdout, "\u009b", "piped, JSON's bytes are as encoding/json wrote them")
	})
}

// lineTermJSONTexts decodes the text of each text_delta and
// thinking_delta line.
func lineTermJSONTexts(t *testing.T, out []byte) []string {
	t.Helper()
	var texts []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "%q", l)
		if m["type"] == "text_delta" || m["type"] == "thinking_delta" {
			texts = append(texts, m["text"].(string))
		}
	}
	require.Len(t, texts, 2)
	return texts
}

// lineAskArgs load the lineasker test extension on the echo provider.
func lineAskArgs(extra ...string) []string {
	return append([]string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "lineasker")}, extra...)
}

// Tool output, extensions' notices and status, their command output and
// command descriptions (/help).
func TestLineTermExtensionTexts(t *testing.T) {
	t.Parallel()
	t.Run("line loop", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		p := h.lineTermStart(append([]string{"--plain"}, lineAskArgs()...)...)
		p.waitFor(t, "> ")
		p.typeIn(t, `tool:lineask {"what":"hostile"}`+"\r")
		p.waitFor(t, "echo: 1 tool result")
		p.waitCount(t, "> ", 2)
		p.typeIn(t, "/lineask-out\r")
		p.waitCount(t, "> ", 3)
		p.typeIn(t, "/help\r")
		p.waitFor(t, "Extension commands:")
		p.waitCount(t, "> ", 4)
		p.typeIn(t, "\x04")
		require.Equal(t, 0, p.wait(t), p.out.String())
		out := p.bytes()
		lineTermSafe(t, out, lineTermMarks...)
		for _, s := range []string{"panto: lineasker: info", "panto: lineasker: warning: warning", "output", "result"} {
			require.Contains(t, string(out), s+termtext.Sanitize(termtext.Hostile[0].Text))
		}
	})
	t.Run("piped", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		r := h.run("", lineAskArgs("-p", `tool:lineask {"what":"hostile"}`)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stderr, "panto: lineasker: info"+noticeText(asSent(termtext.HostileText())), "piped: as the extension sent it, its lines indented")
		r = h.run("", lineAskArgs("-p", "/lineask-out")...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, asSent("output"+termtext.HostileText()), r.stdout)
	})
}

// An extension's question: its title and message are shown escaped, and
// the choice line comes after all of it.
func TestLineTermQuestion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.lineTermStart(append([]string{"--plain"}, lineAskArgs()...)...)
	p.waitFor(t, "> ")
	in := asciiJSON(t, map[string]string{"what": "confirm", "title": "Run\x1b]0;pwned-title\x07 this?", "message": termtext.HostileText()})
	p.typeIn(t, "tool:lineask "+in+"\r")
	p.waitFor(t, "lineasker asks:")
	p.waitFor(t, "del1")
	time.Sleep(2 * lineloop.Grace)
	p.typeIn(t, "no\r")
	p.waitFor(t, "confirmed=false")
	p.waitCount(t, "> ", 2)
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), p.out.String())
	out := p.bytes()
	lineTermSafe(t, out, lineTermMarks...)
	s := string(out)
	require.Contains(t, s, "? lineasker asks: Run␛]0;pwned-title␇ this?")
	require.Contains(t, s, "  git status␛[2K␛[1Grm -rf ~\r\n", "the whole line, escaped")
	last := termtext.Sanitize(termtext.Hostile[len(termtext.Hostile)-1].Text)
	require.Greater(t, strings.Index(s, "type yes to confirm"), strings.Index(s, last), "the choice line comes last")
}

// The stderr progress lines (a retry) and an error that quotes the
// provider's text.
func TestLineTermProgressAndErrors(t *testing.T) {
	t.Parallel()
	hostile := func() []reply {
		msg, _ := json.Marshal("busy" + termtext.HostileText())
		bad, _ := json.Marshal("bad request" + termtext.HostileText())
		return []reply{
			{status: 529, headers: map[string]string{"retry-after": "0"}, body: `{"type":"error","error":{"type":"overloaded_error","message":` + string(msg) + `}}`},
			{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":` + string(bad) + `}}`},
		}
	}
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "k"
	fake := newFake(t, hostile()...)
	args := []string{"-p", "hi", "--no-session", "--no-extensions", "--provider", "anthropic", "--base-url", fake.srv.URL}
	out, code := h.lineTermRun(args...)
	require.Equal(t, 1, code, "%s", out)
	lineTermSafe(t, out, "busyx\x1b]52;c;cm0gLXJmIH4K\x07")
	require.Contains(t, string(out), "panto: retry 1 of")
	require.Contains(t, string(out), termtext.Sanitize("bad requestx\x1b]52;c;cm0gLXJmIH4K\x07"))

	fake = newFake(t, hostile()...)
	args[len(args)-1] = fake.srv.URL
	r := h.run("", args...)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "busyx\x1b]52;c;cm0gLXJmIH4K\x07", "piped, stderr is raw")
}

// panto prompt, at a terminal and piped; --json decodes to the same blocks.
func TestLineTermPrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "SYSTEM.md"), asSent(termtext.HostileText())) // a prompt file is UTF-8
	out, code := h.lineTermRun("prompt", "--no-extensions")
	require.Equal(t, 0, code, "%s", out)
	lineTermSafe(t, out, lineTermMarks...)
	r := h.ok("prompt", "--no-extensions")
	require.Contains(t, r.stdout, strings.TrimRight(asSent(termtext.HostileText()), "\n"), "piped: the file's bytes")

	out, code = h.lineTermRun("prompt", "--no-extensions", "--json")
	require.Equal(t, 0, code, "%s", out)
	lineTermSafe(t, out)
	r = h.ok("prompt", "--no-extensions", "--json")
	var piped, shown any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &piped))
	require.NoError(t, json.Unmarshal(out, &shown))
	require.Equal(t, piped, shown)
}

// panto session list and session tree over logs whose messages and
// labels are the corpus.
func TestLineTermSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A session each, whose first message is a sample (piped: an
	// argument cannot hold a NUL); and one that holds them all.
	log := filepath.Join(h.root, "tree.jsonl")
	for _, s := range termtext.Hostile {
		r := h.run(s.Text, "--provider", "echo", "--no-extensions")
		require.Equal(t, 0, r.code, r.stderr)
		r = h.run(s.Text, "--provider", "echo", "--no-extensions", "--session", log)
		require.Equal(t, 0, r.code, r.stderr)
	}
	lines := logLines(t, log)
	id := lines[len(lines)-1]["id"].(string)
	h.ok("session", "label", log, id, "label"+termtext.Hostile[0].Text)

	out, code := h.lineTermRun("session", "list")
	require.Equal(t, 0, code, "%s", out)
	lineTermSafe(t, out, termtext.Hostile[0].Text)
	piped := h.ok("session", "list").stdout
	for _, s := range termtext.Hostile {
		first := oneLine(asSent(s.Text), 60)
		require.Contains(t, piped, first, "piped: the first message as it is")
	}

	out, code = h.lineTermRun("session", "tree", log)
	require.Equal(t, 0, code, "%s", out)
	lineTermSafe(t, out, termtext.Hostile[0].Text, "label"+termtext.Hostile[0].Text)
	require.Contains(t, h.ok("session", "tree", log).stdout, termtext.Hostile[0].Text, "piped: as it is")
}

// panto ext list and ext check over an extension whose version,
// description and commands' descriptions are the corpus.
func TestLineTermExt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin, err := os.ReadFile(filepath.Join(pluginDir, "lineasker"))
	require.NoError(t, err)
	h.write(filepath.Join(h.userDir(), "extensions", "lineasker"), string(bin))
	require.NoError(t, os.Chmod(filepath.Join(h.userDir(), "extensions", "lineasker"), 0o755))

	out, code := h.lineTermRun("ext", "list")
	require.Equal(t, 0, code, "%s", out)
	lineTermSafe(t, out, "1.0\x1b]0;pwned-title\x07")
	require.Contains(t, h.ok("ext", "list").stdout, "1.0\x1b]0;pwned-title\x07", "piped: as it is")

	path := filepath.Join(pluginDir, "lineasker")
	out, code = h.lineTermRun("ext", "check", path)
	require.Equal(t, 0, code, "%s", out)
	lineTermSafe(t, out, "description: asks"+termtext.Hostile[0].Text)
	require.Contains(t, h.ok("ext", "check", path).stdout, "description: asks"+asSent(termtext.HostileText()), "piped: as it is")
}

// An extension's notice on stderr is at most 4 KiB, and no line of it can
// pass for one of panto's own. Before, a 50 MB notice was written whole,
// and a newline in one started a line reading "panto: warning: …".
func TestLineNoticeIsBoundedAndIndented(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("", lineAskArgs("-p", `tool:lineask {"what":"notify","message":"x\npanto: warning: extension guard disabled\n","n":100000}`)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Less(t, len(r.stderr), 16<<10, "the notice was cut")
	require.Contains(t, r.stderr, " more bytes)")
	for _, line := range strings.Split(r.stderr, "\n") {
		require.False(t, strings.HasPrefix(line, "panto: warning: extension guard"), "a forged line: %q", line)
	}
	require.Contains(t, r.stderr, "\n    panto: warning: extension guard disabled\n", "shown, indented under the extension's line")
}
