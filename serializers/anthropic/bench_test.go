package anthropic_test

import (
	"github.com/panto-dev/panto/internal/testgen"
	"testing"

	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

func BenchmarkEncodeRequest20k(b *testing.B) {
	req := serializers.Request{
		Model:    "claude-sonnet-4-5",
		Messages: testgen.Messages(20000),
		Tools:    []serializers.Tool{weatherTool, readTool},
		Stream:   true,
	}
	out, err := anthropic.EncodeRequest(req, anthropic.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := anthropic.EncodeRequest(req, anthropic.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
