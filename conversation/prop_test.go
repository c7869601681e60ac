package conversation

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// edit builds one message of a random conversation from four small
// numbers: its kind, and which key, text and source it uses. A quarter of
// the texts are empty, so that sections are removed and empty blocks kept.
func edit(kind, key, text, source byte) Message {
	txt := ""
	if text%4 != 0 {
		txt = fmt.Sprintf("text %d", text)
	}
	src := ""
	if source%3 != 0 {
		src = fmt.Sprintf("source %d", source%5)
	}
	k := fmt.Sprintf("key/%d", key)
	var m Message
	switch kind % 12 {
	case 0, 1:
		return UserText(txt)
	case 2:
		return AssistantText(txt)
	case 3, 4:
		m = SystemMessage(txt, ModeAppend)
	case 5:
		m = SystemMessage(txt, ModeReplace)
	case 6, 7, 8, 9:
		m = KeyedSystemMessage(k, txt)
	case 10:
		m = SystemMessage(txt, ModeReplace)
		m.Content[0].Key = k
	default: // two blocks, as another writer may write: a section, then an unkeyed append
		m = Message{Role: RoleSystem, Content: []Block{
			{Type: TypeSystem, Text: txt, Mode: ModeAppend, Key: k},
			{Type: TypeSystem, Text: "second " + txt, Mode: ModeAppend},
		}}
	}
	return m.WithSource(src)
}

// randomConversation returns n messages with keys drawn from the first
// keys key names; one in rare of the replaces is kept, so that a large
// rare makes long prompts.
func randomConversation(r *rand.Rand, n, keys, rare int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		kind := byte(r.IntN(12))
		for (kind == 5 || kind == 10) && r.IntN(rare) != 0 {
			kind = byte(r.IntN(12))
		}
		msgs[i] = edit(kind, byte(r.IntN(keys)), byte(r.IntN(256)), byte(r.IntN(256)))
	}
	return msgs
}

// conversationFromBytes reads a conversation from fuzz input, four bytes
// a message, 100 messages at most (each prefix is derived from scratch).
func conversationFromBytes(data []byte) []Message {
	data = data[:min(len(data), 400)]
	var msgs []Message
	for ; len(data) >= 4; data = data[4:] {
		msgs = append(msgs, edit(data[0], data[1]%40, data[2], data[3]))
	}
	return msgs
}

// model is the derivation written another way, as a reference: the prompt
// is an ordered list of slots and a map from slot to block. A section's
// slot is named by its key, so finding it is a map lookup; every unkeyed
// block gets a numbered slot of its own.
func model(msgs []Message) []SystemText {
	type slot struct {
		key string
		n   int
	}
	var order []slot
	blocks := map[slot]SystemText{}
	fresh := 0
	for i, m := range msgs {
		if m.Role != RoleSystem {
			continue
		}
		for _, b := range m.Content {
			if b.Type != TypeSystem {
				continue
			}
			if b.Mode == ModeReplace {
				order, blocks = nil, map[slot]SystemText{}
			}
			block := SystemText{Text: b.Text, Key: b.Key, Source: b.Source, Index: i}
			if b.Key == "" {
				fresh++
				s := slot{n: fresh}
				order, blocks[s] = append(order, s), block
				continue
			}
			s := slot{key: b.Key}
			_, exists := blocks[s]
			switch {
			case exists && b.Text == "":
				delete(blocks, s)
				order = slices.DeleteFunc(order, func(o slot) bool { return o == s })
			case exists:
				blocks[s] = block
			case b.Text != "":
				order, blocks[s] = append(order, s), block
			}
		}
	}
	var out []SystemText
	for _, s := range order {
		out = append(out, blocks[s])
	}
	return out
}

// checkEveryPrefix checks EffectiveSystem against the model for every
// prefix of msgs, each derived from scratch, and that every message
// round-trips through its JSON shape.
func checkEveryPrefix(t *testing.T, msgs []Message) {
	t.Helper()
	for n := 0; n <= len(msgs); n++ {
		got, want := EffectiveSystem(msgs[:n]), model(msgs[:n])
		if !slices.Equal(got, want) {
			require.Equal(t, want, got, "prefix %d of %d", n, len(msgs)) // require says how they differ
		}
		keys := map[string]bool{}
		for _, b := range got {
			if b.Key != "" {
				require.False(t, keys[b.Key], "prefix %d: key %q twice", n, b.Key)
				require.NotEmpty(t, b.Text, "prefix %d: section %q without text", n, b.Key)
				keys[b.Key] = true
			}
		}
	}
	data, err := json.Marshal(msgs)
	require.NoError(t, err)
	var back []Message
	require.NoError(t, json.Unmarshal(data, &back))
	require.Len(t, back, len(msgs))
	for n := 0; n <= len(msgs); n++ {
		if want, got := EffectiveSystem(msgs[:n]), EffectiveSystem(back[:n]); !slices.Equal(got, want) {
			require.Equal(t, want, got, "prefix %d after a JSON round trip", n)
		}
	}
}

// TestEffectiveSystemMatchesModel: random conversations of keyed, unkeyed,
// append and replace edits among user and assistant messages, from fixed
// seeds. Few keys make many updates and removals; many keys and long
// conversations make long prompts, where sections are found by map.
func TestEffectiveSystemMatchesModel(t *testing.T) {
	t.Parallel()
	for seed := range uint64(250) {
		r := rand.New(rand.NewPCG(seed, 0x5ec7))
		n, keys, rare := 1+r.IntN(60), 1+r.IntN(8), 1
		if seed%25 == 0 {
			n, keys, rare = 120+r.IntN(100), 10+r.IntN(60), 40
		}
		msgs := randomConversation(r, n, keys, rare)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkEveryPrefix(t, msgs) })
	}
}

// FuzzEffectiveSystem is TestEffectiveSystemMatchesModel driven by the
// fuzzer: four bytes a message (see edit).
func FuzzEffectiveSystem(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 0, 1, 0, 6, 1, 1, 1, 0, 0, 1, 0, 6, 1, 2, 2}) // seed, section, user, update
	f.Add([]byte{6, 1, 1, 1, 6, 1, 0, 0, 6, 1, 3, 0})             // add, remove, add again
	f.Add([]byte{6, 1, 1, 1, 5, 0, 1, 0, 6, 1, 2, 0, 10, 2, 3, 1, 6, 2, 5, 0})
	f.Add([]byte{11, 3, 1, 1, 6, 3, 0, 0, 11, 3, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEveryPrefix(t, conversationFromBytes(data))
	})
}
