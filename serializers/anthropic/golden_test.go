package anthropic_test

import (
	"bytes"
	"encoding/json"
	"github.com/panto-dev/panto/internal/golden"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Where the fixtures and golden files live.
const (
	requestsDir  = "testdata/requests"  // <case>.json: request bodies, indented
	streamsDir   = "testdata/streams"   // <name>.sse: fixtures; <name>.golden.json: expected reply
	responsesDir = "testdata/responses" // <name>.json: bodies; <name>.golden.json: expected reply
)

// checkGolden compares got with the golden file at path (-update rewrites it).
func checkGolden(t *testing.T, path string, got []byte) { t.Helper(); golden.Check(t, path, got) }

// indent returns compact JSON indented by two spaces, with a final newline.
func indent(t *testing.T, compact []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, compact, "", "  "))
	buf.WriteByte('\n')
	return buf.Bytes()
}

// marshalGolden is json.MarshalIndent without HTML escaping, with a final
// newline.
func marshalGolden(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

// goldenFiles returns the files of dir matching pattern, sorted; it fails
// when there are none, so a check over them cannot pass vacuously.
func goldenFiles(t *testing.T, dir, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no %s files in %s", pattern, dir)
	return files
}
