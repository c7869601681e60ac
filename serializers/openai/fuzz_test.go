package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	c "github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
)

// checkReply holds what every Reply returned without an error promises.
func checkReply(t *testing.T, reply serializers.Reply) {
	t.Helper()
	if reply.Message.Role != c.RoleAssistant {
		t.Fatalf("role %q", reply.Message.Role)
	}
	for i, b := range reply.Message.Content {
		if b.Type == c.TypeToolUse && (!json.Valid(b.Input) || !isObject(b.Input) || b.ID == "" || b.Name == "") {
			t.Fatalf("content[%d]: bad tool call %q %q %q", i, b.ID, b.Name, b.Input)
		}
	}
	if err := reply.Message.Validate(); err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeStream(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed fixtures: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\"}}]}}]}\n\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		deltas := 0
		reply, err := DecodeStream(bytes.NewReader(in), func(serializers.Delta) { deltas++ })
		if err != nil {
			if reply.Message.Content != nil || reply.ID != "" {
				t.Fatalf("a Reply came with the error %v", err)
			}
			return
		}
		if !bytes.Contains(in, []byte(done)) {
			t.Fatal("a Reply without [DONE]")
		}
		checkReply(t, reply)
	})
}

func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":"r"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":null}}`,
		`{"choices":[{"index":0,"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":[1,2]}"}},{"function":{"name":"g","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"message":{"refusal":"no"}}]}`,
		`{"error":{"message":"m","type":"t","code":"c"}}`,
		`{"error":"x"}`,
		`<html>502</html>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if e := DecodeError(500, in, "r"); e == nil || e.Status != 500 || (e.Message == "" && e.Type == "") {
			t.Fatalf("DecodeError gave %#v", e)
		}
		reply, err := DecodeResponse(in)
		if err != nil {
			return
		}
		checkReply(t, reply)
	})
}
