package host

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// cachedScript is a script that names its wire, as a real provider
// does: its requests are cached and their settings recorded.
type cachedScript struct{ *script }

func (cachedScript) Name() string { return "anthropic" }

func cacheWarnings(events []Event) []string {
	var out []string
	for _, ev := range events {
		if n, ok := ev.(Notice); ok && strings.Contains(n.Text, "cached tokens") {
			out = append(out, n.Text)
		}
	}
	return out
}

// A change of the prompt after a recent reply warns once, with what
// changed and how many cached tokens it costs; the next change before
// another request does not warn again.
func TestAChangeThatBustsTheCacheWarnsOnce(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	cfg := config(path, strings.Repeat("A long seed of the system prompt. ", 40))
	cfg.CacheWarnTokens = 100
	sc := &script{replies: []conversation.Message{conversation.AssistantText("one"), conversation.AssistantText("two")}}
	cfg.Provider = cachedScript{sc}
	exts := &fakeExtensions{names: []string{"guard"}}
	cfg.startExtensions = exts.start
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	events := s.Subscribe(t.Context())

	require.Zero(t, s.CacheRisk().Tokens, "nothing is cached before the first reply")
	require.NoError(t, end(t, turn(context.Background(), s, "hello")).Err)
	risk := s.CacheRisk()
	require.Greater(t, risk.Tokens, 300, "the seed and the conversation")
	require.False(t, risk.LastReply.IsZero())

	require.NoError(t, exts.rec.EditSystem("guard", extension.Edit{Mode: conversation.ModeAppend, Text: "Be careful."}))
	require.NoError(t, exts.rec.SetSection("guard", "state", "ready"))
	require.NoError(t, end(t, turn(context.Background(), s, "again")).Err)
	require.NoError(t, exts.rec.EditSystem("guard", extension.Edit{Mode: conversation.ModeReplace, Text: "Start over.", Bare: true}))
	require.NoError(t, s.Close(context.Background()))

	var got []Event
	for ev := range events {
		got = append(got, ev)
	}
	warns := cacheWarnings(got)
	require.Len(t, warns, 2, "one per request: %q", warns)
	require.Contains(t, warns[0], "the guard extension added to the system prompt: that invalidates about")
	require.Contains(t, warns[1], "the guard extension replaced the system prompt")

	// The log says what each request was sent with.
	l, err := sessionlog.Read(path)
	require.NoError(t, err)
	n := 0
	for _, e := range l.Entries {
		if e.RequestSettings != nil {
			n++
			require.Equal(t, "anthropic", e.RequestSettings.Wire)
		}
	}
	require.Equal(t, 1, n, "the second request had the same settings")
}

// A negative threshold never warns; an echo session has no cache.
func TestCacheWarningsCanBeOff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		warn int
		prov Sender
	}{
		{"off", -1, cachedScript{&script{replies: []conversation.Message{conversation.AssistantText("one")}}}},
		{"no cache", 1, &script{replies: []conversation.Message{conversation.AssistantText("one")}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config(writeLog(t), strings.Repeat("seed ", 400))
			cfg.CacheWarnTokens, cfg.Provider = c.warn, c.prov
			exts := &fakeExtensions{names: []string{"guard"}}
			cfg.startExtensions = exts.start
			s, err := Open(context.Background(), cfg)
			require.NoError(t, err)
			events := s.Subscribe(t.Context())
			require.NoError(t, end(t, turn(context.Background(), s, "hello")).Err)
			require.NoError(t, exts.rec.EditSystem("guard", extension.Edit{Mode: conversation.ModeAppend, Text: "x"}))
			require.NoError(t, s.Close(context.Background()))
			var got []Event
			for ev := range events {
				got = append(got, ev)
			}
			require.Empty(t, cacheWarnings(got))
		})
	}
}
