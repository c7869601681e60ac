package anthropic_test

// Independent check of the decoders: every stream fixture is also decoded
// by the official SDK's SSE decoder and Message.Accumulate, every response
// body by its Message type, and the results are compared field by field
// with ours. Where the SDK is more lenient than we are (it cannot tell a
// truncated stream from a complete one, and blanks a tool input that is not
// JSON), the test pins down what the SDK saw, so the reason for our error
// stays visible.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

// sdkResult is what the SDK made of a stream.
type sdkResult struct {
	msg         sdk.Message
	sawStop     bool  // a message_stop event was decoded
	streamErr   error // the SDK stream's error (error events, bad JSON)
	accumulated error // Accumulate's error (a delta before its block)
}

func sdkDecodeStream(t *testing.T, in []byte) sdkResult {
	t.Helper()
	res := &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(in)),
	}
	stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	defer stream.Close()
	var out sdkResult
	for stream.Next() {
		ev := stream.Current()
		if ev.Type == "message_stop" {
			out.sawStop = true
		}
		if err := out.msg.Accumulate(ev); err != nil {
			out.accumulated = err
			break
		}
	}
	out.streamErr = stream.Err()
	return out
}

// compareWithSDK compares our reply with the SDK's message field by field.
// Blocks of types panto does not keep (server tools) are left out of the
// SDK's side, as we leave them out of ours.
func compareWithSDK(t *testing.T, ours serializers.Reply, theirs sdk.Message) {
	t.Helper()
	var kept []sdk.ContentBlockUnion
	for _, b := range theirs.Content {
		switch b.Type {
		case "text", "thinking", "redacted_thinking", "tool_use":
			kept = append(kept, b)
		}
	}
	require.Len(t, ours.Message.Content, len(kept), "content blocks")
	for i, b := range kept {
		got := ours.Message.Content[i]
		require.Equal(t, b.Type, string(got.Type), "block %d type", i)
		switch got.Type {
		case conversation.TypeText:
			require.Equal(t, b.Text, got.Text, "block %d text", i)
		case conversation.TypeThinking:
			require.Equal(t, b.Thinking, got.Thinking, "block %d thinking", i)
			require.Equal(t, b.Signature, got.Signature, "block %d signature", i)
		case conversation.TypeRedactedThinking:
			require.Equal(t, b.Data, got.Data, "block %d data", i)
		case conversation.TypeToolUse:
			require.Equal(t, b.ID, got.ID, "block %d id", i)
			require.Equal(t, b.Name, got.Name, "block %d name", i)
			require.JSONEq(t, string(b.Input), string(got.Input), "block %d input", i)
		}
	}
	require.Equal(t, string(theirs.StopReason), ours.RawStopReason, "stop_reason")
	require.Equal(t, theirs.ID, ours.ID, "id")
	require.Equal(t, string(theirs.Model), ours.Model, "model")
	require.EqualValues(t, theirs.Usage.InputTokens, ours.Usage.InputTokens, "input_tokens")
	require.EqualValues(t, theirs.Usage.OutputTokens, ours.Usage.OutputTokens, "output_tokens")
	require.EqualValues(t, theirs.Usage.CacheReadInputTokens, ours.Usage.CacheReadTokens, "cache_read_input_tokens")
	require.EqualValues(t, theirs.Usage.CacheCreationInputTokens, ours.Usage.CacheWriteTokens, "cache_creation_input_tokens")
}

// sdkVerdicts says, for each failing fixture, what the SDK makes of it.
var sdkVerdicts = map[string]func(t *testing.T, r sdkResult){
	// The SDK turns the error event into an error too.
	"error_after_content": func(t *testing.T, r sdkResult) {
		require.Error(t, r.streamErr)
		require.Contains(t, r.streamErr.Error(), "overloaded_error")
	},
	// The SDK's stream just ends; it saw no message_stop either, which is
	// what makes the reply incomplete.
	"truncated": func(t *testing.T, r sdkResult) {
		require.NoError(t, r.streamErr)
		require.False(t, r.sawStop)
	},
	"cut_mid_line": func(t *testing.T, r sdkResult) {
		require.NoError(t, r.streamErr)
		require.False(t, r.sawStop)
	},
	// Accumulate rejects a delta for a block that has not started, too.
	"delta_before_start": func(t *testing.T, r sdkResult) {
		require.Error(t, r.accumulated)
	},
	// The SDK accepts the stream but silently replaces the input that is
	// not JSON with {}: the tool call's arguments would be lost.
	"bad_tool_json": func(t *testing.T, r sdkResult) {
		require.NoError(t, r.streamErr)
		require.NoError(t, r.accumulated)
		require.True(t, r.sawStop)
		require.Equal(t, "tool_use", r.msg.Content[1].Type)
		require.Equal(t, `{}`, string(r.msg.Content[1].Input))
	},
}

func TestStreamFixturesAgreeWithSDK(t *testing.T) {
	t.Parallel()
	for _, fx := range streamFixtures {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			in := readFixture(t, fx.name)
			theirs := sdkDecodeStream(t, in)
			if fx.wantErr != "" {
				verdict, ok := sdkVerdicts[fx.name]
				require.True(t, ok, "no SDK verdict for failing fixture %s", fx.name)
				verdict(t, theirs)
				return
			}
			require.NoError(t, theirs.streamErr)
			require.NoError(t, theirs.accumulated)
			require.True(t, theirs.sawStop)
			ours, _, err := decodeStream(in)
			require.NoError(t, err)
			compareWithSDK(t, ours, theirs.msg)
		})
	}
}

func TestResponsesAgreeWithSDK(t *testing.T) {
	t.Parallel()
	for _, f := range responseFixtures(t) {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(f)
			require.NoError(t, err)
			var theirs sdk.Message
			require.NoError(t, json.Unmarshal(body, &theirs))
			ours, err := anthropic.DecodeResponse(body)
			require.NoError(t, err)
			compareWithSDK(t, ours, theirs)
		})
	}
}
