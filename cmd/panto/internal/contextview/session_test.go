package contextview

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// fakeSession is a session opened read-only: no tree of its own.
type fakeSession struct {
	msgs []conversation.Message
	exts []string
	sets []sessionlog.Tools
}

func (f fakeSession) EffectiveSystem() []conversation.SystemText {
	return conversation.EffectiveSystem(f.msgs)
}
func (f fakeSession) Messages() []conversation.Message        { return f.msgs }
func (f fakeSession) RequestMessages() []conversation.Message { return f.msgs }
func (f fakeSession) Tools() []sessionlog.Tools               { return f.sets }
func (f fakeSession) ContextUsage() (int, int)                { return 0, 1000 }
func (f fakeSession) Info() host.Info                         { return host.Info{Provider: "anthropic", Extensions: f.exts} }
func (f fakeSession) Tree() (*sessionlog.Tree, error)         { return nil, errors.New("no tree") }

func TestOfTakesTheLiveCountElseTheLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join([]string{
		`{"type":"session","version":1,"id":"s","created":"2026-01-01T00:00:00Z","cwd":"/p"}`,
		`{"type":"message","id":"a1","time":"2026-01-01T00:00:00Z","message":{"role":"system","mode":"append","content":[{"type":"text","text":"seed"}]}}`,
		`{"type":"message","id":"a3","parent_id":"a1","time":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"message","id":"a4","parent_id":"a3","time":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]},"usage":{"input_tokens":12,"cache_write_tokens":100}}`,
	}, "\n")+"\n"), 0o600))
	sess := fakeSession{
		msgs: []conversation.Message{conversation.SystemMessage("seed", conversation.ModeAppend), conversation.UserText("hi"), conversation.AssistantText("hello")},
		exts: []string{"tools"},
		sets: []sessionlog.Tools{{Extension: "tools", Tools: []sessionlog.ToolDef{{Name: "read"}}}, {Extension: "gone", Tools: []sessionlog.ToolDef{{Name: "old"}}}},
	}
	b, err := Of(sess, path, nil)
	require.NoError(t, err)
	require.NotNil(t, b.Last)
	assert.Equal(t, 112, b.Last.Real, "the log's count, the provider's way of adding it up (the session's provider)")
	assert.Equal(t, "a4", b.Last.Reply)
	assert.False(t, b.Last.Rebuilt, "a log without request settings is not rebuilt")
	var sets []string
	for _, p := range b.Parts {
		if p.Kind == Tools {
			sets = append(sets, p.Name)
		}
	}
	assert.Equal(t, []string{"tools"}, sets, "an extension not loaded offers nothing")

	live := &Usage{Provider: "openai", Counts: Counts{InputTokens: 40}}
	b, err = Of(sess, path, live)
	require.NoError(t, err)
	assert.Equal(t, 40, b.Last.Real, "this run's count wins")

	// A log that cannot be read: the live count still, and the error.
	b, err = Of(sess, filepath.Join(t.TempDir(), "missing.jsonl"), live)
	require.NoError(t, err, "with a live count the log is not needed")
	assert.Equal(t, 40, b.Last.Real)
	_, err = Of(sess, filepath.Join(t.TempDir(), "missing.jsonl"), nil)
	require.Error(t, err)
}
