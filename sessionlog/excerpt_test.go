package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testio"
)

func TestExcerpt(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", excerpt(""))
	short := strings.Repeat("a", MaxFirstText)
	require.Equal(t, short, excerpt(short))
	for _, s := range []string{
		strings.Repeat("a", MaxFirstText+1),
		strings.Repeat("é", MaxFirstText),
		strings.Repeat("a", MaxFirstText-4) + "😀😀",
		strings.Repeat("水", 1000),
	} {
		got := excerpt(s)
		require.LessOrEqual(t, len(got), MaxFirstText, s[:10])
		require.True(t, utf8.ValidString(got), "cut inside a rune: %q", got[len(got)-8:])
		require.True(t, strings.HasSuffix(got, "…"))
		require.True(t, strings.HasPrefix(s, strings.TrimSuffix(got, "…")))
		require.Greater(t, len(got), MaxFirstText-8)
	}
}

// bigFirstLog writes a log whose first user message is about size bytes
// of multi-byte text with escapes, in the shape the writer writes, and
// returns its path and that text.
func bigFirstLog(t *testing.T, dir string, size int) (string, string) {
	t.Helper()
	var b strings.Builder
	for b.Len() < size {
		b.WriteString("é \"quoted\"\ttab\n水 😀 ")
	}
	text := b.String()
	path := filepath.Join(dir, "big.jsonl")
	w, err := Create(path, Header{ID: "s1", Cwd: "/p"})
	require.NoError(t, err)
	_, err = w.Append(MessageEntry(conversation.SystemMessage("seed", conversation.ModeReplace)),
		MessageEntry(conversation.UserText(text)), MessageEntry(conversation.AssistantText("ok")))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return path, text
}

// A first message of megabytes: the summary holds an excerpt, read
// without decoding the line, the same as a decode gives; the sidecar
// stays small.
func TestSummaryBoundsFirstMessage(t *testing.T) {
	t.Parallel()
	path, text := bigFirstLog(t, t.TempDir(), 3*bigLine)
	sum, err := Summarize(path)
	require.NoError(t, err)
	require.Equal(t, excerpt(text), sum.FirstUserText)
	require.LessOrEqual(t, len(sum.FirstUserText), MaxFirstText)
	require.Equal(t, summaryOfRead(t, path), sum)

	got, err := CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, sum, got)
	st, err := os.Stat(summaryPath(path))
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(4<<10), "the sidecar holds the whole first message")
}

// A sidecar of format 1 held the whole first message: one that is too
// large is not read, a small one not believed; both are rebuilt, small.
func TestSummaryOldSidecar(t *testing.T) {
	t.Parallel()
	path, text := bigFirstLog(t, t.TempDir(), 2*bigLine)
	st, err := os.Stat(path)
	require.NoError(t, err)
	want := excerpt(text)
	for _, first := range []string{text, "an old short one"} {
		sf := summaryFile{Format: 1, Size: st.Size(), MTime: st.ModTime().UnixNano(),
			Session:  headerLine{Type: headerType, Version: 1, ID: "s1", Created: "2026-01-01T00:00:00Z", Cwd: "/p"},
			Messages: 3, Branches: 1, Entries: 3, FirstUserText: first}
		data, err := json.Marshal(sf)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(summaryPath(path), data, 0o600))
		got, err := CachedSummary(path)
		require.NoError(t, err)
		require.Equal(t, want, got.FirstUserText)
		side, err := os.Stat(summaryPath(path))
		require.NoError(t, err)
		require.Less(t, side.Size(), int64(4<<10))
	}
}

// A FIFO where the sidecar goes is not waited on: the summary is computed
// and the sidecar put in its place.
func TestSummarySidecarFIFO(t *testing.T) {
	t.Parallel()
	path, _ := writeSample(t, t.TempDir())
	testio.Mkfifo(t, summaryPath(path), 0o600)
	got, err := CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, summaryOfRead(t, path), got)
	st, err := os.Lstat(summaryPath(path))
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular())
	names, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
	require.NoError(t, err)
	require.Empty(t, names, "a temporary file is left")
}

// firstText gives up on what it does not handle, and reads what panto
// writes.
func TestFirstText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		ok   bool
		text string
		has  bool
	}{
		{line("e1", "", userHi), true, "hi", true},
		// No block marked added: the last text block (what panto wrote
		// last before the marker).
		{line("e1", "", `{"role":"user","content":[{"text":"a","type":"text"},{"type":"image","data":"AA=="},{"type":"text","text":"b\u00e9\ud83d\ude00\ud800x"}]}`), true, "bé😀\uFFFDx", true},
		{line("e1", "", `{"role":"user","content":[{"type":"text","text":"Answer briefly."},{"type":"text","text":"hi"}]}`), true, "hi", true},
		{line("e1", "", `{"role":"user","content":[{"type":"text","added":"","text":"a"},{"type":"text","text":"b"}]}`), true, "b", true},
		// Marked: the blocks not marked, wherever the marker is.
		{line("e1", "", `{"role":"user","content":[{"type":"text","added":"project /p/.panto/USER_PROMPT.md","text":"Answer briefly."},{"type":"text","text":"hi"}]}`), true, "hi", true},
		{line("e1", "", `{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"rules","added":"x"},{"type":"text","text":"b"}]}`), true, "ab", true},
		{line("e1", "", `{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","added":"x","text":"rules"},{"type":"text","text":""}]}`), true, "a", true},
		{line("e1", "", `{"role":"user","content":[{"type":"text","added":"x","text":"rules"},{"type":"text","text":""}]}`), true, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","added":"x","text":"rules"}]}`), true, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","text":""}]}`), true, "", false},
		{line("e1", "", `{"role":"user","content":[]}`), true, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"inner"}]}]}`), true, "", false},
		{`{"type":"message","id":"e1","time":"x","n":[1,-2.5e+3,0,true,false,null,{}],"message":{"role":"user","content":[{"type":"text","text":"x"}]}}`, true, "x", true},
		// Not handled: another case, a key twice, a null, an escaped key.
		{line("e1", "", `{"Role":"user","content":[{"type":"text","text":"hi"}]}`), false, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}`), false, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","text":null}]}`), false, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","te\u0078t":"a"}]}`), false, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","Added":"x","text":"a"}]}`), false, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","added":"x","added":"y","text":"a"}]}`), false, "", false},
		{line("e1", "", `{"role":"user","content":[{"type":"text","added":7,"text":"a"}]}`), false, "", false},
		{`{"type":"message","id":"e1","meſſage":{"role":"user","content":[]}}`, false, "", false},
		// Malformed.
		{line("e1", "", `{"role":"user","content":[{"type":"text","text":"a}]}`), false, "", false},
		{line("e1", "", userHi) + "x", false, "", false},
		{`{"type":"message","n":01,"message":{"role":"user","content":[]}}`, false, "", false},
		{`{"type":"message","n":1` + "\x00" + `,"message":{"role":"user","content":[]}}`, false, "", false},
	} {
		got, ok := firstText(strings.NewReader(tc.line))
		require.Equal(t, tc.ok, ok, tc.line)
		if ok {
			require.Equal(t, tc.text, string(got.text), tc.line)
			require.Equal(t, tc.has, got.hasText, tc.line)
			require.Equal(t, "user", got.role, tc.line)
		}
	}
}

// FuzzFirstText: firstText never accepts malformed JSON, agrees with a
// full decode wherever both read a user message, and handles every
// message line the writer writes.
func FuzzFirstText(f *testing.F) {
	for _, m := range []string{
		userHi,
		`{"role":"user","content":[{"type":"text","text":"a \"b\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \udc00 \ud800\u0041 é水"}]}`,
		`{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("long ", 200) + `"},{"type":"text","text":"two"}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{"a":[1,2.5e3,-0.1E-2,null,true]}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}],"is_error":true}]}`,
		`{"role":"user","content":[{"type":"text","added":"project /p/.panto/USER_PROMPT.md","text":"` + strings.Repeat("rule ", 200) + `"},{"type":"text","text":"typed"}]}`,
		`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b","added":"\u00e9"},{"type":"text","text":"` + strings.Repeat("c", 600) + `"}]}`,
	} {
		f.Add([]byte(line("e1", "", m)))
	}
	f.Add([]byte("{\"type\":\"message\",\"id\":\"e1\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\xff\xe2\x80 ok\"}]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := firstText(bytes.NewReader(data))
		if ok && !json.Valid(data) {
			t.Fatalf("accepted malformed JSON %q", data)
		}
		var e Entry
		var slot conversation.Message
		if decodeEntry(&fastDecoder{}, data, &e, &slot) != nil {
			return
		}
		var tm time.Time
		if ok && tm.UnmarshalJSON([]byte(`"`+got.time+`"`)) == nil && !tm.IsZero() && writableTime(tm) {
			require.True(t, e.Time.Equal(tm), "time %s, decoded %s", got.time, e.Time)
		}
		if e.Message == nil || e.Message.Role != conversation.RoleUser {
			return
		}
		if ok {
			require.Equal(t, string(e.Message.Role), got.role)
			require.Equal(t, excerpt(e.Message.Typed()), excerpt(string(got.text)))
			require.Equal(t, hasText(e.Message), got.hasText)
		}
		// What the writer writes of it is always handled.
		var buf bytes.Buffer
		if appendEntry(&buf, &e) != nil {
			return
		}
		again, ok := firstText(bytes.NewReader(buf.Bytes()))
		require.True(t, ok, "gave up on the writer's line %s", buf.Bytes())
		require.Equal(t, excerpt(e.Message.Typed()), excerpt(string(again.text)))
		require.Equal(t, hasText(e.Message), again.hasText)
	})
}

// BenchmarkSummaryBigFirst: the summary of a log whose first message is
// 64 MB, computed from the log (the sidecar removed each time).
func BenchmarkSummaryBigFirst(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s\n", testHeader)
	buf.WriteString(`{"type":"message","id":"e1","time":"2026-01-01T00:00:01Z","message":{"role":"user","content":[{"type":"text","text":"`)
	buf.WriteString(strings.Repeat("lorem ipsum ", 64<<20/12))
	buf.WriteString(`"}]}}` + "\n")
	require.NoError(b, os.WriteFile(path, buf.Bytes(), 0o600))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summarize(path); err != nil {
			b.Fatal(err)
		}
	}
}
