package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

// checkReply holds what any reply a decoder returns must satisfy: an
// assistant message whose blocks are valid, tool inputs JSON objects
// included.
func checkReply(t *testing.T, r serializers.Reply) {
	t.Helper()
	if err := r.Message.Validate(); err != nil {
		t.Fatalf("reply message is invalid: %v", err)
	}
	for _, b := range r.Message.ToolUses() {
		if !json.Valid(b.Input) || !bytes.HasPrefix(b.Input, []byte("{")) {
			t.Fatalf("tool %s input is not a JSON object: %q", b.ID, b.Input)
		}
	}
}

func FuzzDecodeStream(f *testing.F) {
	for _, file := range mustGlob(f, streamsDir, "*.sse") {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var deltas int
		reply, err := anthropic.DecodeStream(bytes.NewReader(in), func(serializers.Delta) { deltas++ })
		if err != nil {
			if reply.Message.Content != nil || reply.ID != "" {
				t.Fatalf("an error came with a reply: %v", err)
			}
			return
		}
		if !bytes.Contains(in, []byte("message_stop")) {
			t.Fatalf("a reply from a stream without message_stop")
		}
		checkReply(t, reply)
	})
}

// mustGlob returns the seed files; a fuzz target without seeds would
// start blind, so none is an error.
func mustGlob(f *testing.F, dir, pattern string) []string {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files %s/%s: %v", dir, pattern, err)
	}
	return files
}

func FuzzDecodeResponse(f *testing.F) {
	for _, file := range mustGlob(f, responsesDir, "*.json") {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"error","error":{"type":"api_error","message":"x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		reply, err := anthropic.DecodeResponse(body)
		if err != nil {
			var apiErr *serializers.APIError
			if errors.As(err, &apiErr) && apiErr.Status != 200 {
				t.Fatalf("status %d for an error body in a 200 response", apiErr.Status)
			}
			return
		}
		checkReply(t, reply)
		_ = anthropic.DecodeError(400, body, "") // must not panic either
	})
}
