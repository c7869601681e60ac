package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

var sdkplug struct {
	sync.Once
	path string
	err  error
}

// sdkPlugin builds host/extension's test extension sdkplug once and
// returns a symlink to it named name (its behaviour and its name).
func sdkPlugin(t *testing.T, name string) string {
	t.Helper()
	sdkplug.Do(func() {
		dir, err := os.MkdirTemp("", "panto-host-sdkplug")
		if err != nil {
			sdkplug.err = err
			return
		}
		sdkplug.path = filepath.Join(dir, "sdkplug")
		out, err := exec.Command("go", "build", "-o", sdkplug.path, "./extension/testdata/plugins/sdkplug").CombinedOutput()
		if err != nil {
			sdkplug.err = fmt.Errorf("build sdkplug: %v\n%s", err, out)
		}
	})
	require.NoError(t, sdkplug.err)
	link := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Symlink(sdkplug.path, link))
	return link
}

// A real extension's tool sends "starting" as progress and then ignores
// the user's interrupt: the front end saw the progress while the call
// ran (a ToolProgress between its ToolStart and ToolEnd), and what the
// log records as the call's result — what the model reads next turn —
// is that output, marked interrupted, not a bare "interrupted".
func TestInterruptedCallRecordsItsProgress(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	model := &script{replies: []conversation.Message{calls(use("c1", "sleep", `{"ignore":true,"progress":"starting\n"}`))}}
	s, err := Open(context.Background(), Config{
		Log: Log{Path: path}, CWD: t.TempDir(), Provider: model, ProviderName: "script", Model: Model{Name: "m1"},
		Prompt:     func(rules.Vars) (Prompt, error) { return Prompt{Blocks: []PromptBlock{{Text: "seed"}}}, nil },
		Extensions: []extension.Spec{{Path: sdkPlugin(t, "tools"), Source: "test"}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	events := s.Subscribe(t.Context())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, s.Turn(ctx, "go"))
	var kinds []string
	var progress ToolProgress
	for ev := range events {
		switch ev := ev.(type) {
		case ToolStart, ToolEnd:
			kinds = append(kinds, ev.Kind())
		case ToolProgress:
			kinds = append(kinds, ev.Kind())
			progress = ev
			cancel() // the user interrupts, having seen it
		}
		if _, ok := ev.(TurnEnd); ok {
			break
		}
	}
	require.Equal(t, []string{"tool_start", "tool_progress", "tool_end"}, kinds)
	require.Equal(t, ToolProgress{ID: "c1", Name: "sleep", Text: "starting\n", Tail: "starting\n", Elapsed: progress.Elapsed}, progress)
	require.Positive(t, progress.Elapsed)

	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	msgs := log.Messages()
	last := msgs[len(msgs)-1]
	require.Equal(t, conversation.RoleTool, last.Role)
	require.True(t, last.Content[0].IsError)
	require.Regexp(t, `^starting\n\[interrupted by the user after [0-9.]+m?s, while running; this is its output until then; `, last.Content[0].ResultText())
}

// streamer's tool "flood" sends n lines of progress at once, then
// "late" once the call has ended.
type streamer struct {
	s    *Session
	n    int
	done chan struct{}
}

func (r *streamer) Tools() []serializers.Tool                                     { return []serializers.Tool{{Name: "flood"}} }
func (r *streamer) NarrowTools(_ context.Context, _ int, names []string) []string { return names }
func (r *streamer) RunToolIn(ctx context.Context, call conversation.Block, _ *extension.Sandbox) extension.ToolRun {
	return extension.ToolRun{Result: r.RunTool(ctx, call)}
}

func (r *streamer) RunTool(_ context.Context, call conversation.Block) conversation.Block {
	rec := recorder{r.s}
	for i := range r.n {
		rec.ToolProgress("x", call.ID, fmt.Sprintf("line %d\n", i))
		if i%1000 == 0 {
			time.Sleep(60 * time.Millisecond)
		}
	}
	time.Sleep(150 * time.Millisecond)
	go func() {
		time.Sleep(50 * time.Millisecond)
		rec.ToolProgress("x", call.ID, "late\n") // after its ToolEnd
		rec.ToolProgress("x", "nosuch", "stray\n")
		close(r.done)
	}()
	return conversation.ToolResult(call.ID, "flooded", false)
}

// A flood of progress is a few events, at most one per 100 ms, each
// with the output since the last (at most 16 KiB of it) and the last 10
// lines; nothing of the call comes after its ToolEnd.
func TestToolProgressIsCoalesced(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{calls(use("f1", "flood", `{}`)), conversation.AssistantText("ok")}}
	s, _ := newSession(t, model)
	r := &streamer{s: s, n: 3000, done: make(chan struct{})}
	s.tools = r
	sub, stop := context.WithCancel(context.Background())
	defer stop()
	events := s.Subscribe(sub)
	require.NoError(t, s.Turn(context.Background(), "go"))
	var got []ToolProgress
	ended := false
	for ev := range events {
		switch ev := ev.(type) {
		case ToolProgress:
			require.False(t, ended, "a ToolProgress after the call's ToolEnd: %q", ev.Text)
			got = append(got, ev)
		case ToolEnd:
			ended = true
		}
		if _, ok := ev.(TurnEnd); ok {
			break
		}
	}
	<-r.done
	require.NotEmpty(t, got)
	require.LessOrEqual(t, len(got), 12, "3000 pieces in about 200 ms")
	var all strings.Builder
	for i, ev := range got {
		all.WriteString(ev.Text)
		if i > 0 {
			require.GreaterOrEqual(t, ev.Elapsed-got[i-1].Elapsed, 90*time.Millisecond, "one per 100 ms")
		}
	}
	require.True(t, strings.HasSuffix(all.String(), "line 2998\nline 2999\n"))
	require.LessOrEqual(t, len(got[len(got)-1].Text), maxProgressText)
	tail := got[len(got)-1].Tail
	require.Equal(t, 10, strings.Count(tail, "\n"), tail)
	require.True(t, strings.HasPrefix(tail, "line 2990\n"), tail)
}
