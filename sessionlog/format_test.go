package sessionlog

import (
	"encoding/json"
	"github.com/panto-dev/panto/internal/golden"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

func TestRoundTripEveryEntryAndBlockType(t *testing.T) {
	t.Parallel()
	path, recorded := writeSample(t, t.TempDir())
	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, sampleHeader, log.Header)
	require.Equal(t, recorded, log.Entries)
	require.Equal(t, sampleMessages(), log.Messages())
	require.Equal(t, len(sampleMessages()), log.MessageCount())
	require.Equal(t, "Fix the failing test in sessionlog, please.", log.FirstUserText())

	// Every block type and both modes really are in the sample.
	types := map[conversation.BlockType]bool{}
	modes := map[conversation.Mode]bool{}
	for _, m := range log.Messages() {
		for _, b := range m.Content {
			types[b.Type] = true
			modes[b.Mode] = true
			for _, c := range b.Content {
				types[c.Type] = true
			}
		}
	}
	for _, bt := range []conversation.BlockType{conversation.TypeText, conversation.TypeThinking,
		conversation.TypeRedactedThinking, conversation.TypeToolUse, conversation.TypeToolResult,
		conversation.TypeImage, conversation.TypeSystem} {
		require.True(t, types[bt], "sample lacks a %s block", bt)
	}
	require.True(t, modes[conversation.ModeAppend] && modes[conversation.ModeReplace])
}

func TestGolden(t *testing.T) {
	t.Parallel()
	goldenPath := filepath.Join("testdata", "golden.jsonl")
	path, _ := writeSample(t, t.TempDir())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	golden.Check(t, goldenPath, got)

	// The golden file reads back as the sample conversation, and copying
	// its entries into a new log reproduces it byte for byte.
	log, err := Read(goldenPath)
	require.NoError(t, err)
	require.Equal(t, sampleMessages(), log.Messages())
	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	w, err := Create(copyPath, log.Header)
	require.NoError(t, err)
	_, err = w.Append(log.Entries...)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	copied, err := os.ReadFile(copyPath)
	require.NoError(t, err)
	require.Equal(t, string(got), string(copied))
}

func TestSystemMessageJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  conversation.Message
		want string
	}{
		{"append", conversation.SystemMessage("be brief", conversation.ModeAppend),
			`{"role":"system","mode":"append","content":[{"type":"text","text":"be brief"}]}`},
		{"replace", conversation.SystemMessage("start over", conversation.ModeReplace),
			`{"role":"system","mode":"replace","content":[{"type":"text","text":"start over"}]}`},
		{"empty mode is append", conversation.Message{Role: conversation.RoleSystem, Content: []conversation.Block{{Type: conversation.TypeSystem, Text: "x"}}},
			`{"role":"system","mode":"append","content":[{"type":"text","text":"x"}]}`},
		{"empty text kept", conversation.SystemMessage("", conversation.ModeReplace),
			`{"role":"system","mode":"replace","content":[{"type":"text","text":""}]}`},
		{"source", conversation.SystemMessage("rules", conversation.ModeAppend).WithSource("--append-system-prompt"),
			`{"role":"system","mode":"append","source":"--append-system-prompt","content":[{"type":"text","text":"rules"}]}`},
		{"section", conversation.KeyedSystemMessage("tools", "Use <the> tools & \"more\".").WithSource("extension tools"),
			`{"role":"system","mode":"append","key":"tools","source":"extension tools","content":[{"type":"text","text":"Use <the> tools & \"more\"."}]}`},
		{"section removed", conversation.KeyedSystemMessage("env/cwd", ""),
			`{"role":"system","mode":"append","key":"env/cwd","content":[{"type":"text","text":""}]}`},
		{"user has no mode", conversation.UserText("hi <b> & \"q\""),
			`{"role":"user","content":[{"type":"text","text":"hi <b> & \"q\""}]}`},
		{"tool use keeps input", conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
			conversation.ToolUse("t1", "read", json.RawMessage(`{"path":"a.go"}`))}},
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{"path":"a.go"}}]}`},
		{"empty content", conversation.Message{Role: conversation.RoleUser},
			`{"role":"user","content":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "s.jsonl")
			w, err := Create(path, Header{Cwd: "/"})
			require.NoError(t, err)
			got, err := w.Append(MessageEntry(tt.msg))
			require.NoError(t, err)
			require.NoError(t, w.Close())
			ls := lines(t, path)
			require.Len(t, ls, 2)
			e := got[0]
			prefix := `{"type":"message","id":"` + e.ID + `","time":"` + formatTime(e.Time) + `","message":`
			require.Equal(t, prefix+tt.want+"}", ls[1])

			log, err := Read(path)
			require.NoError(t, err)
			want := tt.msg
			if want.Role == conversation.RoleSystem {
				b := tt.msg.Content[0]
				want = conversation.SystemMessage(b.Text, b.Mode).WithSource(b.Source)
				want.Content[0].Key = b.Key
			}
			require.Equal(t, []conversation.Message{want}, log.Messages())
		})
	}
}

func TestModelessOldLogReadsAsAppend(t *testing.T) {
	t.Parallel()
	log, err := Read(filepath.Join("testdata", "modeless.jsonl"))
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	msgs := log.Messages()
	require.Equal(t, []conversation.Message{
		conversation.SystemMessage("You are a helpful assistant.", conversation.ModeAppend),
		conversation.SystemMessage("Project: panto.", conversation.ModeAppend),
		conversation.UserText("hello"),
		conversation.AssistantText("Hi! How can I help?"),
	}, msgs)
	require.Equal(t, []string{"You are a helpful assistant.", "Project: panto."},
		conversation.Texts(conversation.EffectiveSystem(msgs)))
}

func TestSystemMessageWithSeveralBlocks(t *testing.T) {
	t.Parallel()
	const head = `{"type":"session","version":1,"id":"s","created":"2026-01-01T00:00:00Z","cwd":"/"}` + "\n"
	const entry = `{"type":"message","id":"a1","time":"2026-01-01T00:00:01Z","message":`
	tests := []struct {
		name    string
		message string
		want    []conversation.Block
	}{
		{"replace then appends", `{"role":"system","mode":"replace","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}`,
			[]conversation.Block{conversation.System("one", conversation.ModeReplace), conversation.System("two", conversation.ModeAppend)}},
		{"no mode", `{"role":"system","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}`,
			[]conversation.Block{conversation.System("one", conversation.ModeAppend), conversation.System("two", conversation.ModeAppend)}},
		{"empty mode", `{"role":"system","mode":"","content":[{"type":"text","text":"one"}]}`,
			[]conversation.Block{conversation.System("one", conversation.ModeAppend)}},
		{"key on the first block, source on all", `{"role":"system","mode":"append","key":"k","source":"s","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}`,
			[]conversation.Block{
				{Type: conversation.TypeSystem, Text: "one", Mode: conversation.ModeAppend, Key: "k", Source: "s"},
				{Type: conversation.TypeSystem, Text: "two", Mode: conversation.ModeAppend, Source: "s"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log, err := Decode(strings.NewReader(head+entry+tt.message+"}\n"), "x.jsonl")
			require.NoError(t, err)
			msgs := log.Messages()
			require.Equal(t, []conversation.Message{{Role: conversation.RoleSystem, Content: tt.want}}, msgs)

			// Written back, it keeps its meaning and its shape.
			path := filepath.Join(t.TempDir(), "s.jsonl")
			w, err := Create(path, Header{Cwd: "/"})
			require.NoError(t, err)
			_, err = w.Append(log.Entries...)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			again, err := Read(path)
			require.NoError(t, err)
			require.Equal(t, msgs, again.Messages())
		})
	}
}

func TestEffectiveSystemOfEveryPrefix(t *testing.T) {
	t.Parallel()
	path, recorded := writeSample(t, t.TempDir())
	log, err := Read(path)
	require.NoError(t, err)
	orig, rebuilt := sampleMessages(), log.Messages()
	require.Len(t, rebuilt, len(orig))
	for n := 0; n <= len(orig); n++ {
		require.Equal(t, conversation.EffectiveSystem(orig[:n]), conversation.EffectiveSystem(rebuilt[:n]), "prefix %d", n)
	}
	require.Equal(t, []string{"You are panto. Configuration changed: new seed.", "Appended after the re-seed: 日本語, emoji 🚀, tab\tand \u2028."},
		conversation.Texts(conversation.EffectiveSystem(rebuilt)))

	// The conversation as of each entry is the prefix up to it.
	n := 0
	for _, e := range recorded {
		if e.Message != nil {
			n++
		}
		at, err := log.MessagesAt(e.ID)
		require.NoError(t, err)
		require.Equal(t, orig[:n], at, "as of entry %s", e.ID)
		require.Equal(t, conversation.EffectiveSystem(orig[:n]), conversation.EffectiveSystem(at))
	}
}

func TestAppendRejectsBadEntries(t *testing.T) {
	t.Parallel()
	bad := []struct {
		name  string
		entry Entry
		want  string
	}{
		{"no type", Entry{}, "without a type"},
		{"header type", Entry{Type: "session"}, "reserved for the header"},
		{"message without message", Entry{Type: TypeMessage}, "without a message"},
		{"invalid message", MessageEntry(conversation.Message{Role: "robot"}), "unknown role"},
		{"system block in user message", MessageEntry(conversation.Message{Role: conversation.RoleUser,
			Content: []conversation.Block{conversation.System("x", conversation.ModeAppend)}}), "cannot hold"},
		{"second block replaces", MessageEntry(conversation.Message{Role: conversation.RoleSystem, Content: []conversation.Block{
			conversation.System("a", conversation.ModeAppend), conversation.System("b", conversation.ModeReplace)}}), "only the first block"},
		{"second block keyed", MessageEntry(conversation.Message{Role: conversation.RoleSystem, Content: []conversation.Block{
			conversation.System("a", conversation.ModeAppend), {Type: conversation.TypeSystem, Text: "b", Key: "k"}}}), "content[1] has a key: only the first block"},
		{"second block of another source", MessageEntry(conversation.Message{Role: conversation.RoleSystem, Content: []conversation.Block{
			conversation.System("a", conversation.ModeAppend), {Type: conversation.TypeSystem, Text: "b", Source: "s"}}}), "share its source"},
		{"invalid key", MessageEntry(conversation.KeyedSystemMessage("no spaces please", "x")), `invalid key "no spaces please"`},
		{"key on a text block", MessageEntry(conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{{Type: conversation.TypeText, Text: "x", Key: "k"}}}),
			"only a system block may have a key"},
		{"lifecycle without event", LifecycleEntry("", false, nil), "lifecycle entry without an event"},
		{"lifecycle without payload", Entry{Type: TypeLifecycle}, "without its payload"},
		{"extension without name", ExtensionDataEntry("", nil), "without an extension name"},
		{"extension data not JSON", ExtensionDataEntry("x", json.RawMessage(`{`)), "not valid JSON"},
		{"model change without model", ModelChangeEntry("anthropic", ""), "without provider and model"},
		{"unknown type without raw", Entry{Type: "bookmark"}, "without its raw line"},
		{"raw of other type", Entry{Type: "bookmark", Raw: json.RawMessage(`{"type":"note","id":"x1"}`)}, `its line has type "note"`},
		{"raw without id", Entry{Type: "bookmark", Raw: json.RawMessage(`{"type":"bookmark"}`)}, "its line has no id"},
		{"raw without parent", Entry{Type: "bookmark", Raw: json.RawMessage(`{"type":"bookmark","id":"x1"}`)}, "no parent_id"},
		{"raw with unknown parent", Entry{Type: "bookmark", Raw: json.RawMessage(`{"type":"bookmark","id":"x1","parent_id":"nope"}`)}, "names no entry"},
		{"unknown parent", MessageEntry(conversation.UserText("x")).WithParent("0123456789abcdef"), "names no entry"},
		{"duplicate id", Entry{Type: TypeModelChange, ID: "00000000000000a1", ModelChange: &ModelChange{"p", "m"}}, "already used"},
	}
	path, _ := writeSample(t, t.TempDir())
	w, _, err := Open(path)
	require.NoError(t, err)
	defer w.Close()
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, tt := range bad {
		_, err := w.Append(MessageEntry(conversation.UserText("fine")), tt.entry)
		require.ErrorContains(t, err, tt.want, tt.name)
		require.ErrorContains(t, err, "append to session log "+path, tt.name)
		require.ErrorContains(t, err, "entry 2 of 2", tt.name)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused batch writes nothing")
}

func TestIDs(t *testing.T) {
	t.Parallel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for range 1000 {
		id, eid := NewID(), newEntryID()
		require.Regexp(t, uuid, id)
		require.Regexp(t, hex16, eid)
		require.False(t, seen[id] || seen[eid])
		seen[id], seen[eid] = true, true
	}
}
