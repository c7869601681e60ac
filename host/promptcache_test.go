package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
	"github.com/panto-dev/panto/serializers/openai"
)

// cacheConfig is a session on path with prompt caching on, a tool to
// call and a two-block prompt.
func cacheConfig(path string, model Sender, exts *fakeExtensions) Config {
	return Config{
		Log: Log{Path: path}, CWD: "/p", Provider: model, ProviderName: "script",
		Model:           Model{Name: "m1", PromptCache: true},
		startExtensions: exts.start,
		Prompt: func(rules.Vars) (Prompt, error) {
			return Prompt{Blocks: []PromptBlock{{Text: "You are panto.\n", Source: "seed"}, {Text: "Be terse.", Source: "append"}}}, nil
		},
	}
}

// An unchanged resume sends what the session would have sent had it not
// stopped, byte for byte on both wires, the cache marks and the key
// included: the tools, the system prompt and the history the provider
// cached are the same prefix.
func TestUnchangedResumeKeepsTheCachedPrefix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, copied := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "copy.jsonl")
	tools := []serializers.Tool{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object"}`)}}

	// The session that goes on.
	going := &script{replies: []conversation.Message{
		calls(use("a", "read", `{"path":"go.mod"}`), use("b", "read", `{"path":"go.sum"}`)),
		conversation.AssistantText("r1"),
		conversation.AssistantText("r2"),
	}}
	s, err := Open(context.Background(), cacheConfig(path, going, &fakeExtensions{tools: tools}))
	require.NoError(t, err)
	require.NoError(t, end(t, turn(context.Background(), s, "one")).Err)
	// The log as it stands between the turns, id and all: the session
	// that stops here and is resumed.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copied, data, 0o600))
	require.NoError(t, end(t, turn(context.Background(), s, "two")).Err)
	id := s.Info().ID
	require.NoError(t, s.Close(context.Background()))

	resumed := &script{replies: []conversation.Message{conversation.AssistantText("r2")}}
	r, err := Open(context.Background(), cacheConfig(copied, resumed, &fakeExtensions{tools: tools}))
	require.NoError(t, err)
	require.Equal(t, id, r.Info().ID)
	require.NoError(t, end(t, turn(context.Background(), r, "two")).Err)
	require.NoError(t, r.Close(context.Background()))

	require.Len(t, going.requests, 3)
	require.Len(t, resumed.requests, 1)
	want, got := going.requests[2], resumed.requests[0]
	require.Equal(t, serializers.Cache{Mark: true, Key: id}, got.Cache)

	wantA, err := anthropic.EncodeRequest(want, anthropic.Options{})
	require.NoError(t, err)
	gotA, err := anthropic.EncodeRequest(got, anthropic.Options{})
	require.NoError(t, err)
	require.Equal(t, string(wantA), string(gotA))
	require.Equal(t, 2, strings.Count(string(gotA), `"cache_control"`), "the system and the rolling mark: %s", gotA)

	wantO, err := openai.EncodeRequest(want, openai.Options{PromptCacheKey: true})
	require.NoError(t, err)
	gotO, err := openai.EncodeRequest(got, openai.Options{PromptCacheKey: true})
	require.NoError(t, err)
	require.Equal(t, string(wantO), string(gotO))
	require.Contains(t, string(gotO), `"prompt_cache_key":"`+id+`"`)
}

// prompt_cache off: no request of a session asks for caching.
func TestPromptCacheOff(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("r1")}}
	cfg := cacheConfig(filepath.Join(t.TempDir(), "s.jsonl"), model, &fakeExtensions{})
	cfg.Model.PromptCache = false
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, end(t, turn(context.Background(), s, "one")).Err)
	require.NoError(t, s.Close(context.Background()))
	require.Len(t, model.requests, 1)
	require.Equal(t, serializers.Cache{}, model.requests[0].Cache)
}
