package anthropic_test

// Independent checks of the request bodies: every golden body must mean
// the same thing to the official Go SDK (anthropic-sdk-go v1, which speaks
// 2023-06-01) and must validate against the published OpenAPI schema.
// Neither was written by us; each has a canary that must fail, so a check
// that stopped checking would be noticed.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/serializers/internal/wirespec"
)

// sdkRoundTrip decodes body into the SDK's MessageNewParams, encodes it
// again, and returns both JSON trees: ours normalised for the differences
// the SDK documents (a string system and a string tool_result content
// become [{type:text,text}] arrays; stream is not a body field of
// MessageNewParams), theirs as the SDK wrote it. A field the SDK does not
// know vanishes on the way, so the trees differ.
func sdkRoundTrip(t *testing.T, body []byte) (ours, theirs any) {
	t.Helper()
	var params sdk.MessageNewParams
	require.NoError(t, params.UnmarshalJSON(body), "the SDK cannot decode the body")
	out, err := params.MarshalJSON()
	require.NoError(t, err)

	var o map[string]any
	require.NoError(t, json.Unmarshal(body, &o))
	normaliseForSDK(o)
	require.NoError(t, json.Unmarshal(out, &theirs))
	return o, theirs
}

func textBlocks(s string) []any {
	return []any{map[string]any{"type": "text", "text": s}}
}

func normaliseForSDK(req map[string]any) {
	delete(req, "stream")
	if s, ok := req["system"].(string); ok {
		req["system"] = textBlocks(s)
	}
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, c := range content {
			blk := c.(map[string]any)
			if s, ok := blk["content"].(string); ok && blk["type"] == "tool_result" {
				blk["content"] = textBlocks(s)
			}
		}
	}
}

func TestRequestsRoundTripThroughSDK(t *testing.T) {
	t.Parallel()
	for _, f := range goldenFiles(t, requestsDir, "*.json") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(f)
			require.NoError(t, err)
			ours, theirs := sdkRoundTrip(t, body)
			require.Equal(t, ours, theirs, "the SDK reads %s differently from what we meant", f)
		})
	}
}

// TestSDKRoundTripCanaries shows the round trip catches what it is for: a
// field the API does not have, and a misspelt one, change the tree.
func TestSDKRoundTripCanaries(t *testing.T) {
	t.Parallel()
	canaries := map[string]string{
		"bogus top-level field": `{"model":"m","max_tokens":1,"bogus_field":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		"misspelt block field":  `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_idx":"t","content":"x"}]}]}`,
		"unknown block type":    `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"txt","text":"hi"}]}]}`,
	}
	for name, body := range canaries {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ours, theirs := sdkRoundTrip(t, []byte(body))
			require.NotEqual(t, ours, theirs, "the canary must fail the round trip")
		})
	}
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// createMessageSchema compiles CreateMessageParams out of the whole OpenAPI
// document, loaded as one resource so every $ref resolves in it. OpenAPI
// 3.1 schemas are JSON Schema 2020-12; the OpenAPI-only keywords
// (discriminator, x-stainless-*) are annotations the validator skips, so
// no adapting is needed.
func createMessageSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		data, err := wirespec.JSON(wirespec.Anthropic)
		if err != nil {
			schemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		const url = "https://panto.invalid/anthropic-openapi.json"
		if schemaErr = c.AddResource(url, doc); schemaErr != nil {
			return
		}
		schema, schemaErr = c.Compile(url + "#/components/schemas/CreateMessageParams")
	})
	require.NoError(t, schemaErr)
	return schema
}

func validateAgainstSchema(t *testing.T, body []byte) error {
	t.Helper()
	sch := createMessageSchema(t)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	require.NoError(t, err)
	return sch.Validate(v)
}

func TestRequestsValidateAgainstOpenAPI(t *testing.T) {
	t.Parallel()
	for _, f := range goldenFiles(t, requestsDir, "*.json") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, validateAgainstSchema(t, body))
		})
	}
}

// TestOpenAPICanaries shows the schema check rejects what it must.
func TestOpenAPICanaries(t *testing.T) {
	t.Parallel()
	canaries := map[string]struct{ body, want string }{
		"bogus field": {`{"model":"m","max_tokens":1,"bogus_field":true,"messages":[]}`, "bogus_field"},
		"empty text block": {`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`,
			"minLength"},
		"system role in messages": {`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}`, "role"},
		"thinking budget too small": {`{"model":"m","max_tokens":4096,"messages":[],"thinking":{"type":"enabled","budget_tokens":100}}`,
			"minimum"},
		"none with disable_parallel_tool_use": {`{"model":"m","max_tokens":1,"messages":[],"tool_choice":{"type":"none","disable_parallel_tool_use":true}}`,
			"disable_parallel_tool_use"},
		"no max_tokens": {`{"model":"m","messages":[]}`, "max_tokens"},
	}
	for name, c := range canaries {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := validateAgainstSchema(t, []byte(c.body))
			require.Error(t, err, "the canary must fail validation")
			require.True(t, strings.Contains(err.Error(), c.want), "want %q in:\n%v", c.want, err)
		})
	}
}
