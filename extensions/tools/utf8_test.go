package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/sdk"
)

// requireSendable fails unless res can go over the wire: proto3 refuses
// to marshal a string field that is not valid UTF-8, and panto then
// disables the whole extension.
func requireSendable(t *testing.T, res sdk.ToolResult) {
	t.Helper()
	require.True(t, utf8.ValidString(res.Content), "not valid UTF-8: %q", res.Content)
	_, err := proto.Marshal(&pb.ToolCallResponse{Content: res.Content, IsError: res.IsError})
	require.NoError(t, err)
}

// Bytes that are not UTF-8, in a file, a file name or a command's
// output, reach the model as U+FFFD and never break the result.
func TestInvalidUTF8IsReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"caf\xe9.txt": "caf\xe9\n", // a Latin-1 name (the model cannot send it back)
		"latin1.txt":  "caf\xe9\n",
		"cut.txt":     "ab\xe2\x82\n",      // a truncated 3-byte sequence
		"lone.txt":    "\x80\x80\x80\x80x", // continuation bytes only
	})
	for _, tc := range []struct {
		tool, input string
		isErr       bool
		want        string
	}{
		{"read", `{"path":"latin1.txt"}`, false, "     1\tcaf\uFFFD\n"},
		{"read", `{"path":"cut.txt"}`, false, "     1\tab\uFFFD\n"},
		{"read", `{"path":"lone.txt"}`, false, "     1\t\uFFFDx\n"},
		{"bash", `{"command":"printf 'caf\\xe9\\n'"}`, false, "caf\uFFFD\n[exit code 0]"},
		{"bash", `{"command":"printf 'caf\\xe9\\n'; exit 1"}`, true, "caf\uFFFD\n[exit code 1]"},
		{"ls", `{}`, false, "caf\uFFFD.txt\ncut.txt\nlatin1.txt\nlone.txt\n"},
		{"find", `{"pattern":"caf*"}`, false, "caf\uFFFD.txt\n"},
		{"grep", `{"pattern":"caf"}`, false, "caf\uFFFD.txt:1: caf\uFFFD\nlatin1.txt:1: caf\uFFFD\n"},
		{"grep", `{"pattern":"x$","path":"lone.txt"}`, false, "lone.txt:1: \uFFFDx\n"},
	} {
		res := call(t, dir, tc.tool, tc.input)
		requireSendable(t, res)
		require.Equal(t, tc.isErr, res.IsError, res.Content)
		require.Equal(t, tc.want, res.Content, "%s %s", tc.tool, tc.input)
	}
}

// Whatever a tool's logic returns, text or error, what leaves bind is
// sendable: the text is fixed in the one place every result is made.
// (An error can hold bytes from disk, such as a symlink's target.)
func TestBindMakesTextValid(t *testing.T) {
	t.Parallel()
	params := []byte(`{"type":"object","properties":{"p":{"type":"string","description":"x"}}}`)
	text := bindText(params, func(context.Context, struct{}) (string, error) { return "caf\xe9", nil })
	res, err := text(t.Context(), nil, sdk.ToolCall{Input: []byte(`{}`)})
	require.NoError(t, err)
	requireSendable(t, res)
	require.Equal(t, sdk.ToolResult{Content: "caf\uFFFD"}, res)

	failing := bindText(params, func(context.Context, struct{}) (string, error) {
		return "", errors.New("write /tmp/caf\xe9: permission denied")
	})
	res, err = failing(t.Context(), nil, sdk.ToolCall{Input: []byte(`{}`)})
	require.NoError(t, err, "an error is returned as an error result, already made valid")
	requireSendable(t, res)
	require.Equal(t, sdk.ToolResult{Content: "write /tmp/caf\uFFFD: permission denied", IsError: true}, res)

	raw := bind(params, func(context.Context, struct{}) (sdk.ToolResult, error) {
		return sdk.ToolResult{Content: "\xff\xfe", IsError: true}, nil
	})
	res, err = raw(t.Context(), nil, sdk.ToolCall{Input: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, sdk.ToolResult{Content: "\uFFFD", IsError: true}, res)
}

// The tail of a long output is cut on a character boundary, not inside
// a multi-byte character.
func TestBashTailCutOnACharacter(t *testing.T) {
	t.Parallel()
	// 30000 é (2 bytes each) and an x: the 50 KB cut falls on an odd
	// offset, inside an é.
	res := call(t, t.TempDir(), "bash", `{"command":"printf 'é%.0s' $(seq 1 30000); printf x"}`)
	requireSendable(t, res)
	require.False(t, res.IsError, res.Content)
	_, body, ok := strings.Cut(res.Content, "]\n")
	require.True(t, ok, res.Content)
	require.NotContains(t, body, "\uFFFD")
	require.True(t, strings.HasPrefix(body, "éé"), "%q", body[:10])
	require.True(t, strings.HasSuffix(body, "éx\n[exit code 0]"))
	require.LessOrEqual(t, len(body), maxBytes+len("\n[exit code 0]"))
}

func TestTailBufferRuneBoundary(t *testing.T) {
	t.Parallel()
	for _, max := range []int{4, 5, 6, 7} {
		b := &tailBuffer{max: max}
		_, err := b.Write([]byte(strings.Repeat("€", 10))) // 3 bytes each
		require.NoError(t, err)
		s := b.String()
		require.True(t, utf8.ValidString(s), "max %d: %q", max, s)
		_, tail, _ := strings.Cut(s, "]\n")
		require.NotContains(t, tail, "\uFFFD", "max %d", max)
		require.LessOrEqual(t, len(tail), max)
		require.Equal(t, strings.Repeat("€", max/3), tail, "max %d", max)
	}
	// Invalid bytes are replaced before the cut, so the shown tail stays
	// within max bytes.
	b := &tailBuffer{max: 10}
	_, _ = b.Write([]byte(strings.Repeat("a\xff", 20)))
	_, tail, _ := strings.Cut(b.String(), "]\n")
	require.True(t, utf8.ValidString(tail), "%q", tail)
	require.LessOrEqual(t, len(tail), 10)
}

// A Latin-1 file is readable, and editable: old_text matches the valid
// text around the bytes it cannot spell, and those bytes are kept.
func TestEditInvalidUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"l1.txt": "caf\xe9 au lait\nna\xefve\n"})
	res := call(t, dir, "edit", js(t, map[string]any{"path": "l1.txt", "edits": []map[string]string{{"old_text": "au lait", "new_text": "cr\u00e8me"}}}))
	requireSendable(t, res)
	require.False(t, res.IsError, res.Content)
	got, err := os.ReadFile(filepath.Join(dir, "l1.txt"))
	require.NoError(t, err)
	require.Equal(t, "caf\xe9 cr\u00e8me\nna\xefve\n", string(got))

	// Copying read's U+FFFD into old_text cannot match the byte it stands
	// for; the error says so.
	res = call(t, dir, "edit", js(t, map[string]any{"path": "l1.txt", "edits": []map[string]string{{"old_text": "na\uFFFDve", "new_text": "naive"}}}))
	requireSendable(t, res)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "not valid UTF-8")
	require.Contains(t, res.Content, "U+FFFD")
}
