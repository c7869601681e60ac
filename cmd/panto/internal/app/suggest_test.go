package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	names := []string{"help", "model", "resume", "session", "system-append"}
	for w, want := range map[string]string{
		"hlep": "help", "modle": "model", "resum": "resume", "sesion": "session",
		"system-apend": "system-append", "sys": "system-append", "zzzz": "", "h": "", "mode": "model",
	} {
		require.Equal(t, want, Suggest(w, names), w)
	}
	require.Equal(t, "anthropic", Suggest("antropic", []string{"anthropic", "openai", "echo"}))
	require.Equal(t, 1, Distance("hlep", "help"))
	require.Equal(t, 3, Distance("", "abc"))
}
