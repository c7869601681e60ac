package conversation_test

import (
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
