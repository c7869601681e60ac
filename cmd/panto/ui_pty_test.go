package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// uiRun is panto's full-screen UI under a pseudo-terminal; out is all it
// wrote, with a condition variable to wait on.
type uiRun struct {
	cmd   *exec.Cmd
	tty   *os.File
	start time.Time

	mu   sync.Mutex
	cond *sync.Cond
	out  bytes.Buffer
	eof  bool
}

// startUI starts panto full screen at cols×rows with the harness's
// environment (and TERM set, as a terminal's shell has it).
func (h *harness) startUI(cols, rows int, args ...string) *uiRun {
	h.t.Helper()
	cmd := exec.Command(pantoBin, args...)
	cmd.Dir = h.project
	cmd.Env = append(h.environ(), "TERM=xterm-256color")
	r := &uiRun{cmd: cmd}
	r.cond = sync.NewCond(&r.mu)
	r.start = time.Now()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	require.NoError(h.t, err)
	r.tty = tty
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			r.mu.Lock()
			r.out.Write(buf[:n])
			if err != nil {
				r.eof = true
			}
			r.cond.Broadcast()
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	h.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		tty.Close()
	})
	return r
}

// waitCount waits until the output holds s at least n times, and
// returns when that was; it fails after d.
func (r *uiRun) waitCount(t testing.TB, s string, n int, d time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer timer.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for bytes.Count(r.out.Bytes(), []byte(s)) < n {
		if r.eof || time.Now().After(deadline) {
			t.Fatalf("no %q (×%d) in the output after %s:\n%q", s, n, d, tail(r.out.String(), 3000))
		}
		r.cond.Wait()
	}
	return time.Now()
}

func (r *uiRun) waitFor(t testing.TB, s string) time.Time {
	return r.waitCount(t, s, 1, 15*time.Second)
}

func (r *uiRun) count(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Count(r.out.Bytes(), []byte(s))
}

func (r *uiRun) write(t testing.TB, s string) {
	t.Helper()
	_, err := r.tty.WriteString(s)
	require.NoError(t, err)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// installFirstParty puts the three first-party extensions (tools, env,
// context) in the harness's base layer, as make install does.
func (h *harness) installFirstParty() {
	h.t.Helper()
	buildFirstParty(h.t)
	dir := filepath.Join(h.baseDir(), "extensions")
	require.NoError(h.t, os.MkdirAll(dir, 0o755))
	for _, x := range []string{"tools", "env", "context"} {
		data, err := os.ReadFile(filepath.Join(pluginDir, x))
		require.NoError(h.t, err)
		require.NoError(h.t, os.WriteFile(filepath.Join(dir, x), data, 0o755))
	}
}

var firstParty struct {
	once sync.Once
	err  error
}

// buildFirstParty builds env and context next to tools (TestMain builds
// that one).
func buildFirstParty(t testing.TB) {
	firstParty.once.Do(func() {
		out, err := exec.Command("go", "build", "-o", pluginDir+"/", "../../extensions/env", "../../extensions/context").CombinedOutput()
		if err != nil {
			firstParty.err = fmt.Errorf("build env, context: %v\n%s", err, out)
		}
	})
	require.NoError(t, firstParty.err)
}

// slowProvider is an Anthropic endpoint that streams a long reply, one
// piece every gap, until n pieces or the client goes away. Each request
// is told on started.
func slowProvider(t testing.TB, n int, gap time.Duration, piece func(i int) string) (*httptest.Server, <-chan struct{}) {
	started := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		send := func(ev, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, data)
			w.(http.Flusher).Flush()
		}
		send("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		select {
		case started <- struct{}{}:
		default:
		}
		for i := range n {
			q, _ := json.Marshal(piece(i))
			send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`)
			select {
			case <-r.Context().Done():
				return
			case <-time.After(gap):
			}
		}
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":`+fmt.Sprint(n)+`}}`)
		send("message_stop", `{"type":"message_stop"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, started
}

// The colours follow the terminal's background: a terminal that answers
// the OSC 11 query with a light colour gets the light theme. The
// terminal here is an emulator (x/vt) whose answers go back to panto.
func TestUILightBackground(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		bg   color.Color
		bar  color.Color
	}{
		{"light", color.RGBA{0xff, 0xff, 0xf0, 0xff}, ansi.RGBColor{R: 0x7a, G: 0x3e, B: 0x9d}},
		{"dark", color.RGBA{0x10, 0x10, 0x10, 0xff}, ansi.RGBColor{R: 0xbb, G: 0x9a, B: 0xf7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			cmd := exec.Command(pantoBin, "--provider", "echo", "--no-session")
			cmd.Dir = h.project
			cmd.Env = append(h.environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
			tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
			require.NoError(t, err)
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); tty.Close() })
			emu := vt.NewSafeEmulator(80, 24)
			emu.SetDefaultBackgroundColor(tc.bg)
			go io.Copy(emu, tty) // panto -> screen
			go io.Copy(tty, emu) // the terminal's answers -> panto
			screen := func() string { return ansi.Strip(emu.Render()) }
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(screen(), "echo/echo") {
				require.True(t, time.Now().Before(deadline), "no frame:\n%s", screen())
				time.Sleep(10 * time.Millisecond)
			}
			tty.WriteString("hi\r")
			var bar color.Color
			for bar == nil {
				require.True(t, time.Now().Before(deadline), "no user message:\n%s", screen())
				time.Sleep(10 * time.Millisecond)
				for y := range 24 {
					if c := emu.CellAt(0, y); c != nil && c.Content == "▌" {
						bar = c.Style.Fg
					}
				}
			}
			r1, g1, b1, _ := bar.RGBA()
			r2, g2, b2, _ := tc.bar.RGBA()
			require.Equal(t, [3]uint32{r2 >> 8, g2 >> 8, b2 >> 8}, [3]uint32{r1 >> 8, g1 >> 8, b1 >> 8}, "the %s theme's colour", tc.name)
			tty.WriteString("\x04")
		})
	}
}
