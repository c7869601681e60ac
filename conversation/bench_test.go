package conversation_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testgen"
)

// BenchmarkEffectiveSystem20k derives the prompt of a 20,000-message
// session without sections, as every request and every rebuild does.
func BenchmarkEffectiveSystem20k(b *testing.B) {
	benchmarkEffectiveSystem(b, testgen.Messages(20000))
}

// BenchmarkEffectiveSystem20kSections is the same session with one
// message in 25 a section's update (8 sections, an empty text now and
// then, so they are removed and added again) and 40 unkeyed blocks at the
// start, so sections are found by map.
func BenchmarkEffectiveSystem20kSections(b *testing.B) {
	msgs := testgen.Messages(20000)
	for i := 2; i < 42; i++ {
		msgs[i] = conversation.SystemMessage(fmt.Sprint("block ", i), conversation.ModeAppend)
	}
	for i := 42; i < len(msgs); i += 25 {
		text := fmt.Sprint("section text ", i)
		if i%7 == 0 {
			text = ""
		}
		msgs[i] = conversation.KeyedSystemMessage(fmt.Sprint("section/", i%8), text).WithSource("extension bench")
	}
	benchmarkEffectiveSystem(b, msgs)
}

func benchmarkEffectiveSystem(b *testing.B, msgs []conversation.Message) {
	b.ReportAllocs()
	for b.Loop() {
		if len(conversation.EffectiveSystem(msgs)) == 0 {
			b.Fatal("no prompt")
		}
	}
}

// BenchmarkMarshalMessages20k encodes a 20,000-message session as the
// host hands it to an extension (GetMessages): json.Marshal of the list.
func BenchmarkMarshalMessages20k(b *testing.B) {
	msgs := testgen.Messages(20000)
	out, err := json.Marshal(msgs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalMessages20k decodes it, as an extension does.
func BenchmarkUnmarshalMessages20k(b *testing.B) {
	data, err := json.Marshal(testgen.Messages(20000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var msgs []conversation.Message
		if err := json.Unmarshal(data, &msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalMessagesList is BenchmarkMarshalMessages20k with
// conversation.MarshalMessages.
func BenchmarkMarshalMessagesList20k(b *testing.B) {
	msgs := testgen.Messages(20000)
	out, err := conversation.MarshalMessages(msgs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conversation.MarshalMessages(msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalMessagesList20k is BenchmarkUnmarshalMessages20k with
// conversation.UnmarshalMessages.
func BenchmarkUnmarshalMessagesList20k(b *testing.B) {
	data, err := json.Marshal(testgen.Messages(20000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conversation.UnmarshalMessages(data); err != nil {
			b.Fatal(err)
		}
	}
}
