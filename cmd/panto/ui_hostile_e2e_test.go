package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// The full-screen UI against hostile text, end to end: the real panto
// binary under a pseudo-terminal, a terminal emulator (x/vt) drawing
// what it writes and answering its queries as a terminal does, and every
// byte panto wrote kept. Whatever surface outside text reaches — the
// model's reply and reasoning, tool output, a file name, prompt files,
// the extensions' texts, session logs, a model's name — none of the
// hostile corpus may reach the terminal raw (termtext.Leaks).

// uiHostileRun is panto full screen under a pty, with an emulator.
type uiHostileRun struct {
	t   *testing.T
	cmd *exec.Cmd
	tty *os.File
	emu *vt.SafeEmulator

	mu   sync.Mutex
	raw  bytes.Buffer
	done chan struct{}
}

func uiHostileStart(t *testing.T, h *harness, env map[string]string, args ...string) *uiHostileRun {
	t.Helper()
	cmd := exec.Command(pantoBin, args...)
	cmd.Dir = h.project
	cmd.Env = append(h.environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 110, Rows: 34})
	require.NoError(t, err)
	r := &uiHostileRun{t: t, cmd: cmd, tty: tty, emu: vt.NewSafeEmulator(110, 34), done: make(chan struct{})}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				r.mu.Lock()
				r.raw.Write(buf[:n])
				r.mu.Unlock()
				r.emu.Write(buf[:n])
			}
			if err != nil {
				close(r.done)
				return
			}
		}
	}()
	go io.Copy(tty, r.emu) // the terminal's answers to panto's queries
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
		// The emulator is not closed: vt's Close races with the Read
		// the answers goroutine is blocked in.
	})
	return r
}

// screen is what the terminal shows.
func (r *uiHostileRun) screen() string { return ansi.Strip(r.emu.Render()) }

// wait waits until the screen holds want.
func (r *uiHostileRun) wait(want string) string {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := r.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the screen never showed %q:\n%s", want, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *uiHostileRun) keys(s string) {
	r.t.Helper()
	_, err := r.tty.WriteString(s)
	require.NoError(r.t, err)
	if s == keyEsc {
		// A lone ESC is told from the start of a sequence by time: what
		// comes with it in one read is Alt and a key.
		time.Sleep(300 * time.Millisecond)
		return
	}
	time.Sleep(60 * time.Millisecond)
}

// exit waits for panto to end.
func (r *uiHostileRun) exit() {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		r.t.Fatalf("panto did not quit:\n%s", r.screen())
	}
	r.cmd.Wait()
}

// requireNoLeak fails when any sample of the corpus reached the terminal
// as it was.
func (r *uiHostileRun) requireNoLeak() {
	r.t.Helper()
	r.mu.Lock()
	raw := append([]byte(nil), r.raw.Bytes()...)
	r.mu.Unlock()
	require.Greater(r.t, len(raw), 1000, "panto wrote a screen")
	if leaks := termtext.Leaks(raw); len(leaks) > 0 {
		r.t.Fatalf("reached the terminal raw: %v\nscreen:\n%s", leaks, r.screen())
	}
}

const (
	keyEsc   = "\x1b"
	keyPgUp  = "\x1b[5~"
	keyPgDn  = "\x1b[6~"
	keyDown  = "\x1b[B"
	keyUp    = "\x1b[A"
	keyCtrlO = "\x0f"
	keyCtrlU = "\x15"
	keyCtrlD = "\x04"
	keyCtrlC = "\x03"
)

// uiHostileReply is an Anthropic stream: reasoning, then text, then the
// tool calls.
func uiHostileReply(thinking, text string, calls ...toolCall) reply {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	pairs := []string{"message_start", `{"type":"message_start","message":{"id":"msg_h","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":` + q(thinking) + `}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":` + q(text) + `}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`}
	stop := "end_turn"
	for i, c := range calls {
		idx := fmt.Sprint(i + 2)
		pairs = append(pairs,
			"content_block_start", `{"type":"content_block_start","index":`+idx+`,"content_block":{"type":"tool_use","id":"`+c.id+`","name":"`+c.name+`","input":{}}}`,
			"content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":{"type":"input_json_delta","partial_json":`+q(c.input)+`}}`,
			"content_block_stop", `{"type":"content_block_stop","index":`+idx+`}`)
		stop = "tool_use"
	}
	pairs = append(pairs,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":9}}`,
		"message_stop", `{"type":"message_stop"}`)
	return reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(pairs...)}
}

// uiHostileTOML quotes s as a TOML basic string, its controls escaped.
func uiHostileTOML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fileSafe makes a sample a file name: no slash, no NUL.
func fileSafe(s string) string {
	return strings.NewReplacer("/", "_", "\x00", "0").Replace(s)
}

// Item 5 of issue 15: outside text reached the terminal raw in the
// full-screen UI — OSC 8, DCS, APC, C1 controls as UTF-8, bidi controls,
// a lone CR. Every surface here gets the whole corpus: the model's
// reasoning, reply and a link; a tool's call and output (the hostile
// extension's tool and bash printing a file); prompt files (SYSTEM.md,
// APPEND_SYSTEM.md, AGENTS.md) in the change lines, Ctrl-O and /prompt;
// the extension's notices, status segments, section, tool description,
// command usage and description (the palette, /help) and output, its
// confirm, select and input; the model's name (status line, /model);
// file names (@ completion); /session.
func TestUIHostileTextNeverReachesTheTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.installFirstParty()
	x := termtext.HostileText()
	xu := strings.ToValidUTF8(x, "?") // what a prompt file may hold
	model := uiHostileTOML(strings.ReplaceAll(strings.TrimSpace(xu), "\n", " "))
	// screen = "alt": every surface on screen, the transcript scrolled by
	// panto; the transcript printed on exit is checked with the rest
	// (requireNoLeak).
	h.write(filepath.Join(h.userDir(), "config.toml"), "screen = \"alt\"\nmodel = "+model+"\nmodels = ["+model+", \"other\"]\n")
	h.write(filepath.Join(h.userDir(), "APPEND_SYSTEM.md"), xu)
	h.write(filepath.Join(h.projectDir(), "SYSTEM.md"), xu)
	h.write(filepath.Join(h.project, "AGENTS.md"), xu)
	h.write(filepath.Join(h.project, "hostile.txt"), x)
	for i, s := range termtext.Hostile {
		h.write(filepath.Join(h.project, fmt.Sprintf("f%02d-%s", i, fileSafe(s.Text))), "x")
	}
	in, _ := json.Marshal(map[string]string{"x": x, x: x})
	fake := newFake(t,
		uiHostileReply(x, x+"\n[https://good.example/](https://evil.example/)\n",
			toolCall{"t1", "hostile", string(in)},
			toolCall{"t2", "bash", `{"command":"cat hostile.txt; printf 'a\\rb\\033]52;c;eA==\\007'"}`}),
		uiHostileReply(x, x+"\nthe end of the turn"))
	r := uiHostileStart(t, h, map[string]string{"ANTHROPIC_API_KEY": "k"},
		"--provider", "anthropic", "--base-url", fake.srv.URL, "--extension", filepath.Join(pluginDir, "uihostile"))
	r.wait("anthropic/")
	r.wait("Write a message")
	r.keys("go\r")
	r.wait("the end of the turn")
	for range 6 {
		r.keys(keyCtrlO)
		r.keys(keyPgUp)
	}
	for range 6 {
		r.keys(keyPgDn)
	}
	r.keys(keyEsc)
	for _, page := range []string{"/prompt", "/help"} {
		r.keys(page + "\r")
		r.wait(page + " ·")
		for range 8 {
			r.keys(keyPgDn)
		}
		r.keys("q")
	}
	r.keys("/")
	r.wait("commands · Enter runs")
	r.keys("hx")
	r.keys(keyCtrlU)
	r.keys("/hx\r")
	for _, want := range []string{"[y] yes", "↑↓ then Enter chooses", "Tab answers in the field"} {
		r.wait(want)
		for range 4 {
			r.keys(keyDown)
		}
		r.keys(keyEsc)
	}
	r.wait("/hx")
	r.keys("@f0")
	r.wait("files · Tab or Enter inserts")
	for range 3 {
		r.keys(keyDown)
	}
	r.keys("\t")
	r.keys(keyCtrlU)
	r.keys("/model\r")
	r.wait("Model")
	r.keys(keyEsc)
	r.keys("/session\r")
	r.wait("/session")
	r.keys(keyCtrlU + keyCtrlD)
	r.exit()
	r.requireNoLeak()
}

// The logs /resume lists and /tree draws are outside text too: a
// session's first message, its id's neighbours, its messages and a
// label, the prompt as of an entry — with every sample of the corpus,
// NUL and raw C1 bytes included, written into the log.
func TestUIHostileSessionLogs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := termtext.HostileText()
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), strings.ToValidUTF8(x, "?"))
	h.ok("-p", "an older session", "--provider", "echo")
	time.Sleep(1100 * time.Millisecond) // a newer session (names sort by second)
	h.ok("-p", strings.ReplaceAll(x, "\x00", ""), "--provider", "echo")
	var newest string
	for _, f := range h.sessionFiles() {
		if newest == "" || f > newest {
			newest = f
		}
	}
	w, _, err := sessionlog.Open(newest)
	require.NoError(t, err)
	_, err = w.Append(sessionlog.MessageEntry(conversation.UserText(x)))
	require.NoError(t, err)
	reply, err := w.Append(sessionlog.MessageEntry(conversation.AssistantText(x + "\x9b2Jc1r")))
	require.NoError(t, err)
	_, err = w.Append(sessionlog.LabelEntry(reply[0].ID, strings.ReplaceAll(strings.TrimSpace(x), "\n", " ")))
	require.NoError(t, err)
	_, err = w.Append(sessionlog.MessageEntry(conversation.SystemMessage(x, conversation.ModeAppend).WithSource("extension " + x)))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	r := uiHostileStart(t, h, nil, "--provider", "echo", "-c")
	r.wait("resumed: ")
	r.wait("echo/echo")
	for range 8 {
		r.keys(keyCtrlO)
		r.keys(keyPgUp)
	}
	r.keys(keyEsc)
	r.keys("/resume\r")
	r.wait("Sessions in ")
	r.keys(keyDown)
	r.keys(keyUp)
	r.keys(keyEsc)
	r.keys("/tree\r")
	r.wait("/tree · ")
	for range 8 {
		r.keys(keyUp)
		time.Sleep(100 * time.Millisecond) // the prompt pane reads the log
	}
	r.keys("p")
	r.keys(keyPgDn)
	r.keys("q")
	r.keys(keyEsc)
	r.keys(keyCtrlU + keyCtrlD)
	r.exit()
	r.requireNoLeak()
}

// Item 10 of issue 15: a bracketed paste holding "\e[201~" and a CR sent
// messages by itself. Written in one write, as a terminal pastes, it is
// one paste: in the editor, nothing sent.
func TestUIPasteHoldingItsEndMarkerSendsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := uiHostileStart(t, h, nil, "--provider", "echo")
	r.wait("echo/echo")
	r.keys("\x1b[200~hello\x1b[201~\rrm -rf ~\r\x1b[201~")
	s := r.wait("rm -rf ~")
	require.Contains(t, s, "❯ hello␛[201~", "the paste, whole, in the editor")
	time.Sleep(500 * time.Millisecond)
	require.NotContains(t, r.screen(), "you said", "nothing was sent")
	r.keys(keyCtrlC)
	r.keys(keyCtrlC)
	r.keys(keyCtrlC)
	r.exit()
	for _, f := range h.sessionFiles() {
		for _, l := range logLines(t, f) {
			msg, _ := l["message"].(map[string]any)
			require.NotEqual(t, "user", msg["role"], "no message was recorded: %v", l)
		}
	}
}

// Item 10 of issue 15: a symbolic link at the history file's path was
// written through. It is refused with a notice; the file it points to
// stays as it was, and the session goes on.
func TestUIHistoryLinkIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	target := filepath.Join(h.home, ".bashrc")
	h.write(target, "# mine\n")
	cwd, err := filepath.EvalSymlinks(h.project)
	require.NoError(t, err)
	for _, p := range []string{h.project, cwd} {
		link := history.Path(filepath.Join(h.home, "state", "panto"), p)
		require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o700))
		if _, err := os.Lstat(link); err != nil {
			require.NoError(t, os.Symlink(target, link))
		}
	}
	r := uiHostileStart(t, h, nil, "--provider", "echo")
	r.wait("echo/echo")
	r.keys("echo pwned >> ~/.bashrc\r")
	r.wait(`you said "echo pwned >> ~/.bashrc"`)
	s := strings.Join(strings.Fields(r.screen()), " ")
	require.Contains(t, s, "not a regular file (a symbolic link is not followed)")
	r.keys(keyCtrlD)
	r.exit()
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "# mine\n", string(data), "nothing written through the link")
}

// uiHostileRSS is the resident memory of a process, in KiB.
func uiHostileRSS(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// Item 9 of issue 15: a Notify flood grew panto's memory for good (~2
// MB/s). A hundred and fifty thousand notices later, panto's resident
// memory is what it was ten thousand into the flood, give or take the
// noise of a garbage collector.
func TestUINoticeFloodKeepsMemoryFlat(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env["PANTO_LOG_LEVEL"] = "off"
	r := uiHostileStart(t, h, map[string]string{"PANTO_UIHOSTILE": "flood", "PANTO_UIHOSTILE_N": "150000"},
		"--provider", "echo", "--no-session", "--extension", filepath.Join(pluginDir, "uihostile"))
	pid := r.cmd.Process.Pid
	number := regexp.MustCompile(`flood notice (\d+)`)
	deadline := time.Now().Add(90 * time.Second)
	early := 0
	for early == 0 {
		s := r.screen()
		if strings.Contains(s, "flood done") {
			t.Skip("the flood was over before it could be measured")
		}
		for _, m := range number.FindAllStringSubmatch(s, -1) {
			if n, _ := strconv.Atoi(m[1]); n >= 10000 {
				early = uiHostileRSS(t, pid)
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "the flood never came:\n%s", s)
		time.Sleep(5 * time.Millisecond)
	}
	for !strings.Contains(r.screen(), "flood done") {
		require.True(t, time.Now().Before(deadline), "the flood never ended:\n%s", r.screen())
		time.Sleep(50 * time.Millisecond)
	}
	late := uiHostileRSS(t, pid)
	t.Logf("RSS %d KiB ten thousand notices into the flood, %d KiB after 150,000", early, late)
	r.keys(keyCtrlD)
	r.exit()
	require.Less(t, late-early, 16<<10, "the flood grew panto's memory by %d KiB", late-early)
}
