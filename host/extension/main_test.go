package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/testio"

	"github.com/panto-dev/panto/conversation"
)

// pluginDir holds the test plugins built by TestMain and their symlinks.
var pluginDir string

// childEnv makes the test binary act as a panto host that starts the
// extension at the path it names, then waits to be killed (TestNoOrphan).
const childEnv = "PANTO_EXT_TEST_CHILD"

// names a test or benchmark runs the plugins under: the part before "-"
// picks the behaviour (see testdata/plugins), the whole is the name.
var sdkNames = []string{
	"happy", "panic", "sigkill", "exit", "hang", "stdoutearly", "stdouthook",
	"bg", "bgspam", "watch", "pid", "stdin", "bench-hook",
	"tools", "tools-b", "barereplace", "restart",
	"badtool-name", "badtool-long", "badtool-empty", "badtool-json", "badtool-array", "badtool-type", "badtool-dup",
}

// names stopplug runs under (see testdata/plugins/stopplug).
var stopNames = []string{
	"calm", "stubborn", "bare", "bare-badtool", "initsleep", "late-initsleep", "initcrash", "bigout", "env",
}

const benchCopies = 10

func TestMain(m *testing.M) {
	if p := os.Getenv(childEnv); p != "" {
		os.Exit(runChild(p))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "panto-ext-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pluginDir = dir
	if err := buildPlugins(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func buildPlugins(dir string) error {
	var wg sync.WaitGroup
	plugins := []string{"sdkplug", "rawplug", "stopplug"}
	errs := make([]error, len(plugins))
	for i, name := range plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./testdata/plugins/"+name)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("build %s: %v\n%s", name, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	links := map[string]string{"v9": "rawplug", "edits": "rawplug", "bareedits": "rawplug"}
	for _, n := range sdkNames {
		links[n] = "sdkplug"
	}
	for _, n := range stopNames {
		links[n] = "stopplug"
	}
	for i := range benchCopies {
		links[fmt.Sprintf("bench-%d", i)] = "sdkplug"
	}
	for link, target := range links {
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, link)); err != nil {
			return err
		}
	}
	return nil
}

// runChild is the child of TestNoOrphan: a host that starts one extension
// and waits to be SIGKILLed.
func runChild(path string) int {
	m := Start(context.Background(), []Spec{{Path: path, Source: "child"}}, newRecorder(), Options{Report: reportTo(os.Stderr), StartTimeout: 10 * time.Second})
	if len(m.Extensions()) != 1 {
		return 2
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	return 3
}

// pluginPath returns the path of a test plugin by the name it runs under.
func pluginPath(name string) string { return filepath.Join(pluginDir, name) }

func specs(names ...string) []Spec {
	out := make([]Spec, len(names))
	for i, n := range names {
		out[i] = Spec{Path: pluginPath(n), Source: "test"}
	}
	return out
}

// edit is one EditSystem call.
type edit struct {
	By   string
	Mode conversation.Mode
	Text string
}

type dataEntry struct {
	Extension string
	Data      json.RawMessage
}

// recorder is a fake session: it records in call order.
type recorder struct {
	mu    sync.Mutex
	edits []edit
	msgs  []conversation.Message
	data  []dataEntry
	// answer, when set, answers the questions extensions ask; told keeps
	// their notices and status segments.
	answer func(ctx context.Context, by string, q Question) (Answer, error)
	told   []string
	// onEdit, when set, is told of each edit after it is recorded, as
	// the session's OnSystemChange is (Manager.SystemChanged).
	onEdit func(mode conversation.Mode, text, by string)
}

var _ Recorder = (*recorder)(nil)

func newRecorder() *recorder { return &recorder{} }

// EditSystem records the edit; a bare replace's Mode in Edits is
// "replace+bare".
func (r *recorder) EditSystem(by string, e Edit) error {
	mode, text := e.Mode, e.Text
	shown := mode
	if e.Bare {
		shown += "+bare"
	}
	r.mu.Lock()
	r.edits = append(r.edits, edit{by, shown, text})
	r.msgs = append(r.msgs, conversation.SystemMessage(text, mode))
	onEdit := r.onEdit
	r.mu.Unlock()
	if onEdit != nil {
		onEdit(mode, text, by)
	}
	return nil
}

// SetSection records a section edit as an edit in append mode whose text
// is "key=text", so tests see it in Edits.
func (r *recorder) SetSection(by, key, text string) error {
	r.mu.Lock()
	full := by + ":" + key
	for _, b := range conversation.EffectiveSystem(r.msgs) {
		if b.Key == full && b.Text == text {
			r.mu.Unlock()
			return nil
		}
	}
	r.edits = append(r.edits, edit{by, conversation.ModeAppend, key + "=" + text})
	r.msgs = append(r.msgs, conversation.KeyedSystemMessage(full, text))
	r.mu.Unlock()
	return nil
}

func (r *recorder) Sections(by string) []Section {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Section
	for _, b := range conversation.EffectiveSystem(r.msgs) {
		if k, ok := strings.CutPrefix(b.Key, by+":"); ok {
			out = append(out, Section{Key: k, Text: b.Text})
		}
	}
	return out
}

// Ask answers with the recorder's answer func, or ErrNoUser.
func (r *recorder) Ask(ctx context.Context, by string, q Question) (Answer, error) {
	r.mu.Lock()
	f := r.answer
	r.mu.Unlock()
	if f == nil {
		return Answer{}, ErrNoUser
	}
	return f(ctx, by, q)
}

func (r *recorder) Notify(by, level, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told = append(r.told, by+":"+level+":"+text)
}

func (r *recorder) SetStatus(by, key, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told = append(r.told, by+":status:"+key+"="+text)
}

// ToolProgress keeps a piece of a call's progress in told:
// "BY:progress:CALL=TEXT".
func (r *recorder) ToolProgress(by, id, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told = append(r.told, by+":progress:"+id+"="+text)
}

var _ ProgressRecorder = (*recorder)(nil)

// DisposeSections records the removals as edits by panto: "key=".
func (r *recorder) DisposeSections(owner, why string) error {
	for _, sec := range r.Sections(owner) {
		r.mu.Lock()
		r.edits = append(r.edits, edit{"panto", conversation.ModeAppend, owner + ":" + sec.Key + "="})
		r.msgs = append(r.msgs, conversation.KeyedSystemMessage(owner+":"+sec.Key, ""))
		r.mu.Unlock()
	}
	return nil
}

func (r *recorder) setOnEdit(f func(mode conversation.Mode, text, by string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onEdit = f
}

func (r *recorder) EffectiveSystem() []conversation.SystemText {
	return conversation.EffectiveSystem(r.Messages())
}

func (r *recorder) Messages() []conversation.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]conversation.Message(nil), r.msgs...)
}

func (r *recorder) AppendData(extension string, data json.RawMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data = append(r.data, dataEntry{extension, append(json.RawMessage(nil), data...)})
	return nil
}

func (r *recorder) Edits() []edit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]edit(nil), r.edits...)
}

func (r *recorder) Data() []dataEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]dataEntry(nil), r.data...)
}

// syncBuffer is safe to read while another goroutine writes to it.
type syncBuffer = testio.SyncBuffer

// harness is a Manager over real plugin processes with a fake session.
type harness struct {
	m    *Manager
	rec  *recorder
	errs *syncBuffer
	log  *syncBuffer
}

func testOptions(errs, log *syncBuffer) Options {
	return Options{
		Report: reportTo(errs),
		// Small, yet with room for a loaded machine: only the hang test
		// relies on it expiring (and sets its own).
		HookTimeout:  time.Second,
		StartTimeout: 10 * time.Second,
		Logger:       hclog.New(&hclog.LoggerOptions{Name: "panto", Output: log, Level: hclog.Trace}),
	}
}

// startHarness runs Start on specs; tweak may change the options. The Manager is
// closed when the test ends.
func startHarness(t testing.TB, tweak func(*Options), sp ...Spec) *harness {
	t.Helper()
	h := &harness{rec: newRecorder(), errs: &syncBuffer{}, log: &syncBuffer{}}
	opts := testOptions(h.errs, h.log)
	if tweak != nil {
		tweak(&opts)
	}
	h.m = Start(context.Background(), sp, h.rec, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.m.Close(ctx)
	})
	return h
}

func (h *harness) ext(t testing.TB, name string) *Ext {
	t.Helper()
	for _, e := range h.m.Extensions() {
		if e.Name() == name {
			return e
		}
	}
	require.FailNowf(t, "extension not loaded", "%s; loaded %v; errors: %s", name, h.m.Names(), h.errs.String())
	return nil
}

func (h *harness) sessionStart() {
	h.m.SessionStart(context.Background(), SessionStart{SessionID: "test-session"})
}

// waitFor polls cond for up to d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, d, 10*time.Millisecond, what)
}

// reportTo writes each reported failure to w as the CLI shows it.
func reportTo(w io.Writer) func(error) {
	return func(err error) { fmt.Fprintf(w, "panto: %v\n", err) }
}
