package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé, 日本語, 👩‍💻", "plain text, ünïcödé, 日本語, 👩‍💻"},
		{"a\tb\nc", "a\tb\nc"},
		{"\x1b]52;c;eA==\x07", "␛]52;c;eA==␇"},
		{"\x1b]8;;https://evil/\x1b\\good\x1b]8;;\x1b\\", `␛]8;;https://evil/␛\good␛]8;;␛\`},
		{"git status\x1b[2K\x1b[1Grm -rf ~", "git status␛[2K␛[1Grm -rf ~"},
		{"line\r\nnext", "line\nnext"},
		{"safe\rrm -rf", "safe␍rm -rf"},
		{"end\r", "end␍"},
		{"\u009b2J", `\u009b2J`},
		{"\x9b2J", `\x9b2J`},
		{"a\u202eb\u2066c\u2069", `a\u202eb\u2066c\u2069`},
		{"\x00\x7f\b", "␀␡␈"},
	} {
		require.Equal(t, tc.want, Sanitize(tc.in), "%q", tc.in)
	}
}

func TestSanitizeSafeTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("hello world\n", 100)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = Sanitize(s) }))
}

func TestLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a␤b c␛[2J", Line("a\nb\tc\x1b[2J"))
}

func TestHostileCorpus(t *testing.T) {
	t.Parallel()
	for _, h := range Hostile {
		require.Contains(t, h.Text, h.Raw, h.Name)
		require.Equal(t, []string{h.Name}, Leaks([]byte(h.Text)), h.Name)
		require.Error(t, Check([]byte(h.Text)), h.Name)
		out := Sanitize(h.Text)
		require.NoError(t, Check([]byte(out)), "%s: %q", h.Name, out)
		require.Empty(t, Leaks([]byte(out)), h.Name)
		require.True(t, Safe(out), h.Name)
		// Through a Writer, one byte at a time, the result is the same.
		var b bytes.Buffer
		w := NewWriter(&b)
		for i := range len(h.Text) {
			_, err := w.Write([]byte{h.Text[i]})
			require.NoError(t, err)
		}
		require.NoError(t, w.Flush())
		require.Equal(t, out, b.String(), h.Name)
	}
}

func TestWriterHoldsACutRuneAndCR(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewWriter(&b)
	snow := "☃" // 3 bytes
	_, _ = w.Write([]byte("a" + snow[:2]))
	require.Equal(t, "a", b.String())
	_, _ = w.Write([]byte(snow[2:] + "\r"))
	require.Equal(t, "a"+snow, b.String())
	_, _ = w.Write([]byte("\nb\r"))
	require.Equal(t, "a"+snow+"\nb", b.String())
	require.NoError(t, w.Flush())
	require.Equal(t, "a"+snow+"\nb␍", b.String())
}

func TestJSON(t *testing.T) {
	t.Parallel()
	in := map[string]string{"text": "x\x1b[2J\u009b\u202e\x7fy"}
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	out := JSON(raw)
	require.NoError(t, Check(out), "%s", out)
	var back map[string]string
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, in, back)
}

func FuzzSanitize(f *testing.F) {
	for _, h := range Hostile {
		f.Add(h.Text, 3)
	}
	f.Add("a\r\nb", 1)
	f.Fuzz(func(t *testing.T, s string, chunk int) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		if err := Check([]byte(out)); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if strings.Contains(out, "\r") {
			t.Fatalf("%q holds a CR", out)
		}
		if Sanitize(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
		if chunk < 1 {
			chunk = 1
		}
		var b bytes.Buffer
		w := NewWriter(&b)
		for i := 0; i < len(s); i += chunk {
			_, _ = w.Write([]byte(s[i:min(i+chunk, len(s))]))
		}
		_ = w.Flush()
		if b.String() != out {
			t.Fatalf("writer in chunks of %d: %q, Sanitize: %q", chunk, b.String(), out)
		}
	})
}
