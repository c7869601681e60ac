package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The --mode json lines as docs/cli.md documents them. The test decodes
// each line strictly into the struct of its type: a field the docs do not
// name fails the test, and so does a type they do not name.
type (
	jHead struct {
		Version int    `json:"version"`
		Type    string `json:"type"`
	}
	jSession struct {
		jHead
		ID         string   `json:"id"`
		Path       string   `json:"path"`
		Resumed    bool     `json:"resumed"`
		Provider   string   `json:"provider"`
		Model      string   `json:"model"`
		Extensions []string `json:"extensions"`
	}
	jText struct {
		jHead
		Text string `json:"text"`
	}
	jReply struct {
		jHead
		Message    json.RawMessage `json:"message"`
		StopReason string          `json:"stop_reason"`
	}
	jToolStart struct {
		jHead
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	jToolProgress struct {
		jHead
		ID        string `json:"id"`
		Name      string `json:"name"`
		Text      string `json:"text"`
		ElapsedMS int64  `json:"elapsed_ms"`
	}
	jToolEnd struct {
		jHead
		ID         string `json:"id"`
		Name       string `json:"name"`
		IsError    bool   `json:"is_error"`
		DurationMS int64  `json:"duration_ms"`
		Lines      int    `json:"lines"`
		Excerpt    string `json:"excerpt"`
		Result     string `json:"result"`
	}
	jSystem struct {
		jHead
		By     string `json:"by"`
		Mode   string `json:"mode"`
		Key    string `json:"key"`
		Text   string `json:"text"`
		Source string `json:"source"`
	}
	jRefused struct {
		jHead
		By    string `json:"by"`
		Mode  string `json:"mode"`
		Key   string `json:"key"`
		Text  string `json:"text"`
		Error string `json:"error"`
	}
	jRetry struct {
		jHead
		Attempt int    `json:"attempt"`
		Max     int    `json:"max"`
		WaitMS  int64  `json:"wait_ms"`
		Reason  string `json:"reason"`
	}
	jUsage struct {
		jHead
		Model            string `json:"model"`
		InputTokens      int    `json:"input_tokens"`
		OutputTokens     int    `json:"output_tokens"`
		CacheReadTokens  int    `json:"cache_read_tokens"`
		CacheWriteTokens int    `json:"cache_write_tokens"`
		ReasoningTokens  int    `json:"reasoning_tokens"`
		// CostUSD is absent when the model's price is not known.
		CostUSD *float64 `json:"cost_usd"`
	}
	jNotice struct {
		jHead
		Level string `json:"level"`
		Text  string `json:"text"`
	}
	jError struct {
		jHead
		Message string `json:"message"`
	}
	jTurnEnd struct {
		jHead
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
		Error      string `json:"error"`
	}
	jCommand struct {
		jHead
		Name   string `json:"name"`
		Output string `json:"output"`
	}
	jCompactionStart struct {
		jHead
		Auto   bool `json:"auto"`
		Tokens int  `json:"tokens"`
	}
	jCompactionDone struct {
		jHead
		Tokens int    `json:"tokens"`
		Error  string `json:"error"`
	}
)

// decodeJSONStream decodes every line of a --mode json stdout strictly.
func decodeJSONStream(t *testing.T, stdout string) []any {
	t.Helper()
	var out []any
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var h jHead
		require.NoError(t, json.Unmarshal([]byte(line), &h), "line %d: %s", i+1, line)
		require.Equal(t, 1, h.Version, "line %d", i+1)
		var v any
		switch h.Type {
		case "session":
			v = &jSession{}
		case "turn_start", "text_delta", "thinking_delta":
			v = &jText{}
		case "reply":
			v = &jReply{}
		case "tool_start":
			v = &jToolStart{}
		case "tool_progress":
			v = &jToolProgress{}
		case "tool_end":
			v = &jToolEnd{}
		case "system_changed":
			v = &jSystem{}
		case "system_refused":
			v = &jRefused{}
		case "retry":
			v = &jRetry{}
		case "usage":
			v = &jUsage{}
		case "notice":
			v = &jNotice{}
		case "error":
			v = &jError{}
		case "turn_end":
			v = &jTurnEnd{}
		case "command":
			v = &jCommand{}
		case "compaction_start":
			v = &jCompactionStart{}
		case "compaction_done":
			v = &jCompactionDone{}
		default:
			t.Fatalf("line %d: undocumented type %q", i+1, h.Type)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(line)))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(v), "line %d: %s", i+1, line)
		out = append(out, v)
	}
	return out
}

// types lists the events' types, without tool_progress: how many a
// call streams depends on timing.
func types(events []any) []string {
	var out []string
	for _, ev := range events {
		switch ev := ev.(type) {
		case *jSession:
			out = append(out, ev.Type)
		case *jText:
			out = append(out, ev.Type)
		case *jReply:
			out = append(out, ev.Type)
		case *jToolStart:
			out = append(out, ev.Type+":"+ev.Name)
		case *jToolEnd:
			out = append(out, ev.Type)
		case *jSystem:
			out = append(out, ev.Type)
		case *jRetry:
			out = append(out, ev.Type)
		case *jUsage:
			out = append(out, ev.Type)
		case *jNotice:
			out = append(out, ev.Type)
		case *jError:
			out = append(out, ev.Type)
		case *jTurnEnd:
			out = append(out, ev.Type)
		}
	}
	return out
}

// A turn with a retry, three tool calls run at once and a final reply, as
// JSON lines; then a turn that fails, with the same exit status as text
// mode.
func TestJSONMode(t *testing.T) {
	t.Parallel()
	h, fake, args := toolHarness(t,
		reply{status: 529, headers: map[string]string{"retry-after-ms": "10"}, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		anthropicTools(toolCall{"t1", "bash", `{"command":"sleep 0.3; echo slow"}`}, toolCall{"t2", "ls", `{}`}, toolCall{"t3", "read", `{"path":"notes.txt"}`}),
		anthropicText("all three done"),
	)
	h.write(filepath.Join(h.project, "notes.txt"), "a note\n")
	r := h.run("", append([]string{"-p", "look around", "--mode", "json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 3, fake.count())
	evs := decodeJSONStream(t, r.stdout)
	require.Equal(t, []string{
		"session", "system_changed", "system_changed", "turn_start", "retry",
		"usage", "reply", "tool_start:bash", "tool_start:ls", "tool_start:read", "tool_end", "tool_end", "tool_end",
		"text_delta", "usage", "reply", "turn_end",
	}, types(evs))
	session := evs[0].(*jSession)
	require.Equal(t, "anthropic", session.Provider)
	require.Equal(t, []string{"tools"}, session.Extensions)
	require.Equal(t, h.sessionFiles()[0], session.Path)
	require.Equal(t, "panto", evs[1].(*jSystem).By, "the seed")
	require.Equal(t, "tools", evs[2].(*jSystem).By, "the tools' guidance")
	retry := evs[4].(*jRetry)
	require.Equal(t, 1, retry.Attempt)
	require.Contains(t, retry.Reason, "overloaded_error")
	var ended []string
	for _, ev := range evs {
		if te, ok := ev.(*jToolEnd); ok {
			ended = append(ended, te.Name)
			require.False(t, te.IsError, te.Result)
		}
	}
	require.Equal(t, "bash", ended[2], "the slow call ends last; the starts were in call order")
	end := evs[len(evs)-1].(*jTurnEnd)
	require.Equal(t, "all three done", end.Text)
	require.Empty(t, end.Error)

	// A failing turn: an error line, then turn_end with it; exit 1.
	fake2 := newFake(t, reply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`})
	r = h.run("", "-p", "again", "-c", "--mode", "json", "--provider", "anthropic", "--base-url", fake2.srv.URL, "--no-extensions")
	require.Equal(t, 1, r.code, r.stderr)
	evs = decodeJSONStream(t, r.stdout)
	require.Equal(t, []string{"session", "system_changed", "turn_start", "error", "turn_end"}, types(evs))
	gone := evs[1].(*jSystem)
	require.Equal(t, jSystem{jHead: gone.jHead, By: "panto", Mode: "append", Key: "tools:guidance", Text: "",
		Source: "panto: removed because extension tools is not loaded"}, *gone, "--no-extensions: the tools' guidance goes with them")
	require.Contains(t, evs[3].(*jError).Message, "invalid_request_error")
	require.Contains(t, evs[4].(*jTurnEnd).Error, "invalid_request_error")
}

// A command in JSON mode: the events of Open first, then its output; a
// failing command's error is a line too.
func TestJSONModeCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.ok("-p", "/help", "--mode", "json", "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
	evs := decodeJSONStream(t, r.stdout)
	require.Equal(t, []string{"session", "system_changed", "system_changed"}, types(evs[:3]))
	cmd := evs[3].(*jCommand)
	require.Equal(t, "help", cmd.Name)
	require.Contains(t, cmd.Output, "/prompt")
	r = h.run("", "-p", "/nosuch", "--mode", "json", "--provider", "echo", "-c")
	require.Equal(t, 1, r.code)
	evs = decodeJSONStream(t, r.stdout)
	require.Contains(t, evs[len(evs)-1].(*jError).Message, "unknown command /nosuch")
}

// --mode json is for print mode, and names its values.
func TestJSONModeUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("", "-p", "x", "--mode", "yaml", "--provider", "echo")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--mode "yaml": want text or json`)
}
