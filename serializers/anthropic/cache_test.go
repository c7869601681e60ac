package anthropic_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
)

// cached is the caching intent the host sends.
var cached = serializers.Cache{Mark: true, Key: "0b6f6c2e-7a53-4f5e-9d0c-3c1f2a9e8d71"}

// markPlaces lists where the cache_control marks are: "system/i",
// "tool/i" or "m/b" (wire message m, block b).
func markPlaces(t *testing.T, raw []byte) []string {
	t.Helper()
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &req))
	var out []string
	var sys []map[string]json.RawMessage
	if json.Unmarshal(req.System, &sys) == nil {
		for i, blk := range sys {
			if cc, ok := blk["cache_control"]; ok {
				require.JSONEq(t, `{"type":"ephemeral"}`, string(cc))
				out = append(out, fmt.Sprintf("system/%d", i))
			}
		}
	}
	for i, tool := range req.Tools {
		if _, ok := tool["cache_control"]; ok {
			out = append(out, fmt.Sprintf("tool/%d", i))
		}
	}
	for m, msg := range req.Messages {
		for b, blk := range msg.Content {
			if cc, ok := blk["cache_control"]; ok {
				require.JSONEq(t, `{"type":"ephemeral"}`, string(cc))
				out = append(out, fmt.Sprintf("%d/%d", m, b))
			}
		}
	}
	require.LessOrEqual(t, len(out), anthropic.MaxCacheMarks, "more marks than the API accepts")
	return out
}

// toolStep is an assistant message calling n tools and the user message
// with their results: 2n blocks.
func toolStep(prefix string, n int) []conversation.Message {
	var calls, results []conversation.Block
	for i := range n {
		id := fmt.Sprintf("toolu_%s%02d", prefix, i)
		calls = append(calls, conversation.ToolUse(id, "read_file", json.RawMessage(fmt.Sprintf(`{"path":"f%d.go"}`, i))))
		results = append(results, conversation.ToolResult(id, fmt.Sprintf("package f%d\n", i), false))
	}
	return []conversation.Message{msg(conversation.RoleAssistant, calls...), msg(conversation.RoleTool, results...)}
}

func concat(parts ...[]conversation.Message) []conversation.Message {
	var out []conversation.Message
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// cacheCases are the golden bodies of cached requests: they go through
// the same SDK round trip and OpenAPI validation as every golden body.
func cacheCases() []requestCase {
	wantMarks := func(want ...string) func(t *testing.T, b body) {
		return func(t *testing.T, b body) {
			t.Helper()
			require.Equal(t, want, markPlaces(t, mustJSON(t, b)))
		}
	}
	return []requestCase{
		{
			// The common request: tools and system cached by the system
			// mark, the whole request by the rolling one.
			name: "cache_marks_new_turn",
			req: serializers.Request{Model: model, Cache: cached, Tools: []serializers.Tool{weatherTool, readTool}, Messages: []conversation.Message{
				sys("You are panto.\n", appendM),
				sys("Project rules.", appendM),
				user("Weather in Paris?"),
				asst("18C."),
				user("And Rome?"),
			}},
			check: func(t *testing.T, b body) {
				wantMarks("system/0", "2/0")(t, b)
				sysBlocks := b["system"].([]any)
				require.Len(t, sysBlocks, 1, "the system prompt stays one block")
				require.Equal(t, "You are panto.\n\n---\n\nProject rules.", sysBlocks[0].(map[string]any)["text"])
			},
		},
		{
			// A tool step with a steer: the tool result comes first in
			// its message, the steer's text after it, and the rolling
			// mark is on the text, the message's last block.
			name: "cache_marks_tool_step",
			req: serializers.Request{Model: model, Cache: cached, Tools: []serializers.Tool{readTool}, Messages: concat(
				[]conversation.Message{sys("Seed.", appendM), user("Read f0.go.")},
				toolStep("a", 1),
				[]conversation.Message{user("Steer: also f1.go.")},
			)},
			check: func(t *testing.T, b body) {
				require.Equal(t, []string{"tool_result", "text"}, b.blockTypes(2))
				wantMarks("system/0", "2/1")(t, b)
			},
		},
		{
			// No system prompt: no system mark; the rolling one caches
			// the tools with the messages.
			name: "cache_marks_no_system",
			req:  serializers.Request{Model: model, Cache: cached, Tools: []serializers.Tool{readTool}, Messages: []conversation.Message{user("Hi")}},
			check: func(t *testing.T, b body) {
				require.NotContains(t, b, "system")
				wantMarks("0/0")(t, b)
			},
		},
		{
			// The newest message ends in thinking (a paused turn sent
			// back): the mark moves back to the nearest markable block.
			name: "cache_marks_skip_thinking",
			req: serializers.Request{Model: model, Cache: cached, MaxTokens: 16000, ThinkingBudget: 4096, Messages: []conversation.Message{
				sys("Seed.", appendM),
				user("Think."),
				msg(conversation.RoleAssistant,
					conversation.Text(""),
					conversation.Thinking("Hmm.", "sig=="),
					conversation.RedactedThinking("cmVkYWN0ZWQ=")),
			}},
			check: wantMarks("system/0", "0/0"),
		},
		{
			// A tool step of 9 calls puts the previous request's mark 18
			// blocks back, beyond what panto trusts the lookback to reach:
			// it gets a mark of its own.
			name: "cache_marks_previous_far_back",
			req: serializers.Request{Model: model, Cache: cached, Tools: []serializers.Tool{readTool}, Messages: concat(
				[]conversation.Message{sys("Seed.", appendM), user("Read them all.")},
				toolStep("a", 9),
			)},
			check: wantMarks("system/0", "0/0", "2/8"),
		},
		{
			// A tool step of 7 calls: 14 blocks back, within the lookback.
			name: "cache_marks_previous_near",
			req: serializers.Request{Model: model, Cache: cached, Tools: []serializers.Tool{readTool}, Messages: concat(
				[]conversation.Message{sys("Seed.", appendM), user("Read them all.")},
				toolStep("a", 7),
			)},
			check: wantMarks("system/0", "2/6"),
		},
	}
}

// TestCacheMarksOff: without Cache.Mark nothing is marked and the system
// prompt is a string, the body as it was before caching; the key alone
// changes nothing on this wire.
func TestCacheMarksOff(t *testing.T) {
	t.Parallel()
	for _, tc := range cacheCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := tc.req
			req.Cache = serializers.Cache{}
			plain, err := anthropic.EncodeRequest(req, tc.opts)
			require.NoError(t, err)
			require.NotContains(t, string(plain), "cache_control")
			req.Cache.Key = cached.Key
			keyed, err := anthropic.EncodeRequest(req, tc.opts)
			require.NoError(t, err)
			require.Equal(t, string(plain), string(keyed))
			if _, ok := decodeBody(t, plain)["system"]; ok {
				_, isString := decodeBody(t, plain)["system"].(string)
				require.True(t, isString)
			}
		})
	}
}

// TestCacheMarksOnlyAdd: a marked body is the unmarked one with the
// marks added (and the system string put in a block): nothing else moves.
func TestCacheMarksOnlyAdd(t *testing.T) {
	t.Parallel()
	for _, tc := range requestCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			on, off := tc.req, tc.req
			on.Cache, off.Cache = cached, serializers.Cache{}
			marked, err := anthropic.EncodeRequest(on, tc.opts)
			require.NoError(t, err)
			plain, err := anthropic.EncodeRequest(off, tc.opts)
			require.NoError(t, err)
			m, p := decodeBody(t, marked), decodeBody(t, plain)
			stripMarks(m)
			normaliseForSDK(p)
			normaliseForSDK(m)
			require.Equal(t, p, m)
		})
	}
}

// stripMarks removes every cache_control of a decoded body.
func stripMarks(b body) {
	if blocks, ok := b["system"].([]any); ok {
		for _, blk := range blocks {
			delete(blk.(map[string]any), "cache_control")
		}
	}
	msgs, _ := b["messages"].([]any)
	for _, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, c := range content {
			delete(c.(map[string]any), "cache_control")
		}
	}
}

// TestCacheMarksRoll follows a session request by request: the system
// mark stays put, the rolling mark is on the newest message's last
// block, at most three marks, and every request's body up to the
// previous request's rolling mark equals the previous body up to it,
// marks aside: what the previous request wrote is a prefix of this one.
func TestCacheMarksRoll(t *testing.T) {
	t.Parallel()
	msgs := []conversation.Message{sys("Seed.", appendM), user("Start.")}
	var prev []byte
	threes := 0
	for step := range 30 {
		body, err := anthropic.EncodeRequest(serializers.Request{Model: model, Cache: cached, Tools: []serializers.Tool{readTool}, Messages: msgs}, anthropic.Options{})
		require.NoError(t, err)
		require.NoError(t, validateAgainstSchema(t, body), "step %d", step)
		places := markPlaces(t, body)
		require.Equal(t, "system/0", places[0])
		require.LessOrEqual(t, len(places), 3)
		wire := decodeBody(t, body)["messages"].([]any)
		newest := len(wire) - 1
		lastBlock := len(wire[newest].(map[string]any)["content"].([]any)) - 1
		require.Equal(t, fmt.Sprintf("%d/%d", newest, lastBlock), places[len(places)-1], "step %d: the rolling mark", step)
		if len(places) == 3 {
			threes++
		}
		if prev != nil {
			require.True(t, samePrefix(t, prev, body), "step %d: the previous request is not a prefix of this one", step)
		}
		prev = body
		switch step % 3 {
		case 0:
			msgs = append(msgs, toolStep(fmt.Sprint(step), 1+step%11)...)
		case 1:
			msgs = append(msgs, asst("Done."), user("Next."))
		case 2:
			msgs = append(msgs, msg(conversation.RoleAssistant, conversation.Thinking("t", "s=="), conversation.Text("ok")), user("More."))
		}
	}
	require.NotZero(t, threes, "no step was long enough for the previous request's mark")
}

// samePrefix reports whether b's messages start with a's, cache_control
// aside, and a's tools and system equal b's.
func samePrefix(t *testing.T, a, b []byte) bool {
	t.Helper()
	da, db := decodeBody(t, a), decodeBody(t, b)
	stripMarks(da)
	stripMarks(db)
	ma, mb := da["messages"].([]any), db["messages"].([]any)
	if len(ma) > len(mb) {
		return false
	}
	last := len(ma) - 1
	for i := range last {
		if !jsonEqual(t, ma[i], mb[i]) {
			return false
		}
	}
	// The last message of a may have grown in b (a steer merged into it).
	ca := ma[last].(map[string]any)["content"].([]any)
	cb := mb[last].(map[string]any)["content"].([]any)
	return len(ca) <= len(cb) && jsonEqual(t, ca, cb[:len(ca)]) &&
		jsonEqual(t, da["tools"], db["tools"]) && jsonEqual(t, da["system"], db["system"])
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	return string(mustJSON(t, a)) == string(mustJSON(t, b))
}

// TestCacheMarksDeterministic: the same request gives the same bytes,
// marks included, however often it is encoded — what makes an unchanged
// resume send the prefix it sent before.
func TestCacheMarksDeterministic(t *testing.T) {
	t.Parallel()
	for _, tc := range cacheCases() {
		first, err := anthropic.EncodeRequest(tc.req, tc.opts)
		require.NoError(t, err)
		for range 3 {
			again, err := anthropic.EncodeRequest(tc.req, tc.opts)
			require.NoError(t, err)
			require.Equal(t, string(first), string(again), tc.name)
		}
	}
}

// TestCacheMarkCanaries shows the schema check sees cache_control: where
// the API takes none, and a misspelt type, are refused.
func TestCacheMarkCanaries(t *testing.T) {
	t.Parallel()
	canaries := map[string]string{
		"on a thinking block":  `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s","cache_control":{"type":"ephemeral"}}]}]}`,
		"on redacted thinking": `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"redacted_thinking","data":"d","cache_control":{"type":"ephemeral"}}]}]}`,
		"a wrong type":         `{"model":"m","max_tokens":1,"system":[{"type":"text","text":"s","cache_control":{"type":"persistent"}}],"messages":[]}`,
		"an unknown ttl":       `{"model":"m","max_tokens":1,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"10m"}}],"messages":[]}`,
	}
	for name, body := range canaries {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Error(t, validateAgainstSchema(t, []byte(body)))
		})
	}
}
