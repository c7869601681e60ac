package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/quick"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/golden"
	"github.com/stretchr/testify/require"
)

// sectionMessages is a conversation whose prompt has sections (keyed
// system blocks) and sources: an update in place, a removal, a replace
// that wipes them, a section added and updated after it.
func sectionMessages() []conversation.Message {
	sys := func(text string, mode conversation.Mode, source string) conversation.Message {
		return conversation.SystemMessage(text, mode).WithSource(source)
	}
	section := func(key, text, source string) conversation.Message {
		return conversation.KeyedSystemMessage(key, text).WithSource(source)
	}
	persona := sys("You are a reviewer.", conversation.ModeReplace, "extension persona")
	persona.Content[0].Key = "persona"
	return []conversation.Message{
		sys("You are panto, a coding agent.\n", conversation.ModeAppend, "base /home/u/.local/share/panto/agent/SYSTEM.md"),
		sys("Project rules: run `make lint`.", conversation.ModeAppend, "project /home/u/project/.panto/APPEND_SYSTEM.md"),
		section("tools", "Tools: read, edit.", "extension tools"),
		section("env", "cwd: /home/u/project", "extension env"),
		conversation.UserText("Add a bash tool."),
		section("tools", "Tools: read, edit, bash.", "extension tools"),
		conversation.AssistantText("Done."),
		section("env", "", "extension env"),
		sys("You are panto. Configuration changed.", conversation.ModeReplace, "panto re-seed: project /p/.panto/SYSTEM.md"),
		section("tools", "Tools: read.", `extension "tools" <v2> & more`),
		conversation.SystemMessage("no source", conversation.ModeAppend),
		section("tools", "Tools: read, grep.", "extension tools"),
		persona,
		section("persona", "You are a strict reviewer.", "extension persona"),
		conversation.UserText("Review it."),
	}
}

// sectionEntries is sectionMessages as entries with fixed ids and times,
// a lifecycle entry after the seed.
func sectionEntries() []Entry {
	var es []Entry
	add := func(e Entry) {
		n := len(es) + 1
		e.ID = fmt.Sprintf("%016x", 0xb0+n)
		e.Time = t0.Add(time.Duration(n) * time.Second)
		es = append(es, e)
	}
	for i, m := range sectionMessages() {
		add(MessageEntry(m))
		if i == 1 {
			add(LifecycleEntry(LifecycleStarted, true, []string{"tools", "env", "persona"}))
		}
	}
	return es
}

func writeSections(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "sections.jsonl")
	w, err := Create(path, sampleHeader)
	require.NoError(t, err)
	_, err = w.Append(sectionEntries()...)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return path
}

// TestSectionsGolden: testdata/sections.jsonl is what the writer makes of
// sectionMessages, it reads back as them, and the prompt of every prefix
// is the same (texts, keys, sources and indexes).
func TestSectionsGolden(t *testing.T) {
	t.Parallel()
	goldenPath := filepath.Join("testdata", "sections.jsonl")
	got, err := os.ReadFile(writeSections(t, t.TempDir()))
	require.NoError(t, err)
	golden.Check(t, goldenPath, got)

	log, err := Read(goldenPath)
	require.NoError(t, err)
	orig, rebuilt := sectionMessages(), log.Messages()
	require.Equal(t, orig, rebuilt)
	for n := range len(orig) + 1 {
		require.Equal(t, conversation.EffectiveSystem(orig[:n]), conversation.EffectiveSystem(rebuilt[:n]), "prefix %d", n)
	}
	require.Equal(t, []conversation.SystemText{
		{Text: "You are a strict reviewer.", Key: "persona", Source: "extension persona", Index: 13},
	}, conversation.EffectiveSystem(rebuilt))
	require.Equal(t, []conversation.SystemText{
		{Text: "You are panto. Configuration changed.", Source: "panto re-seed: project /p/.panto/SYSTEM.md", Index: 8},
		{Text: "Tools: read, grep.", Key: "tools", Source: "extension tools", Index: 11},
		{Text: "no source", Index: 10},
	}, conversation.EffectiveSystem(rebuilt[:12]))
	require.Equal(t, []string{"You are panto, a coding agent.\n", "Project rules: run `make lint`.", "Tools: read, edit, bash."},
		conversation.Texts(conversation.EffectiveSystem(rebuilt[:8])), "the env section removed, tools updated in place")
}

// TestMessageLinesAreConversationJSON: a message entry's "message" is
// exactly conversation.Message's JSON, in every log under testdata/ (old
// and new): there is one shape of a message.
func TestMessageLinesAreConversationJSON(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	checked := 0
	for _, p := range paths {
		log, err := Read(p)
		require.NoError(t, err)
		for i, l := range lines(t, p)[1:] {
			var raw struct {
				Type    EntryType       `json:"type"`
				Message json.RawMessage `json:"message"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &raw))
			e := log.Entries[i]
			if e.Message == nil {
				continue
			}
			// The log writes an image by its sum, its data beside it.
			stored, err := storeImages(ImageDir(p), e.Message)
			require.NoError(t, err)
			e.Message = stored
			var m conversation.Message
			require.NoError(t, json.Unmarshal(raw.Message, &m), "%s line %d", p, i+2)
			require.Equal(t, *e.Message, m, "%s line %d: json.Unmarshal reads what the log reads", p, i+2)
			if p == filepath.Join("testdata", "modeless.jsonl") {
				continue // written before modes: panto writes the mode now
			}
			var buf bytes.Buffer
			enc := newEncoder(&buf)
			require.NoError(t, enc.Encode(*e.Message))
			require.Equal(t, string(raw.Message)+"\n", buf.String(), "%s line %d: json.Marshal writes what the log writes", p, i+2)
			checked++
		}
	}
	require.Greater(t, checked, 20)
}

// TestOldLogsHaveNoSections: the logs written before keys and sources read
// back without either, so every prompt in them is what it always was.
func TestOldLogsHaveNoSections(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"golden.jsonl", "modeless.jsonl", "branched.jsonl"} {
		log, err := Read(filepath.Join("testdata", name))
		require.NoError(t, err)
		for _, e := range log.Entries {
			if e.Message == nil {
				continue
			}
			for _, b := range e.Message.Content {
				require.Empty(t, b.Key, name)
				require.Empty(t, b.Source, name)
			}
		}
	}
}

// TestFastDecoderTakesWhatPantoWrites: every message line the writer
// writes, sections and sources included, is decoded by the shortcut (a
// line it gave up on would still be read right, only slower).
func TestFastDecoderTakesWhatPantoWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	samplePath, _ := writeSample(t, dir)
	for _, p := range []string{samplePath, writeSections(t, dir)} {
		var fd fastDecoder
		for i, l := range lines(t, p)[1:] {
			var w wireEntry
			if bytes.HasPrefix([]byte(l), []byte(`{"type":"message"`)) {
				require.True(t, fd.entry([]byte(l), &w), "%s line %d: %s", p, i+2, l)
			}
		}
	}
}

// TestSectionsRoundTripProperty: random conversations of keyed, unkeyed,
// append and replace edits among user and assistant messages, from fixed
// seeds, written with Create and Append in batches and read back: the
// prompt of every prefix is the same (texts, keys, sources, indexes).
func TestSectionsRoundTripProperty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 0x106))
		orig := make([]conversation.Message, 1+r.IntN(80))
		keys := 1 + r.IntN(6)
		for i := range orig {
			orig[i] = edit{uint8(r.IntN(256)), uint8(r.IntN(keys)), uint8(r.IntN(256)), uint8(r.IntN(256))}.message()
		}
		var batches [][]conversation.Message // of one to five messages
		for rest := orig; len(rest) > 0; {
			k := min(len(rest), 1+r.IntN(5))
			batches, rest = append(batches, rest[:k]), rest[k:]
		}
		rebuilt := writeAndRead(t, filepath.Join(dir, fmt.Sprintf("s%d.jsonl", seed)), batches...)
		requireSamePrompts(t, orig, rebuilt)
	}
}

// TestSectionsRoundTripQuick is TestSectionsRoundTripProperty with the
// conversations testing/quick makes up (other ones on every run; a
// failure prints the one that failed).
func TestSectionsRoundTripQuick(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	prop := func(edits []edit) bool {
		orig := make([]conversation.Message, len(edits))
		for i, e := range edits {
			orig[i] = e.message()
		}
		n++
		rebuilt := writeAndRead(t, filepath.Join(dir, fmt.Sprintf("q%d.jsonl", n)), orig)
		requireSamePrompts(t, orig, rebuilt)
		return true
	}
	require.NoError(t, quick.Check(prop, &quick.Config{MaxCount: 60}))
}

// writeAndRead writes the batches of messages into a new log at path, one
// Append each, and returns the messages read back.
func writeAndRead(t *testing.T, path string, batches ...[]conversation.Message) []conversation.Message {
	t.Helper()
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	for _, b := range batches {
		es := make([]Entry, len(b))
		for i, m := range b {
			es[i] = MessageEntry(m)
		}
		if len(es) > 0 {
			_, err := w.Append(es...)
			require.NoError(t, err)
		}
	}
	require.NoError(t, w.Close())
	log, err := Read(path)
	require.NoError(t, err)
	return log.Messages()
}

// requireSamePrompts checks that the prompt of every prefix of got is the
// prompt of the same prefix of want.
func requireSamePrompts(t *testing.T, want, got []conversation.Message) {
	t.Helper()
	require.Len(t, got, len(want))
	for n := range len(want) + 1 {
		w, g := conversation.EffectiveSystem(want[:n]), conversation.EffectiveSystem(got[:n])
		if !slices.Equal(w, g) {
			require.Equal(t, w, g, "prefix %d of %d", n, len(want))
		}
	}
}

// edit is one message of a random conversation, from four small numbers:
// user or assistant text, or a system message that appends or replaces,
// keyed (one of six keys) or not, with an empty text one time in four,
// with a source or not.
type edit struct{ Kind, Key, Text, Source uint8 }

func (e edit) message() conversation.Message {
	text := ""
	if e.Text%4 != 0 {
		text = fmt.Sprintf("text %d\n\"é\" <%d>", e.Text%8, e.Text)
	}
	key := fmt.Sprintf("sec/%d", e.Key%6)
	var m conversation.Message
	switch e.Kind % 8 {
	case 0:
		return conversation.UserText(text)
	case 1:
		return conversation.AssistantText(text)
	case 2:
		m = conversation.SystemMessage(text, conversation.ModeAppend)
	case 3:
		m = conversation.SystemMessage(text, conversation.ModeReplace)
		if e.Kind&0x80 != 0 {
			m.Content[0].Key = key
		}
	default:
		m = conversation.KeyedSystemMessage(key, text)
	}
	if e.Source%3 != 0 {
		m = m.WithSource(fmt.Sprintf("extension e%d", e.Source%3))
	}
	return m
}
