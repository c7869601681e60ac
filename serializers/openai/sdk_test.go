package openai_test

// Independent cross-checks: what panto writes and reads is held against
// things panto's authors did not write, the official Go SDK
// (github.com/openai/openai-go/v3) and OpenAI's published OpenAPI schema.
// They live in this external test package so the SDK stays a test-only
// dependency.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/internal/wirespec"
	panto "github.com/panto-dev/panto/serializers/openai"
)

// goldenRequests returns every golden request body by file name.
func goldenRequests(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "requests", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = b
	}
	return out
}

// Canaries are known-bad bodies: each check must reject them, or the check
// proves nothing.
const (
	canaryBase = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]`
)

// ---- (a) round trip through the SDK's ChatCompletionNewParams ----

func decodeTree(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	return v, dec.Decode(&v)
}

// sdkRoundTrip decodes body into the SDK's ChatCompletionNewParams,
// re-encodes it and reports any difference of the two JSON trees after
// the normalisation wire.md §3 documents for this SDK:
//   - "stream" is dropped (the SDK sets it itself in NewStreaming);
//   - "content": null of an assistant message is dropped;
//   - tool_choice objects are checked on their own (see below).
func sdkRoundTrip(body []byte) error {
	ours, err := decodeTree(body)
	if err != nil {
		return err
	}
	var p openai.ChatCompletionNewParams
	if err := p.UnmarshalJSON(body); err != nil {
		return fmt.Errorf("SDK rejects the body: %w", err)
	}
	out, err := p.MarshalJSON()
	if err != nil {
		return fmt.Errorf("SDK cannot re-encode: %w", err)
	}
	theirs, err := decodeTree(out)
	if err != nil {
		return err
	}

	delete(ours, "stream")
	if msgs, ok := ours["messages"].([]any); ok {
		for _, m := range msgs {
			if m, ok := m.(map[string]any); ok {
				if c, present := m["content"]; present && c == nil {
					delete(m, "content")
				}
			}
		}
	}
	// SDK v3.98.0 decodes an object tool_choice into the union's
	// OfAllowedTools variant whatever its type and drops function.name, so
	// the named choice is round-tripped through its own variant type.
	if tc, ok := ours["tool_choice"].(map[string]any); ok {
		raw, _ := json.Marshal(tc)
		var named openai.ChatCompletionNamedToolChoiceParam
		if err := named.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("SDK rejects tool_choice: %w", err)
		}
		again, err := named.MarshalJSON()
		if err != nil {
			return err
		}
		tcTree, err := decodeTree(again)
		if err != nil {
			return err
		}
		if !equalTrees(tc, tcTree) {
			return fmt.Errorf("tool_choice differs:\nours:   %s\ntheirs: %s", raw, again)
		}
		delete(ours, "tool_choice")
		delete(theirs, "tool_choice")
	}
	if !equalTrees(ours, theirs) {
		a, _ := json.Marshal(ours)
		b, _ := json.Marshal(theirs)
		return fmt.Errorf("round trip differs:\nours:   %s\ntheirs: %s", a, b)
	}
	return nil
}

func equalTrees(a, b any) bool {
	x, _ := json.Marshal(a) // map keys are sorted: a canonical form
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestSDKRequestRoundTrip(t *testing.T) {
	t.Parallel()
	for name, body := range goldenRequests(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, sdkRoundTrip(body))
		})
	}
}

func TestSDKRequestRoundTripCanaries(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"unknown top-level field": canaryBase + `,"bogus_field":1}`,
		"misspelt field":          canaryBase + `,"max_token":5}`,
		"named tool choice lost":  canaryBase + `,"tool_choice":{"type":"function","function":{"nmae":"f"}}}`,
		"misspelt message field":  `{"model":"gpt-4o","messages":[{"role":"user","content":"hi","nmae":"x"}]}`,
	} {
		require.Error(t, sdkRoundTrip([]byte(body)), name)
	}
	require.NoError(t, sdkRoundTrip([]byte(canaryBase+`}`)), "the canaries' base is valid")
}

// ---- (b) validation against the published OpenAPI schema ----

var requestSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// chatRequestSchema compiles CreateChatCompletionRequest once per test
// binary: the document is 2.9 MB.
func chatRequestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	requestSchema.once.Do(func() {
		data, err := wirespec.JSON(wirespec.OpenAI)
		if err != nil {
			requestSchema.err = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			requestSchema.err = err
			return
		}
		adaptOpenAPI(doc)
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020) // OpenAPI 3.1 schemas are 2020-12
		const url = "https://wire-specs.panto.invalid/openai-openapi.json"
		if requestSchema.err = c.AddResource(url, doc); requestSchema.err != nil {
			return
		}
		requestSchema.schema, requestSchema.err = c.Compile(url + "#/components/schemas/CreateChatCompletionRequest")
	})
	require.NoError(t, requestSchema.err)
	return requestSchema.schema
}

// adaptOpenAPI turns OpenAPI's "nullable: true" beside a type into the JSON
// Schema form (type: [T, "null"]); wirespec's README says the ones
// without a type were already rewritten. Other OpenAPI keywords
// (discriminator, example, x-*) are annotations JSON Schema ignores.
func adaptOpenAPI(v any) {
	switch v := v.(type) {
	case map[string]any:
		if v["nullable"] == true {
			if typ, ok := v["type"].(string); ok {
				v["type"] = []any{typ, "null"}
			}
			delete(v, "nullable")
		}
		for _, x := range v {
			adaptOpenAPI(x)
		}
	case []any:
		for _, x := range v {
			adaptOpenAPI(x)
		}
	}
}

func validateBody(sch *jsonschema.Schema, body []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func TestSchemaValidatesGoldenRequests(t *testing.T) {
	t.Parallel()
	sch := chatRequestSchema(t)
	for name, body := range goldenRequests(t) {
		require.NoError(t, validateBody(sch, body), name)
	}
}

func TestSchemaCanaries(t *testing.T) {
	t.Parallel()
	sch := chatRequestSchema(t)
	require.NoError(t, validateBody(sch, []byte(canaryBase+`}`)), "the canaries' base is valid")
	for name, tt := range map[string]struct{ body, where string }{
		"unknown role":         {`{"model":"gpt-4o","messages":[{"role":"robot","content":"hi"}]}`, "'/messages/0/role'"},
		"no messages":          {`{"model":"gpt-4o","messages":[]}`, "'/messages'"},
		"arguments not string": {`{"model":"gpt-4o","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":{}}}]}]}`, "'/messages/0/tool_calls/0/function/arguments'"},
		"tool without call id": {`{"model":"gpt-4o","messages":[{"role":"tool","content":"x"}]}`, "missing property 'tool_call_id'"},
		"tool choice any":      {canaryBase + `,"tool_choice":"any"}`, "'/tool_choice'"},
		"temperature too high": {canaryBase + `,"temperature":3}`, "'/temperature'"},
		"max tokens as string": {canaryBase + `,"max_tokens":"many"}`, "'/max_tokens'"},
		"cache key as number":  {canaryBase + `,"prompt_cache_key":42}`, "'/prompt_cache_key'"},
	} {
		err := validateBody(sch, []byte(tt.body))
		require.Error(t, err, name)
		require.ErrorContains(t, err, tt.where, name)
	}
}

// ---- (c) stream fixtures decoded by the SDK's client and accumulator ----

type sdkStream struct {
	acc       openai.ChatCompletionAccumulator
	reasoning string
	path      string
	err       error
}

// sdkDecode serves a fixture from a loopback server and reads it with the
// real client, as an application would.
func sdkDecode(t *testing.T, fixture []byte) *sdkStream {
	t.Helper()
	out := &sdkStream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out.path = r.Method + " " + r.URL.Path
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(fixture)
	}))
	t.Cleanup(srv.Close)
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"),
		option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	for stream.Next() {
		chunk := stream.Current()
		require.True(t, out.acc.AddChunk(chunk), "accumulator rejected a chunk")
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			// The SDK has no reasoning field; read it from the extra fields
			// it kept, as its own JSON decoder parsed them.
			for _, key := range []string{"reasoning_content", "reasoning"} {
				var s string
				if f, ok := ch.Delta.JSON.ExtraFields[key]; ok && json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
					out.reasoning += s
					break
				}
			}
		}
	}
	out.err = stream.Err()
	return out
}

func TestSDKDecodesStreamFixtures(t *testing.T) {
	t.Parallel()
	goldens, err := filepath.Glob(filepath.Join("testdata", "streams", "*.golden.json"))
	require.NoError(t, err)
	require.NotEmpty(t, goldens)
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".golden.json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fixture, err := os.ReadFile(filepath.Join("testdata", "streams", name+".sse"))
			require.NoError(t, err)
			ours, err := panto.DecodeStream(bytes.NewReader(fixture), nil)
			require.NoError(t, err)
			sdk := sdkDecode(t, fixture)
			require.NoError(t, sdk.err)
			require.Equal(t, "POST /v1/chat/completions", sdk.path)

			require.NotEmpty(t, sdk.acc.Choices)
			choice := sdk.acc.Choices[0]
			require.Equal(t, choice.Message.Content, ours.Message.Text(), "content")
			require.Equal(t, string(choice.FinishReason), ours.RawStopReason, "finish_reason")
			require.Equal(t, sdk.acc.ID, ours.ID)
			require.Equal(t, sdk.acc.Model, ours.Model)

			var thinking string
			var calls []conversation.Block
			for _, b := range ours.Message.Content {
				switch b.Type {
				case conversation.TypeThinking:
					thinking += b.Thinking
				case conversation.TypeToolUse:
					calls = append(calls, b)
				}
			}
			require.Equal(t, sdk.reasoning, thinking, "reasoning")
			require.Len(t, calls, len(choice.Message.ToolCalls), "tool calls")
			for i, tc := range choice.Message.ToolCalls {
				require.Equal(t, tc.ID, calls[i].ID, "tool call %d id", i)
				require.Equal(t, tc.Function.Name, calls[i].Name, "tool call %d name", i)
				args := tc.Function.Arguments
				if args == "" {
					args = "{}" // documented: empty arguments are the empty object
				}
				require.Equal(t, args, string(calls[i].Input), "tool call %d arguments", i)
			}

			u := sdk.acc.Usage
			require.Equal(t, serializers.Usage{
				InputTokens:     int(u.PromptTokens),
				OutputTokens:    int(u.CompletionTokens),
				CacheReadTokens: int(u.PromptTokensDetails.CachedTokens),
				ReasoningTokens: int(u.CompletionTokensDetails.ReasoningTokens),
			}, ours.Usage, "usage")
		})
	}
}

// The SDK sees the error chunk as an error too.
func TestSDKStreamErrorChunk(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile(filepath.Join("testdata", "streams", "error_after_content.sse"))
	require.NoError(t, err)
	sdk := sdkDecode(t, fixture)
	require.ErrorContains(t, sdk.err, "rate_limit_exceeded")
	_, err = panto.DecodeStream(bytes.NewReader(fixture), nil)
	var apiErr *serializers.APIError
	require.True(t, errors.As(err, &apiErr))
	require.Equal(t, "rate_limit_exceeded", apiErr.Type)
}
