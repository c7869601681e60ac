package host

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sessionlog"
)

// listing is a provider with a list of its models (GET /v1/models): it
// counts the lists asked for, and fails them with err when set.
type listing struct {
	script
	names []string
	err   error
	calls atomic.Int32
}

func (l *listing) ListModels(context.Context) ([]string, error) {
	l.calls.Add(1)
	return l.names, l.err
}

func listingSession(t *testing.T, prov Sender, configured ...string) (*Session, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := Open(context.Background(), Config{
		Log: Log{Path: path}, CWD: "/p", Provider: prov, ProviderName: "script", Model: Model{Name: "fake-model"},
		Models: configured,
		Prompt: func(rules.Vars) (Prompt, error) { return Prompt{Blocks: []PromptBlock{{Text: "seed"}}}, nil },
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, path
}

func recordedModels(t *testing.T, path string) []string {
	t.Helper()
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var out []string
	for _, e := range log.Entries {
		if e.ModelChange != nil {
			out = append(out, e.ModelChange.Model)
		}
	}
	return out
}

// A name neither configured nor in the provider's list is refused, with
// the nearest names; one in the list, a configured one and the
// configured default are taken; ForceModel takes any. The list is
// fetched once.
func TestSetModelChecksTheName(t *testing.T) {
	t.Parallel()
	prov := &listing{names: []string{"fake-model", "fake-model-2", "big-model"}}
	s, path := listingSession(t, prov, "local-only")

	err := s.SetModel("nonexistent-model-xyz")
	var unknown *UnknownModelError
	require.ErrorAs(t, err, &unknown)
	require.Equal(t, "nonexistent-model-xyz", unknown.Name)
	require.Contains(t, err.Error(), "--force", "it says how to take it anyway")
	require.Equal(t, "fake-model", s.Info().Model, "nothing changed")

	err = s.SetModel("fake-modle-2")
	require.ErrorAs(t, err, &unknown)
	require.Equal(t, "fake-model-2", unknown.Suggestions[0], "did you mean the nearest")
	require.Contains(t, err.Error(), `did you mean "fake-model-2"`)

	require.NoError(t, s.SetModel("big-model"), "the provider lists it")
	require.NoError(t, s.SetModel("local-only"), "config models names it")
	require.NoError(t, s.SetModel("fake-model"), "the configured default, after a switch")
	require.NoError(t, s.ForceModel("unlisted-preview"), "forced")
	require.Equal(t, "unlisted-preview", s.Info().Model)
	require.Equal(t, int32(1), prov.calls.Load(), "the list is fetched once a session")

	require.NoError(t, s.Close(context.Background()))
	require.Equal(t, []string{"fake-model", "big-model", "local-only", "fake-model", "unlisted-preview"}, recordedModels(t, path),
		"the refused names were never recorded")

	l := s.Models(context.Background())
	require.Equal(t, []string{"unlisted-preview", "fake-model", "local-only", "fake-model-2", "big-model"}, l.Names(),
		"the one in use, the configured default and models, then the provider's")
}

// Where the provider has no list, or fetching it fails, any name is
// taken.
func TestSetModelTakesAnyNameWithoutAList(t *testing.T) {
	t.Parallel()
	s, _ := listingSession(t, &script{})
	require.NoError(t, s.SetModel("anything-at-all"))
	require.ErrorIs(t, s.Models(context.Background()).Unlisted, ErrNoModelList)

	failing := &listing{err: errors.New("openai: list models: GET http://x/models: 404 Not Found")}
	s, _ = listingSession(t, failing)
	require.NoError(t, s.SetModel("whatever-the-server-has"))
	require.ErrorContains(t, s.Models(context.Background()).Unlisted, "404")
}

// A closed session takes no model change, forced or not.
func TestForceModelAfterClose(t *testing.T) {
	t.Parallel()
	s, _ := listingSession(t, &listing{names: []string{"fake-model"}})
	require.NoError(t, s.Close(context.Background()))
	require.ErrorIs(t, s.ForceModel("other"), ErrClosed)
	require.ErrorIs(t, s.SetModel("fake-model-2"), ErrClosed, "closed, before it is unknown")
}
