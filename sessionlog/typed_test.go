package sessionlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/golden"
)

// What the user typed, kept apart from what panto added to it (the
// USER_PROMPT.md blocks, marked "added"): the first message a session
// list shows is what was typed, in a log written with the marker and in
// one written before it.

// typedEntries is a session as panto records it with a project and a
// user USER_PROMPT.md: every user message holds both files' texts first,
// marked added from their files, then what was typed.
func typedEntries() []Entry {
	prompt := func(typed string) conversation.Message {
		return conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
			conversation.AddedText("Answer in one paragraph.\n", "project /home/ann/proj/.panto/USER_PROMPT.md"),
			conversation.AddedText("Be kind.", "user /home/ann/.config/panto/USER_PROMPT.md"),
			conversation.Text(typed),
		}}
	}
	var es []Entry
	add := func(e Entry) {
		n := len(es) + 1
		e.ID = fmt.Sprintf("%016x", 0xc0+n)
		e.Time = t0.Add(time.Duration(n) * time.Second)
		es = append(es, e)
	}
	add(MessageEntry(conversation.SystemMessage("You are panto, a coding agent.\n", conversation.ModeAppend).WithSource("built-in default")))
	add(LifecycleEntry(LifecycleStarted, false, []string{}))
	add(MessageEntry(prompt("fix the lexer bug")))
	add(MessageEntry(conversation.AssistantText("Done.")))
	add(MessageEntry(prompt("now the escapes")))
	return es
}

func writeTyped(t *testing.T, dir string, es []Entry) string {
	t.Helper()
	path := filepath.Join(dir, "typed.jsonl")
	w, err := Create(path, Header{Version: Version, ID: "7a1c2a5e-3b7d-4c09-8e2f-1a2b3c4d5e6f", Created: t0, Cwd: "/home/ann/proj"})
	require.NoError(t, err)
	_, err = w.Append(es...)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return path
}

// TestTypedGolden: testdata/typed.jsonl is what the writer makes of a
// session with USER_PROMPT.md files; it reads back with the marks, and
// its first message, read whole, scanned or cached, is what was typed.
func TestTypedGolden(t *testing.T) {
	t.Parallel()
	goldenPath := filepath.Join("testdata", "typed.jsonl")
	path := writeTyped(t, t.TempDir(), typedEntries())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	golden.Check(t, goldenPath, got)
	require.Contains(t, string(got), `{"type":"text","added":"project /home/ann/proj/.panto/USER_PROMPT.md","text":"Answer in one paragraph.\n"}`)

	log, err := Read(goldenPath)
	require.NoError(t, err)
	var want []conversation.Message
	for _, e := range typedEntries() {
		if e.Message != nil {
			want = append(want, *e.Message)
		}
	}
	require.Equal(t, want, log.Messages())
	first := log.Messages()[1]
	require.Equal(t, "fix the lexer bug", first.Typed())
	require.Equal(t, "Answer in one paragraph.\nBe kind.fix the lexer bug", first.Text(), "what was sent is every block")

	require.Equal(t, "fix the lexer bug", log.FirstUserText())
	sum, err := Summarize(goldenPath)
	require.NoError(t, err)
	require.Equal(t, "fix the lexer bug", sum.FirstUserText)
	cached, err := CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, "fix the lexer bug", cached.FirstUserText)
	cached, err = CachedSummary(path) // from the sidecar
	require.NoError(t, err)
	require.Equal(t, "fix the lexer bug", cached.FirstUserText)
}

// TestTypedOldLog: testdata/userprompt-old.jsonl was written by a panto
// before the marker, with a USER_PROMPT.md: nothing in it is marked, it
// reads back as it always did (every block sent), and what was typed is
// each user message's last text block.
func TestTypedOldLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "userprompt-old.jsonl")
	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	var users []conversation.Message
	for _, m := range log.Messages() {
		for _, b := range m.Content {
			require.Empty(t, b.Added)
		}
		if m.Role == conversation.RoleUser {
			users = append(users, m)
		}
	}
	require.Len(t, users, 2)
	require.Equal(t, "Answer in one paragraph.\nfix the lexer bug", users[0].Text(), "the request is what it was")
	require.Equal(t, "fix the lexer bug", users[0].Typed())
	require.Equal(t, "now the escapes", users[1].Typed())

	require.Equal(t, "fix the lexer bug", log.FirstUserText())
	sum, err := Summarize(path)
	require.NoError(t, err)
	require.Equal(t, "fix the lexer bug", sum.FirstUserText)
}

// TestTypedBigFirstMessage: a first message of megabytes is read by
// streaming (firstText), with the same rule: the typed text, marked or
// old, however large either part.
func TestTypedBigFirstMessage(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("pasted log line é\n", 3*bigLine/18)
	for _, tc := range []struct {
		name    string
		content []conversation.Block
		want    string
	}{
		{"a big USER_PROMPT.md", []conversation.Block{conversation.AddedText(big, "project /p/.panto/USER_PROMPT.md"), conversation.Text("short")}, "short"},
		{"a big typed text", []conversation.Block{conversation.AddedText("rules", "project /p/.panto/USER_PROMPT.md"), conversation.Text(big)}, excerpt(big)},
		{"old, a big USER_PROMPT.md", []conversation.Block{conversation.Text(big), conversation.Text("short")}, "short"},
		{"old, a big typed text", []conversation.Block{conversation.Text("rules"), conversation.Text(big)}, excerpt(big)},
		{"only what panto added", []conversation.Block{conversation.AddedText(big, "project /p/.panto/USER_PROMPT.md")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			es := []Entry{MessageEntry(conversation.SystemMessage("seed", conversation.ModeReplace)),
				MessageEntry(conversation.Message{Role: conversation.RoleUser, Content: tc.content}),
				MessageEntry(conversation.AssistantText("ok"))}
			path := writeTyped(t, t.TempDir(), es)
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.Greater(t, st.Size(), int64(bigLine))
			sum, err := Summarize(path)
			require.NoError(t, err)
			require.Equal(t, tc.want, sum.FirstUserText)
			require.Equal(t, summaryOfRead(t, path), sum)
		})
	}
}

// TestSummaryFormat2Rebuilt: a sidecar of format 2 held the text of the
// first message with its USER_PROMPT.md blocks; it is not believed, even
// when it matches the log, and is rebuilt with what was typed.
func TestSummaryFormat2Rebuilt(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "userprompt-old.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "old.jsonl")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	st, err := os.Stat(path)
	require.NoError(t, err)
	sf := summaryFile{Format: 2, Size: st.Size(), MTime: st.ModTime().UnixNano(),
		Session:  headerLine{Type: headerType, Version: 1, ID: "f6a2860b-4644-4fa6-bef9-ff39e68751ee", Created: "2026-12-01T19:46:29.923797498Z", Cwd: "/home/ann/proj"},
		Messages: 5, Branches: 1, Entries: 8, FirstUserText: "Answer in one paragraph.\nfix the lexer bug"}
	side, err := json.Marshal(sf)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(summaryPath(path), side, 0o600))

	sum, err := CachedSummary(path)
	require.NoError(t, err)
	require.Equal(t, "fix the lexer bug", sum.FirstUserText)
	side, err = os.ReadFile(summaryPath(path))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(side, &sf))
	require.Equal(t, summaryFormat, sf.Format)
	require.Equal(t, "fix the lexer bug", sf.FirstUserText)
}
