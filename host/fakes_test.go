package host

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// writeLog writes a log holding msgs, one entry each, and returns its
// path.
func writeLog(t *testing.T, msgs ...conversation.Message) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/p"})
	require.NoError(t, err)
	for _, m := range msgs {
		_, err := w.Append(sessionlog.MessageEntry(m))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return path
}

// config is a session's Config on the log at path, its prompt the blocks
// given (the seed first), its model a script that answers nothing.
func config(path string, blocks ...string) Config {
	var p Prompt
	for i, b := range blocks {
		p.Blocks = append(p.Blocks, PromptBlock{Text: b, Source: fmt.Sprint("block ", i+1)})
	}
	return Config{
		Log: Log{Path: path}, CWD: "/p", Provider: &script{}, ProviderName: "script", Model: Model{Name: "m1"},
		Prompt: func(rules.Vars) (Prompt, error) { return p, nil },
	}
}

// closeAndRead closes s and returns what its first subscription got, from
// the start of Open to the end of Close.
func closeAndRead(t *testing.T, s *Session) []Event {
	t.Helper()
	events := s.Subscribe(t.Context())
	require.NoError(t, s.Close(context.Background()))
	var out []Event
	for ev := range events {
		out = append(out, ev)
	}
	return out
}

// fakeExtensions stands in for the extension manager (extensionSet): a
// func field per method, nil for "nothing" (the shape of
// terraform-plugin-go's test fakes). rec is the session's recorder, as
// the manager would hold it.
type fakeExtensions struct {
	rec   extension.Recorder
	names []string

	beforeTurn     func(ctx context.Context, rec extension.Recorder, userText string)
	recordGuidance func(rec extension.Recorder)
	sessionStart   func(ctx context.Context, rec extension.Recorder, ev extension.SessionStart)
	afterMove      func(ctx context.Context, rec extension.Recorder, mv extension.Move)
	sessionEnd     func(ctx context.Context, rec extension.Recorder)
	runTool        func(ctx context.Context, call conversation.Block) conversation.Block
	runToolIn      func(ctx context.Context, call conversation.Block, sb *extension.Sandbox) extension.ToolRun
	tools          []serializers.Tool
	changes        []extension.Change
	closed         bool
}

var _ extensionSet = (*fakeExtensions)(nil)

// start is a Config.startExtensions that starts f.
func (f *fakeExtensions) start(_ context.Context, _ []extension.Spec, rec extension.Recorder, _ extension.Options) extensionSet {
	f.rec = rec
	return f
}

func (f *fakeExtensions) BeforeTurn(ctx context.Context, userText string) {
	if f.beforeTurn != nil {
		f.beforeTurn(ctx, f.rec, userText)
	}
}
func (f *fakeExtensions) TurnEnd(context.Context, conversation.Message, string) {}
func (f *fakeExtensions) Tools() []serializers.Tool                             { return f.tools }
func (f *fakeExtensions) NarrowTools(_ context.Context, _ int, names []string) []string {
	return names
}
func (f *fakeExtensions) RunTool(ctx context.Context, call conversation.Block) conversation.Block {
	if f.runTool != nil {
		return f.runTool(ctx, call)
	}
	return conversation.ToolResult(call.ID, "ran "+call.Name, false)
}
func (f *fakeExtensions) RunToolIn(ctx context.Context, call conversation.Block, sb *extension.Sandbox) extension.ToolRun {
	if f.runToolIn != nil {
		return f.runToolIn(ctx, call, sb)
	}
	return extension.ToolRun{Result: f.RunTool(ctx, call)}
}
func (f *fakeExtensions) BeforeMove(context.Context, extension.Move) (string, error) { return "", nil }
func (f *fakeExtensions) AfterMove(ctx context.Context, mv extension.Move, _ string) {
	if f.afterMove != nil {
		f.afterMove(ctx, f.rec, mv)
	}
}
func (f *fakeExtensions) Names() []string {
	if f.names == nil {
		return []string{}
	}
	return f.names
}
func (f *fakeExtensions) Infos() []extension.Info {
	var out []extension.Info
	for _, n := range f.names {
		out = append(out, extension.Info{Name: n})
	}
	return out
}
func (f *fakeExtensions) Variables() map[string]string { return map[string]string{} }
func (f *fakeExtensions) Disable(names []string) {
	var kept []string
	for _, n := range f.names {
		disabled := false
		for _, d := range names {
			disabled = disabled || d == n
		}
		if !disabled {
			kept = append(kept, n)
		}
	}
	f.names = kept
}
func (f *fakeExtensions) Commands() []extension.Command { return nil }
func (f *fakeExtensions) RunCommand(_ context.Context, name, _ string) (string, error) {
	return "", extension.ErrNoCommand
}
func (f *fakeExtensions) SystemChanged(ch extension.Change) { f.changes = append(f.changes, ch) }
func (f *fakeExtensions) RecordGuidance(rec extension.Recorder) {
	if f.recordGuidance != nil {
		f.recordGuidance(rec)
	}
}
func (f *fakeExtensions) SessionStart(ctx context.Context, ev extension.SessionStart) {
	if f.sessionStart != nil {
		f.sessionStart(ctx, f.rec, ev)
	}
}
func (f *fakeExtensions) Close(ctx context.Context) {
	if f.sessionEnd != nil {
		f.sessionEnd(ctx, f.rec)
	}
	f.closed = true
}
func (f *fakeExtensions) Stops() []extension.NamedStop { return nil }
