package lineloop

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// A template may not take a built-in's name: builtinNames must name
// every built-in.
func TestBuiltinNamesAreTheBuiltins(t *testing.T) {
	t.Parallel()
	var keys []string
	for k := range builtinCommands {
		keys = append(keys, k)
	}
	names := builtinNames()
	for _, k := range keys {
		require.True(t, slices.Contains(names, k), k)
	}
	require.Len(t, names, len(keys)+2)
}
