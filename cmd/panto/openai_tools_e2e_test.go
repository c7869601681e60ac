package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// openaiTools is a complete OpenAI stream whose reply calls tools: each
// call's arguments arrive in two pieces, and the calls interleave by index
// as parallel calls do.
func openaiTools(calls ...toolCall) reply {
	chunk := func(delta string, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
	}
	pairs := []string{"", chunk(`{"role":"assistant","content":null}`, "")}
	for i, c := range calls {
		name, _ := json.Marshal(c.name)
		pairs = append(pairs, "", chunk(`{"tool_calls":[{"index":`+strconv.Itoa(i)+`,"id":"`+c.id+`","type":"function","function":{"name":`+string(name)+`,"arguments":""}}]}`, ""))
	}
	for i, c := range calls {
		half := len(c.input) / 2
		for _, part := range []string{c.input[:half], c.input[half:]} {
			args, _ := json.Marshal(part)
			pairs = append(pairs, "", chunk(`{"tool_calls":[{"index":`+strconv.Itoa(i)+`,"function":{"arguments":`+string(args)+`}}]}`, ""))
		}
	}
	pairs = append(pairs,
		"", chunk(`{}`, "tool_calls"),
		"", `{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":9,"total_tokens":19}}`,
		"", `[DONE]`)
	return reply{headers: map[string]string{"content-type": "text/event-stream"}, body: sse(pairs...)}
}

// The tool loop over the OpenAI wire: parallel calls streamed in pieces,
// results as tool messages in call order, then the final answer; the log
// resumes.
func TestToolLoopOpenAI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t,
		openaiTools(toolCall{"call_1", "read", `{"path":"a.txt"}`}, toolCall{"call_2", "write", `{"path":"b.txt","content":"new\n"}`}),
		openaiText("done"),
	)
	h.env["OPENAI_API_KEY"] = "k"
	h.write(filepath.Join(h.project, "a.txt"), "alpha\n")
	r := h.ok("-p", "read a, write b", "--provider", "openai", "--base-url", fake.srv.URL+"/v1",
		"--extension", filepath.Join(pluginDir, "tools"))
	require.Equal(t, "done\n", r.stdout)
	data, err := os.ReadFile(filepath.Join(h.project, "b.txt"))
	require.NoError(t, err)
	require.Equal(t, "new\n", string(data))

	var first struct {
		Tools []struct {
			Type     string
			Function struct{ Name string }
		}
	}
	require.NoError(t, json.Unmarshal(fake.request(t, 0).body, &first))
	var names []string
	for _, tool := range first.Tools {
		require.Equal(t, "function", tool.Type)
		names = append(names, tool.Function.Name)
	}
	require.Subset(t, names, []string{"read", "write", "edit", "bash"})

	var second struct {
		Messages []struct {
			Role       string
			Content    json.RawMessage
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		}
	}
	require.NoError(t, json.Unmarshal(fake.request(t, 1).body, &second))
	n := len(second.Messages)
	require.GreaterOrEqual(t, n, 3)
	asst, r1, r2 := second.Messages[n-3], second.Messages[n-2], second.Messages[n-1]
	require.Equal(t, "assistant", asst.Role)
	require.Len(t, asst.ToolCalls, 2)
	require.Equal(t, "call_1", asst.ToolCalls[0].ID)
	require.JSONEq(t, `{"path":"a.txt"}`, asst.ToolCalls[0].Function.Arguments)
	require.Equal(t, "write", asst.ToolCalls[1].Function.Name)
	require.Equal(t, []string{"tool", "call_1", "tool", "call_2"}, []string{r1.Role, r1.ToolCallID, r2.Role, r2.ToolCallID})
	require.Contains(t, string(r1.Content), "alpha")

	// The log is valid and resumes.
	r = h.ok("-p", "again", "--provider", "echo", "-c", "--no-extensions")
	require.Contains(t, r.stdout, `you said "again"`)
}
