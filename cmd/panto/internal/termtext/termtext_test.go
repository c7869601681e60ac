package termtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
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
		// Invisible characters show as their escapes, above U+FFFF as \U.
		{"Run make test.\U000e0049\U000e0067\U000e006e", `Run make test.\U000e0049\U000e0067\U000e006e`},
		{"a\u200bb\u2060c\u2061\u2064d", `a\u200bb\u2060c\u2061\u2064d`},
		{"\ufeffbom, soft\u00adhyphen", `\ufeffbom, soft\u00adhyphen`},
		{"one\u2028two\u2029", `one\u2028two\u2029`},
		{"\u3164\uffa0\u115f\u1160\u034f\u17b4\u206a\u206f\ufff0\ufffb", `\u3164\uffa0\u115f\u1160\u034f\u17b4\u206a\u206f\ufff0\ufffb`},
		{"\U0001bca0\U0001d173\U000e0001\U000e007f\U000e0100\U000e01ef\U000e0fff", `\U0001bca0\U0001d173\U000e0001\U000e007f\U000e0100\U000e01ef\U000e0fff`},
		{"🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f", `🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f`},
		// What text needs to be drawn right passes: ZWJ in emoji
		// sequences and Devanagari, ZWNJ in Persian, variation selectors,
		// Mongolian's free variation selectors and vowel separator.
		{"👩\u200d💻 👨\u200d👩\u200d👧 ❤\ufe0f\u200d🔥 🏳\ufe0f\u200d🌈 1\ufe0f⃣ ☺\ufe0e क्\u200dष", "👩\u200d💻 👨\u200d👩\u200d👧 ❤\ufe0f\u200d🔥 🏳\ufe0f\u200d🌈 1\ufe0f⃣ ☺\ufe0e क्\u200dष"},
		{"می\u200cخواهم", "می\u200cخواهم"},
		{"ᠠ\u180bᠡ\u180eᠠ\u180f", "ᠠ\u180bᠡ\u180eᠠ\u180f"},
	} {
		require.Equal(t, tc.want, Sanitize(tc.in), "%q", tc.in)
	}
}

// Every Default_Ignorable_Code_Point, derived from Go's Unicode tables as
// Unicode derives it, is shown escaped, but the few text needs to be
// drawn right.
func TestDefaultIgnorablesAreShown(t *testing.T) {
	t.Parallel()
	keep := func(r rune) bool {
		return r == 0x200c || r == 0x200d || r >= 0xfe00 && r <= 0xfe0f || r >= 0x180b && r <= 0x180f
	}
	n := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !defaultIgnorable(r) {
			continue
		}
		n++
		s := "a" + string(r) + "b"
		if keep(r) {
			require.Equal(t, s, Sanitize(s), "%U passes", r)
			require.NoError(t, Check([]byte(s)), "%U", r)
			continue
		}
		want := fmt.Sprintf(`a\u%04xb`, r)
		if r > 0xffff {
			want = fmt.Sprintf(`a\U%08xb`, r)
		}
		require.Equal(t, want, Sanitize(s), "%U is shown", r)
		require.Error(t, Check([]byte(s)), "%U", r)
	}
	require.Greater(t, n, 4000, "the tables hold the property")
}

// defaultIgnorable is Unicode's derivation of Default_Ignorable_Code_Point
// (DerivedCoreProperties.txt): Other_Default_Ignorable_Code_Point, Cf and
// Variation_Selector, less White_Space, U+FFF9–U+FFFB, U+13430–U+1343F and
// Prepended_Concatenation_Mark.
func defaultIgnorable(r rune) bool {
	in := unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Variation_Selector, r)
	out := unicode.Is(unicode.White_Space, r) || r >= 0xfff9 && r <= 0xfffb || r >= 0x13430 && r <= 0x1343f ||
		unicode.Is(unicode.Prepended_Concatenation_Mark, r)
	return in && !out
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
	in := map[string]string{"text": "x\x1b[2J\u009b\u202e\x7fy\u200b\U000e0041\u2028z"}
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	out := JSON(raw)
	require.NoError(t, Check(out), "%s", out)
	require.Contains(t, string(out), `\u200b\udb40\udc41\u2028z`, "a surrogate pair above U+FFFF")
	var back map[string]string
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, in, back)
}

// A tag character cut between two writes is held, then shown whole.
func TestWriterHoldsACutTagChar(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewWriter(&b)
	tag := "\U000e0041"
	_, _ = w.Write([]byte("a" + tag[:3]))
	require.Equal(t, "a", b.String())
	_, _ = w.Write([]byte(tag[3:] + "b"))
	require.Equal(t, `a\U000e0041b`, b.String())
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
