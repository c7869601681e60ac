package openai

import (
	"bytes"
	"encoding/json"
	"github.com/panto-dev/panto/internal/testgen"
	"os"
	"path/filepath"
	"testing"

	"github.com/panto-dev/panto/serializers"
)

func BenchmarkEncodeRequest20k(b *testing.B) {
	req := serializers.Request{
		Model:    "gpt-4o",
		Messages: testgen.Messages(20000),
		Tools: []serializers.Tool{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "grep", Description: "Search files."},
		},
		Stream:    true,
		MaxTokens: 4096,
	}
	body, err := EncodeRequest(req, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeRequest(req, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeStream(b *testing.B) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "streams", "parallel_tools.sse"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(fixture)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeStream(bytes.NewReader(fixture), nil); err != nil {
			b.Fatal(err)
		}
	}
}
