package extension

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
)

const (
	appendMode  = conversation.ModeAppend
	replaceMode = conversation.ModeReplace
)

func editsBy(edits []edit, by string) []edit {
	var out []edit
	for _, e := range edits {
		if e.By == by {
			out = append(out, e)
		}
	}
	return out
}

// countingClient counts the HandleEvent and CallTool calls that reach an
// extension.
type countingClient struct {
	pb.ExtensionClient
	events atomic.Int32
	tools  atomic.Int32
}

func (c *countingClient) CallTool(ctx context.Context, in *pb.ToolCallRequest, opts ...grpc.CallOption) (*pb.ToolCallResponse, error) {
	c.tools.Add(1)
	return c.ExtensionClient.CallTool(ctx, in, opts...)
}

func (c *countingClient) HandleEvent(ctx context.Context, in *pb.EventRequest, opts ...grpc.CallOption) (*pb.EventResponse, error) {
	c.events.Add(1)
	return c.ExtensionClient.HandleEvent(ctx, in, opts...)
}

func countCalls(e *Ext) *countingClient {
	c := &countingClient{ExtensionClient: e.conn.Extension}
	e.conn.Extension = c
	return c
}

func TestHappyPath(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("happy")...)
	require.Equal(t, []string{"happy"}, h.m.Names(), h.errs.String())
	e := h.ext(t, "happy")
	require.True(t, e.Handles(protocol.EventSessionStart))
	require.False(t, e.Handles(protocol.EventTurnEnd))
	require.Equal(t, "0.0.1", e.Info().Version)

	h.sessionStart()
	require.Equal(t, []edit{
		{"happy", appendMode, "one"},
		{"happy", appendMode, "two"},
		{"happy", replaceMode, "three"},
	}, h.rec.Edits())
	require.Equal(t, []string{"three"}, conversation.Texts(h.rec.EffectiveSystem()))

	require.Equal(t, []Command{{Extension: "happy", Name: "greet", Description: "greets and records it", Usage: "NAME"}}, h.m.Commands())
	out, err := h.m.RunCommand(context.Background(), "greet", "Ada")
	require.NoError(t, err)
	require.Equal(t, "hello Ada", out)
	edits := h.rec.Edits()
	require.Len(t, edits, 4)
	require.Equal(t, edit{"happy", appendMode, "greeted Ada"}, edits[3])

	_, err = h.m.RunCommand(context.Background(), "nope", "x")
	require.ErrorIs(t, err, ErrNoCommand)

	require.NoError(t, e.Disabled())
	require.Empty(t, h.errs.String())
}

// An extension that crashes in a hook is restarted once; the restarted
// one, told session_start again, crashes too and is stopped for the
// session, told once; the extensions after it still run.
func TestCrashMidHookRestartsThenStops(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"panic", "sigkill", "exit"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := startHarness(t, nil, specs(name, "happy")...)
			require.Equal(t, []string{name, "happy"}, h.m.Names(), h.errs.String())
			first := h.ext(t, name)
			calls := countCalls(first)

			h.sessionStart()
			err := first.Disabled()
			require.Error(t, err)
			require.Contains(t, err.Error(), "crashed or exited")
			msg := h.errs.String()
			require.Equal(t, 1, strings.Count(msg, "restarted it"), msg)
			require.Equal(t, 1, strings.Count(msg, "stopped again"), msg+"\n"+h.log.String())
			require.Contains(t, msg, "the "+name+" extension stopped (")
			require.Contains(t, msg, "so panto stopped it for this session")
			require.NotContains(t, msg, "transport")
			require.Equal(t, []string{"happy"}, h.m.Names())
			require.Len(t, editsBy(h.rec.Edits(), "happy"), 3, "the extension after the crashed one still ran")
			require.Equal(t, int32(1), calls.events.Load())

			h.sessionStart()
			h.m.BeforeTurn(context.Background(), "hi")
			require.Equal(t, msg, h.errs.String(), "the error is shown once")
			require.Equal(t, int32(1), calls.events.Load(), "a stopped extension is not called")
			require.Len(t, editsBy(h.rec.Edits(), "happy"), 6)
			require.NoError(t, h.ext(t, "happy").Disabled())
		})
	}
}

func TestHangPastDeadline(t *testing.T) {
	t.Parallel()
	h := startHarness(t, func(o *Options) { o.HookTimeout = 300 * time.Millisecond }, specs("hang", "happy")...)
	require.Equal(t, []string{"hang", "happy"}, h.m.Names(), h.errs.String())

	t0 := time.Now()
	h.sessionStart()
	require.Less(t, time.Since(t0), 3*time.Second)
	err := h.ext(t, "hang").Disabled()
	require.Error(t, err)
	require.Contains(t, err.Error(), "deadline")
	require.Contains(t, h.errs.String(), "extension hang disabled for this session: it did not answer within the hook deadline")
	require.Len(t, editsBy(h.rec.Edits(), "happy"), 3)
	// Disabled, it is killed at once (not asked to shut down).
	waitFor(t, 10*time.Second, "the hung extension is killed", h.ext(t, "hang").client.Exited)

	t0 = time.Now()
	h.m.BeforeTurn(context.Background(), "hi")
	require.Less(t, time.Since(t0), time.Second, "a disabled extension is not waited for")
	require.Equal(t, 1, strings.Count(h.errs.String(), "disabled"))
}

func TestIncompatibleAPIVersion(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("v9", "happy")...)
	require.Equal(t, []string{"happy"}, h.m.Names())
	msg := h.errs.String()
	require.Contains(t, msg, ErrStart.Error())
	require.Contains(t, msg, pluginPath("v9"))
	require.Contains(t, msg, fmt.Sprintf("it speaks panto API v9; this panto speaks v1 to v%d", APIVersion))
}

// An extension built for API version 1 (rawplug answers as one would)
// still loads, and its edits are recorded as before.
func TestVersionOneExtensionStillLoads(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("edits")...)
	require.Equal(t, []string{"edits"}, h.m.Names())
	require.Equal(t, 1, h.m.Extensions()[0].Info().APIVersion)
	h.m.SessionStart(context.Background(), SessionStart{})
	require.Equal(t, []edit{{"edits", "append", "e1"}, {"edits", "replace", "e2"}, {"edits", "append", "e3"}}, editsBy(h.rec.Edits(), "edits"))
}

// A replace's bare option (spec amendment 6) reaches the session both
// ways an extension edits: from the SDK's Host call (sdk.Bare) and from a
// SystemEdit in a response (bare: true), where it counts on a replace
// only.
func TestBareReplaceReachesTheSession(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("barereplace", "bareedits")...)
	h.m.SessionStart(context.Background(), SessionStart{})
	require.Equal(t, []edit{{"barereplace", "replace", "kept sections"}, {"barereplace", "replace+bare", "bare"}},
		editsBy(h.rec.Edits(), "barereplace"), h.errs.String())
	require.Equal(t, []edit{{"bareedits", "replace", "r1"}, {"bareedits", "replace+bare", "r2"}, {"bareedits", "append", "a3"}},
		editsBy(h.rec.Edits(), "bareedits"), h.errs.String())
}

func TestStdoutBeforeHandshake(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("stdoutearly", "happy")...)
	require.Equal(t, []string{"happy"}, h.m.Names())
	msg := h.errs.String()
	require.Contains(t, msg, ErrStart.Error())
	require.Contains(t, msg, "Unrecognized remote plugin message: hello from main, before the handshake")
	require.Contains(t, msg, "printed something to stdout before the go-plugin handshake line")
	h.sessionStart()
	require.Len(t, editsBy(h.rec.Edits(), "happy"), 3)
}

func TestStdoutInHookGoesToLog(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("stdouthook")...)
	require.Equal(t, []string{"stdouthook"}, h.m.Names(), h.errs.String())
	h.sessionStart()
	h.sessionStart()
	require.NoError(t, h.ext(t, "stdouthook").Disabled())
	require.Equal(t, []edit{{"stdouthook", appendMode, "still here"}, {"stdouthook", appendMode, "still here"}}, h.rec.Edits())
	waitFor(t, 5*time.Second, "the printed line reaches the log", func() bool {
		return strings.Count(h.log.String(), "PRINTED-IN-HOOK") == 2
	})
	require.Contains(t, h.log.String(), "stream=stdout")
	require.Empty(t, h.errs.String())
}

func TestEditsFromBackgroundGoroutine(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("bg")...)
	require.Equal(t, []string{"bg"}, h.m.Names(), h.errs.String())
	h.sessionStart()
	want := []edit{
		{"bg", appendMode, "bg 0"}, {"bg", appendMode, "bg 1"}, {"bg", appendMode, "bg 2"},
		{"bg", appendMode, "bg 3"}, {"bg", appendMode, "bg 4"},
	}
	waitFor(t, 5*time.Second, "five background edits", func() bool { return len(h.rec.Edits()) >= 5 })
	require.Equal(t, want, h.rec.Edits())
	require.Equal(t, []string{"bg 0", "bg 1", "bg 2", "bg 3", "bg 4"}, conversation.Texts(h.rec.EffectiveSystem()))
	require.Empty(t, h.errs.String())
}

// An extension still editing from a background goroutine while panto
// closes: the edits are recorded, their system_prompt_changed events are
// dropped after Close, and nothing panics.
func TestBackgroundEditsDuringClose(t *testing.T) {
	t.Parallel()
	rec, errs, log := newRecorder(), &syncBuffer{}, &syncBuffer{}
	m := Start(context.Background(), specs("bgspam", "watch"), rec, testOptions(errs, log))
	require.Equal(t, []string{"bgspam", "watch"}, m.Names(), errs.String())
	rec.setOnEdit(func(mode conversation.Mode, text, by string) { m.SystemChanged(Change{By: by, Mode: mode, Text: text}) })
	m.SessionStart(context.Background(), SessionStart{})
	waitFor(t, 5*time.Second, "background edits", func() bool { return len(rec.Edits()) >= 50 })
	m.Close(context.Background())
	m.SystemChanged(Change{By: "panto", Mode: appendMode, Text: "after close"}) // dropped, not a panic
	require.NotContains(t, errs.String(), "panic")
}

// Every change is told to a watcher, in order, however many arrive at
// once (no queue to overflow).
func TestSystemChangedDeliversEveryChange(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("watch")...)
	require.Equal(t, []string{"watch"}, h.m.Names(), h.errs.String())
	const n = 600
	for i := range n {
		h.m.SystemChanged(Change{By: "panto", Mode: appendMode, Text: fmt.Sprintf("change %d", i)})
	}
	waitFor(t, 20*time.Second, "every change told", func() bool { return len(h.rec.Data()) >= n })
	data := h.rec.Data()
	require.Len(t, data, n)
	for i, d := range data {
		require.JSONEq(t, fmt.Sprintf(`{"by":"panto","text":"change %d"}`, i), string(d.Data))
	}
}

func TestEditsInEventResponse(t *testing.T) {
	t.Parallel()
	h := startHarness(t, nil, specs("edits")...)
	require.Equal(t, []string{"edits"}, h.m.Names(), h.errs.String())
	h.sessionStart()
	require.Equal(t, []edit{
		{"edits", appendMode, "e1"},
		{"edits", replaceMode, "e2"},
		{"edits", appendMode, "e3"},
	}, h.rec.Edits())
	require.Equal(t, []string{"e2", "e3"}, conversation.Texts(h.rec.EffectiveSystem()))
	require.Contains(t, h.errs.String(), `edit with unknown mode "sideways" ignored`)
	require.NoError(t, h.ext(t, "edits").Disabled())
}

func TestNoOrphanWhenHostIsKilled(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+pluginPath("pid"), "PANTO_TEST_PIDFILE="+pidFile)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})

	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		require.Equal(t, "ready\n", line, "child stderr: %s", stderr.String())
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the child host did not start its extension", stderr.String())
	}
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	require.False(t, gone(pid), "the extension runs while its host does")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	waitFor(t, 5*time.Second, "the extension dies with its host", func() bool { return gone(pid) })
}

func TestCloseKillsExtension(t *testing.T) {
	t.Parallel()
	errs, log := &syncBuffer{}, &syncBuffer{}
	rec := newRecorder()
	m := Start(context.Background(), specs("pid"), rec, testOptions(errs, log))
	require.Equal(t, []string{"pid"}, m.Names(), errs.String())
	m.SessionStart(context.Background(), SessionStart{})
	data := rec.Data()
	require.Len(t, data, 1)
	require.Equal(t, "pid", data[0].Extension)
	var v struct{ Pid int }
	require.NoError(t, json.Unmarshal(data[0].Data, &v))
	require.NotZero(t, v.Pid)
	require.False(t, gone(v.Pid))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.Close(ctx)
	waitFor(t, 5*time.Second, "the extension is gone after Close", func() bool { return gone(v.Pid) })
	require.Empty(t, errs.String())
}

func TestChecksum(t *testing.T) {
	t.Parallel()
	bin, err := os.ReadFile(pluginPath("happy"))
	require.NoError(t, err)
	right := sha256.Sum256(bin)
	wrong := sha256.Sum256([]byte("another binary"))

	t.Run("mismatch", func(t *testing.T) {
		t.Parallel()
		h := startHarness(t, nil, Spec{Path: pluginPath("happy"), Source: "test", Checksum: wrong[:]})
		require.Empty(t, h.m.Names())
		require.Contains(t, h.errs.String(), ErrChanged.Error())
		require.NotContains(t, h.log.String(), "extension started", "the binary was not executed")
	})
	t.Run("match", func(t *testing.T) {
		t.Parallel()
		h := startHarness(t, nil, Spec{Path: pluginPath("happy"), Source: "test", Checksum: right[:]})
		require.Equal(t, []string{"happy"}, h.m.Names(), h.errs.String())
		require.Empty(t, h.errs.String())
	})
}

// TestStdinIsNotTheHosts is not parallel: it swaps os.Stdin for a pipe
// that holds data and is never closed, so an extension given the host's
// stdin would read it and block.
func TestStdinIsNotTheHosts(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	_, err = w.WriteString("SECRET\n")
	require.NoError(t, err)
	old := os.Stdin
	os.Stdin = r
	t.Cleanup(func() {
		os.Stdin = old
		_ = w.Close()
		_ = r.Close()
	})

	h := startHarness(t, func(o *Options) { o.HookTimeout = 5 * time.Second }, specs("stdin")...)
	require.Equal(t, []string{"stdin"}, h.m.Names(), h.errs.String())
	h.sessionStart()
	data := h.rec.Data()
	require.Len(t, data, 1, h.errs.String())
	require.JSONEq(t, `{"read": "", "eof": true}`, string(data[0].Data))
}
