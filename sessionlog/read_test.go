package sessionlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

const testHeader = `{"type":"session","version":1,"id":"s1","created":"2026-01-01T00:00:00Z","cwd":"/p"}`

// line returns a message entry line for the tests.
func line(id, parent, message string) string {
	p := ""
	if parent != "" {
		p = `"parent_id":"` + parent + `",`
	}
	return `{"type":"message","id":"` + id + `",` + p + `"time":"2026-01-01T00:00:01Z","message":` + message + `}`
}

const userHi = `{"role":"user","content":[{"type":"text","text":"hi"}]}`

func TestReadErrors(t *testing.T) {
	t.Parallel()
	ok1 := line("e1", "", userHi)
	tests := []struct {
		name    string
		content string
		want    string // besides the path
	}{
		{"empty file", "", "missing or garbled header: the file is empty"},
		{"header not JSON", "hello\n" + ok1 + "\n", "missing or garbled header (line 1): invalid JSON"},
		{"header torn", `{"type":"session","vers`, "missing or garbled header (line 1)"},
		{"first line is an entry", ok1 + "\n", `missing or garbled header (line 1): type is "message", want "session"`},
		{"header without version", `{"type":"session","id":"s","created":"2026-01-01T00:00:00Z"}` + "\n", "missing or garbled header (line 1): version 0"},
		{"header without id", `{"type":"session","version":1,"created":"2026-01-01T00:00:00Z"}` + "\n", "no session id"},
		{"header bad created", `{"type":"session","version":1,"id":"s","created":"yesterday"}` + "\n", "created:"},
		{"newer version", `{"type":"session","version":2,"id":"s","created":"2026-01-01T00:00:00Z"}` + "\n" + `{"type":"hologram"}` + "\n",
			"has format version 2, but this panto reads only up to version 1: it was written by a newer panto; upgrade panto"},
		{"malformed middle line", testHeader + "\n" + ok1 + "\n{not json\n" + line("e3", "e1", userHi) + "\n", "line 3: invalid JSON"},
		{"torn line in the middle", testHeader + "\n" + `{"type":"message","id":"e1","ti` + "\n" + ok1 + "\n", "line 2: invalid JSON"},
		{"not an object", testHeader + "\n[1,2]\n", "line 2: not a JSON object"},
		{"wrong field type", testHeader + "\n" + `{"type":"message","id":"e1","time":"2026-01-01T00:00:01Z","message":{"role":"user","content":"hi"}}` + "\n",
			`line 2: field "message.content" cannot be a JSON string`},
		{"second header", testHeader + "\n" + testHeader + "\n", "line 2: a second session header"},
		{"no type", testHeader + "\n" + `{"id":"e1"}` + "\n", "line 2: entry without a type"},
		{"no id", testHeader + "\n" + `{"type":"message","time":"2026-01-01T00:00:01Z","message":` + userHi + `}` + "\n", "line 2: message entry without an id"},
		{"unknown type without id", testHeader + "\n" + `{"type":"bookmark","name":"x"}` + "\n", `line 2: entry of type "bookmark" without an id`},
		{"no time", testHeader + "\n" + `{"type":"message","id":"e1","message":` + userHi + `}` + "\n", "line 2: message entry e1 without a time"},
		{"bad time", testHeader + "\n" + `{"type":"message","id":"e1","time":"noon","message":` + userHi + `}` + "\n", "line 2: time:"},
		{"unknown parent", testHeader + "\n" + ok1 + "\n" + line("e2", "zz", userHi) + "\n", `line 3: entry e2: parent_id "zz" names no earlier entry`},
		{"parent after child", testHeader + "\n" + ok1 + "\n" + line("e2", "e3", userHi) + "\n" + line("e3", "e1", userHi) + "\n", `line 3: entry e2: parent_id "e3" names no earlier entry`},
		{"second root", testHeader + "\n" + ok1 + "\n" + line("e2", "", userHi) + "\n", "line 3: entry e2 has no parent_id (only the first entry may lack one)"},
		{"duplicate id", testHeader + "\n" + ok1 + "\n" + line("e1", "e1", userHi) + "\n", `line 3: duplicate entry id "e1" (first used on line 2)`},
		{"message missing", testHeader + "\n" + `{"type":"message","id":"e1","time":"2026-01-01T00:00:01Z"}` + "\n", "line 2: message entry e1 without a message"},
		{"unknown role", testHeader + "\n" + line("e1", "", `{"role":"robot","content":[]}`) + "\n", `line 2: message entry e1: invalid message: unknown role "robot"`},
		{"bad block", testHeader + "\n" + line("e1", "", `{"role":"assistant","content":[{"type":"tool_use","name":"x"}]}`) + "\n", "line 2: message entry e1: invalid message: assistant message content[0]: tool_use block: id and name are required"},
		{"unknown mode", testHeader + "\n" + line("e1", "", `{"role":"system","mode":"prepend","content":[{"type":"text","text":"x"}]}`) + "\n", `line 2: message entry e1: system message: unknown mode "prepend"`},
		{"mode on user message", testHeader + "\n" + line("e1", "", `{"role":"user","mode":"append","content":[]}`) + "\n", "user message has a mode"},
		{"system block on disk", testHeader + "\n" + line("e1", "", `{"role":"system","content":[{"type":"system","text":"x","mode":"replace"}]}`) + "\n", `system message content[0] is a "system" block (want text`},
		{"mode on system text block", testHeader + "\n" + line("e1", "", `{"role":"system","content":[{"type":"text","text":"x","mode":"replace"}]}`) + "\n", "the mode goes on the message, not on its blocks"},
		{"key on user message", testHeader + "\n" + line("e1", "", `{"role":"user","key":"k","content":[]}`) + "\n", "user message has a key (only a system message may)"},
		{"source on assistant message", testHeader + "\n" + line("e1", "", `{"role":"assistant","source":"s","content":[]}`) + "\n", "assistant message has a source"},
		{"invalid key", testHeader + "\n" + line("e1", "", `{"role":"system","key":"a b","content":[{"type":"text","text":"x"}]}`) + "\n", `system message: invalid key "a b"`},
		{"key on system text block", testHeader + "\n" + line("e1", "", `{"role":"system","content":[{"type":"text","text":"x","key":"k"}]}`) + "\n", "the key goes on the message, not on its blocks"},
		{"source on system text block", testHeader + "\n" + line("e1", "", `{"role":"system","content":[{"type":"text","text":"x","source":"s"}]}`) + "\n", "the source goes on the message, not on its blocks"},
		{"key on user text block", testHeader + "\n" + line("e1", "", `{"role":"user","content":[{"type":"text","text":"x","key":"k"}]}`) + "\n", "user message content[0]: text block: only a system block may have a key or a source"},
		{"key not a string", testHeader + "\n" + line("e1", "", `{"role":"system","key":7,"content":[]}`) + "\n", `field "message.key" cannot be a JSON number`},
		{"image in system message", testHeader + "\n" + line("e1", "", `{"role":"system","content":[{"type":"image","data":"x","media_type":"image/png"}]}`) + "\n", `content[0] is a "image" block`},
		{"lifecycle without event", testHeader + "\n" + `{"type":"lifecycle","id":"e1","time":"2026-01-01T00:00:01Z"}` + "\n", "lifecycle entry e1 without an event"},
		{"extension data without name", testHeader + "\n" + `{"type":"extension_data","id":"e1","time":"2026-01-01T00:00:01Z","data":1}` + "\n", "without an extension name"},
		{"model change without model", testHeader + "\n" + `{"type":"model_change","id":"e1","time":"2026-01-01T00:00:01Z","provider":"x"}` + "\n", "without provider and model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, "s.jsonl", tt.content)
			_, err := Read(path)
			require.ErrorContains(t, err, "session log "+path)
			require.ErrorContains(t, err, tt.want)

			// Open refuses the same log, and leaves it and the lock alone.
			_, _, err = Open(path)
			require.ErrorContains(t, err, tt.want)
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			require.Equal(t, tt.content, string(got))
			require.NoFileExists(t, path+".lock")
		})
	}
}

func TestNewerVersionIsErrNewerVersion(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "s.jsonl", `{"type":"session","version":7,"id":"s","created":"2026-01-01T00:00:00Z","cwd":"/"}`+"\n")
	_, err := Read(path)
	require.ErrorIs(t, err, ErrNewerVersion)
	_, err = ReadHeader(path)
	require.ErrorIs(t, err, ErrNewerVersion)
	require.ErrorContains(t, err, "upgrade panto")
	_, _, err = Open(path)
	require.ErrorIs(t, err, ErrNewerVersion)
}

func TestReadToleratesTornLastLine(t *testing.T) {
	t.Parallel()
	path, recorded := writeSample(t, t.TempDir())
	complete, err := os.ReadFile(path)
	require.NoError(t, err)
	torn := `{"type":"message","id":"ffffffffffffffff","parent_id":"00000000000000af","time":"2026-03-14T09:27:09Z","message":{"role":"user","content":[{"type":"te`
	require.NoError(t, os.WriteFile(path, append(bytes.Clone(complete), torn...), 0o600))

	log, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, recorded, log.Entries)
	require.Len(t, log.Warnings, 1)
	n := len(recorded) + 2 // the header, the entries, then the torn line
	require.Contains(t, log.Warnings[0], fmt.Sprintf("session log %s line %d: skipped torn last line", path, n))

	// Read changed nothing.
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(complete)+torn, string(got))
}

func TestReadKeepsCompleteLastLineWithoutNewline(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "s.jsonl", testHeader+"\n"+line("e1", "", userHi))
	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, []conversation.Message{conversation.UserText("hi")}, log.Messages())
}

func TestReadSkipsBlankLines(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "s.jsonl", testHeader+"\r\n\n"+line("e1", "", userHi)+"\r\n   \n"+line("e2", "e1", userHi)+"\n\n")
	log, err := Read(path)
	require.NoError(t, err)
	require.Len(t, log.Entries, 2)
	require.Equal(t, "e2", log.Leaf().ID)
}

func TestUnknownEntryType(t *testing.T) {
	t.Parallel()
	src := filepath.Join("testdata", "branched.jsonl")
	log, err := Read(src)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)

	label := log.Find("a000000000000005")
	require.NotNil(t, label)
	require.Equal(t, EntryType("bookmark"), label.Type)
	require.Equal(t, "a000000000000004", label.ParentID)
	require.Equal(t, "2026-02-01T10:00:05Z", formatTime(label.Time))
	require.Nil(t, label.Message, "the unknown type's \"message\" field is not read as a message")
	srcLines := lines(t, src)
	require.Equal(t, srcLines[5], string(label.Raw))

	// The leaf's branch does not pass the label; the first branch does,
	// and the rebuild ignores it there.
	require.Equal(t, []string{"seed", "second try", "new seed", "answer two"}, texts(log.Messages()))
	at, err := log.MessagesAt("a000000000000005")
	require.NoError(t, err)
	require.Equal(t, []string{"seed", "first try", "answer one"}, texts(at))
	branch, err := log.Branch("a000000000000005")
	require.NoError(t, err)
	require.Equal(t, []string{"a000000000000001", "a000000000000002", "a000000000000003", "a000000000000004", "a000000000000005"}, ids(branch))

	// Copied into a new log it is written back untouched.
	path := filepath.Join(t.TempDir(), "copy.jsonl")
	w, err := Create(path, log.Header)
	require.NoError(t, err)
	_, err = w.Append(log.Entries...)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, srcLines[5], lines(t, path)[5])

	// A child of the unknown entry is fine too.
	w, _, err = Open(path)
	require.NoError(t, err)
	_, err = w.Append(MessageEntry(conversation.UserText("after the label")).WithParent("a000000000000005"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	again, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, []string{"seed", "first try", "answer one", "after the label"}, texts(again.Messages()))
}

func TestUnknownTypeWithOddFields(t *testing.T) {
	t.Parallel()
	// An unknown type may use a known field's name for another shape.
	raw := `{"type":"note","id":"n1","parent_id":"e1","time":17,"message":{"role":5},"reseeded":"yes"}`
	log, err := Decode(strings.NewReader(testHeader+"\n"+line("e1", "", userHi)+"\n"+raw+"\n"), "odd.jsonl")
	require.NoError(t, err)
	require.Len(t, log.Entries, 2)
	require.Equal(t, raw, string(log.Entries[1].Raw))
	require.True(t, log.Entries[1].Time.IsZero())
	require.Equal(t, []string{"hi"}, texts(log.Messages()))
}

func TestReadHeader(t *testing.T) {
	t.Parallel()
	// Only the first line is read: what follows may be anything.
	path := writeFile(t, "s.jsonl", testHeader+"\n{garbage\n")
	h, err := ReadHeader(path)
	require.NoError(t, err)
	require.Equal(t, "s1", h.ID)
	require.Equal(t, 1, h.Version)
	require.Equal(t, "/p", h.Cwd)
	require.Equal(t, "2026-01-01T00:00:00Z", formatTime(h.Created))

	_, err = ReadHeader(writeFile(t, "e.jsonl", ""))
	require.ErrorContains(t, err, "missing or garbled header")
	_, err = ReadHeader(writeFile(t, "g.jsonl", strings.Repeat("x", 3*maxHeaderLine)))
	require.ErrorContains(t, err, "first line longer than")
	_, err = ReadHeader(filepath.Join(t.TempDir(), "none.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "read session log header")
}

func TestReadMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "none.jsonl")
	_, err := Read(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "read session log: open "+path)
}

// bigLog returns a log of n user messages (over several read chunks), the
// message i being text(i).
func bigLog(n int, text func(i int) string) string {
	var sb strings.Builder
	sb.WriteString(testHeader + "\n")
	for i := range n {
		parent := ""
		if i > 0 {
			parent = fmt.Sprint("e", i-1)
		}
		sb.WriteString(line(fmt.Sprint("e", i), parent, `{"role":"user","content":[{"type":"text","text":"`+text(i)+`"}]}`) + "\n")
	}
	return sb.String()
}

func TestErrorsNameTheFirstBadLineOnManyLines(t *testing.T) {
	t.Parallel()
	// Several chunks, each decoded on several cores: the error is still
	// the first bad line's, with its number in the file.
	log := bigLog(30000, func(i int) string { return fmt.Sprint("message ", i, strings.Repeat(".", i%200)) })
	require.Greater(t, len(log), 3*readChunk)
	log = strings.Replace(log, `"text":"message 25001.`, `"text":"message 25001\x`, 1)
	log = strings.Replace(log, `"text":"message 29001.`, `"text":"message 29001\x`, 1)
	_, err := Decode(strings.NewReader(log), "many.jsonl")
	require.ErrorContains(t, err, "session log many.jsonl line 25003: invalid JSON")

	// A broken tree before it, in another chunk or the same one, comes
	// first.
	for _, bad := range []int{1001, 24990} {
		broken := strings.Replace(log, fmt.Sprintf(`"id":"e%d","parent_id":"e%d"`, bad, bad-1), fmt.Sprintf(`"id":"e%d","parent_id":"zz"`, bad), 1)
		_, err = Decode(strings.NewReader(broken), "many.jsonl")
		require.ErrorContains(t, err, fmt.Sprintf(`session log many.jsonl line %d: entry e%d: parent_id "zz" names no earlier entry`, bad+2, bad))
	}
}

func TestReadInChunks(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789abcdef", 3*readChunk/16) // a line three times the buffer
	content := bigLog(20000, func(i int) string {
		if i == 7000 || i == 19999 {
			return long
		}
		return fmt.Sprint("message ", i, strings.Repeat("\\n", i%100))
	})
	log, err := Decode(strings.NewReader(content), "big.jsonl")
	require.NoError(t, err)
	require.Len(t, log.Entries, 20000)
	msgs := log.Messages()
	require.Len(t, msgs, 20000)
	require.Equal(t, long, msgs[7000].Text())
	require.Equal(t, long, msgs[19999].Text())
	require.Equal(t, "message 123"+strings.Repeat("\n", 23), msgs[123].Text())

	// Any way the bytes arrive, the result is the same.
	for name, r := range map[string]io.Reader{
		"one byte at a time": iotest.OneByteReader(strings.NewReader(content)),
		"half reads":         iotest.HalfReader(strings.NewReader(content)),
		"data with EOF":      iotest.DataErrReader(strings.NewReader(content)),
		// The size only sizes the buffer and the entries: a file may
		// grow while it is read.
		"size too small": sizedReader{strings.NewReader(content), readChunk + 1},
		"size too large": sizedReader{strings.NewReader(content), 3 * len(content)},
		"size zero":      sizedReader{strings.NewReader(content), 0},
	} {
		got, err := Decode(r, "big.jsonl")
		require.NoError(t, err, name)
		require.Equal(t, log.Entries, got.Entries, name)
	}

	_, err = Decode(iotest.ErrReader(errors.New("disk on fire")), "x.jsonl")
	require.ErrorContains(t, err, "read session log x.jsonl: disk on fire")
}

// sizedReader is a reader that claims to hold n bytes.
type sizedReader struct {
	io.Reader
	n int
}

func (r sizedReader) Len() int { return r.n }

func TestOpenRepairsTornLineAfterManyChunks(t *testing.T) {
	t.Parallel()
	content := bigLog(20000, func(i int) string { return fmt.Sprint("message ", i, strings.Repeat("-", i%300)) })
	require.Greater(t, len(content), 2*readChunk)
	torn := `{"type":"message","id":"x","parent_id":"e19999","time":"2026-01-01T00:00:01Z","message":{"ro`
	path := writeFile(t, "big.jsonl", content+torn)
	w, log, err := Open(path)
	require.NoError(t, err)
	require.Len(t, log.Entries, 20000)
	require.Contains(t, log.Warnings[0], "line 20002: repaired torn last line")
	require.NoError(t, w.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, string(got))
}

func texts(msgs []conversation.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		if m.Role == conversation.RoleSystem {
			out[i] = m.Content[0].Text
		} else {
			out[i] = m.Text()
		}
	}
	return out
}

func ids(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}
