package conversation

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// marshal encodes v as the session log does: without HTML escaping.
func marshal(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
}

func TestMessageJSONShape(t *testing.T) {
	t.Parallel()
	keyedReplace := SystemMessage("You are a reviewer.", ModeReplace).WithSource("extension persona")
	keyedReplace.Content[0].Key = "persona"
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"append", SystemMessage("be brief", ModeAppend),
			`{"role":"system","mode":"append","content":[{"type":"text","text":"be brief"}]}`},
		{"replace", SystemMessage("start over", ModeReplace),
			`{"role":"system","mode":"replace","content":[{"type":"text","text":"start over"}]}`},
		{"empty mode is append", Message{Role: RoleSystem, Content: []Block{{Type: TypeSystem, Text: "x"}}},
			`{"role":"system","mode":"append","content":[{"type":"text","text":"x"}]}`},
		{"source", SystemMessage("rules", ModeAppend).WithSource("project /p/.panto/APPEND_SYSTEM.md"),
			`{"role":"system","mode":"append","source":"project /p/.panto/APPEND_SYSTEM.md","content":[{"type":"text","text":"rules"}]}`},
		{"section", KeyedSystemMessage("env", "cwd: /p").WithSource("extension env"),
			`{"role":"system","mode":"append","key":"env","source":"extension env","content":[{"type":"text","text":"cwd: /p"}]}`},
		{"section removed", KeyedSystemMessage("env", ""),
			`{"role":"system","mode":"append","key":"env","content":[{"type":"text","text":""}]}`},
		{"keyed replace", keyedReplace,
			`{"role":"system","mode":"replace","key":"persona","source":"extension persona","content":[{"type":"text","text":"You are a reviewer."}]}`},
		{"several blocks share the source", Message{Role: RoleSystem, Content: []Block{
			{Type: TypeSystem, Text: "a", Mode: ModeReplace, Key: "k", Source: "s"}, {Type: TypeSystem, Text: "b", Source: "s"},
		}}, `{"role":"system","mode":"replace","key":"k","source":"s","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
		{"system without blocks", Message{Role: RoleSystem},
			`{"role":"system","mode":"append","content":[]}`},
		{"user", UserText(`hi <b> & "q"`),
			`{"role":"user","content":[{"type":"text","text":"hi <b> & \"q\""}]}`},
		{"tool use keeps input", Message{Role: RoleAssistant, Content: []Block{ToolUse("t1", "read", json.RawMessage(`{"path":"a.go"}`))}},
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{"path":"a.go"}}]}`},
		{"empty content", Message{Role: RoleUser}, `{"role":"user","content":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, marshal(t, tt.msg))
			v, err := tt.msg.JSONValue()
			require.NoError(t, err)
			require.Equal(t, tt.want, marshal(t, v), "JSONValue encodes as MarshalJSON does")
			escaped, err := json.Marshal(tt.msg)
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(escaped), "json.Marshal escapes HTML, the value is the same")

			var back Message
			require.NoError(t, json.Unmarshal([]byte(tt.want), &back))
			want := tt.msg
			if want.Role == RoleSystem {
				want = Message{Role: RoleSystem}
				for _, b := range tt.msg.Content {
					b.Mode = b.Mode.Normalize()
					want.Content = append(want.Content, b)
				}
			}
			require.Equal(t, want, back)
		})
	}
}

// TestNonSystemJSONIsBlockJSON: every other role than system is written
// exactly as before Message had a JSON shape of its own, Block's JSON.
func TestNonSystemJSONIsBlockJSON(t *testing.T) {
	t.Parallel()
	type before struct {
		Role    Role    `json:"role"`
		Content []Block `json:"content"`
	}
	for _, m := range []Message{
		UserText("hi"),
		{Role: RoleUser, Content: []Block{Text("look"), Image("image/png", "iVBORw0KGgo="), ToolResult("t0", "r", false)}},
		{Role: RoleAssistant, Content: []Block{Thinking("hmm", "sig"), RedactedThinking("xx"), Text("ok"), ToolUse("t1", "read", json.RawMessage(`{"path":"a"}`))}},
		{Role: RoleTool, Content: []Block{ToolResult("t1", "contents", false), {Type: TypeToolResult, ToolUseID: "t2", IsError: true, Content: []Block{Text("x"), Image("image/png", "AA==")}}}},
	} {
		require.Equal(t, marshal(t, before(m)), marshal(t, m)) // the conversion drops the methods
	}
}

func TestMessageJSONErrors(t *testing.T) {
	t.Parallel()
	unwritable := []struct {
		name string
		msg  Message
		want string
	}{
		{"text block", Message{Role: RoleSystem, Content: []Block{Text("x")}}, `content[0] is a "text" block (want system)`},
		{"later replace", Message{Role: RoleSystem, Content: []Block{System("a", ModeAppend), System("b", ModeReplace)}}, "only the first block of a system message may replace"},
		{"later key", Message{Role: RoleSystem, Content: []Block{System("a", ModeAppend), {Type: TypeSystem, Text: "b", Key: "k"}}}, "content[1] has a key: only the first block"},
		{"later source", Message{Role: RoleSystem, Content: []Block{System("a", ModeAppend), {Type: TypeSystem, Text: "b", Source: "s"}}}, `content[1] has source "s", not the first block's ""`},
	}
	for _, tt := range unwritable {
		_, err := tt.msg.JSONValue()
		require.ErrorContains(t, err, tt.want, tt.name)
		_, err = json.Marshal([]Message{UserText("fine"), tt.msg})
		require.ErrorContains(t, err, "encode system message: ", tt.name)
		require.ErrorContains(t, err, tt.want, tt.name)
	}

	unreadable := []struct {
		json string
		want string
	}{
		{`{"role":"user","mode":"append","content":[]}`, "user message has a mode (only a system message may)"},
		{`{"role":"assistant","key":"k","content":[]}`, "assistant message has a key"},
		{`{"role":"tool","source":"s","content":[]}`, "tool message has a source"},
		{`{"role":"system","mode":"prepend","content":[{"type":"text","text":"x"}]}`, `system message: unknown mode "prepend"`},
		{`{"role":"system","key":"has space","content":[{"type":"text","text":"x"}]}`, `system message: invalid key "has space"`},
		{`{"role":"system","content":[{"type":"text","text":"x","mode":"replace"}]}`, "the mode goes on the message, not on its blocks"},
		{`{"role":"system","content":[{"type":"text","text":"x","key":"k"}]}`, "the key goes on the message, not on its blocks"},
		{`{"role":"system","content":[{"type":"text","text":"x","source":"s"}]}`, "the source goes on the message, not on its blocks"},
		{`{"role":"system","content":[{"type":"image","data":"x","media_type":"image/png"}]}`, `content[0] is a "image" block (want text`},
		{`{"role":"system","mode":"append","content":[{"type":"system","text":"x"}]}`, `content[0] is a "system" block (want text`},
		{`{"role":"system","content":[{"type":"system","text":"x"},{"type":"text","text":"y"}]}`, `content[0] is a "system" block (want text`},
		{`{"role":"user","content":"hi"}`, "cannot unmarshal string"},
	}
	for _, tt := range unreadable {
		var m Message
		require.ErrorContains(t, json.Unmarshal([]byte(tt.json), &m), tt.want, tt.json)
	}
}

// TestUnmarshalReadsTheOldShape: before Message had MarshalJSON, a system
// message was written with its System blocks as they are; such JSON (from
// a peer of an older panto) still reads as it meant.
func TestUnmarshalReadsTheOldShape(t *testing.T) {
	t.Parallel()
	var msgs []Message
	require.NoError(t, json.Unmarshal([]byte(`[
		{"role":"system","content":[{"type":"system","text":"seed","mode":"append"}]},
		{"role":"system","content":[{"type":"system","text":"new","mode":"replace"},{"type":"system","text":"more","mode":"append"}]},
		{"role":"system","content":[{"type":"system","text":"k","mode":"append","key":"env","source":"extension env"}]},
		{"role":"user","content":[{"type":"text","text":"hi"}]},
		{"role":"assistant","content":null}
	]`), &msgs))
	require.Equal(t, []Message{
		SystemMessage("seed", ModeAppend),
		{Role: RoleSystem, Content: []Block{System("new", ModeReplace), System("more", ModeAppend)}},
		KeyedSystemMessage("env", "k").WithSource("extension env"),
		UserText("hi"),
		{Role: RoleAssistant},
	}, msgs)
}

func TestUnmarshalNullLeavesTheMessage(t *testing.T) {
	t.Parallel()
	m := UserText("kept")
	require.NoError(t, json.Unmarshal([]byte(`null`), &m))
	require.Equal(t, UserText("kept"), m)
	var p *Message
	require.NoError(t, json.Unmarshal([]byte(`null`), &p))
	require.Nil(t, p)
}

func TestUnmarshalMakesEmptyContentNil(t *testing.T) {
	t.Parallel()
	var m Message
	require.NoError(t, json.Unmarshal([]byte(`{"role":"tool","content":[{"type":"tool_result","tool_use_id":"t","content":[]}]}`), &m))
	require.Equal(t, Message{Role: RoleTool, Content: []Block{{Type: TypeToolResult, ToolUseID: "t"}}}, m)
	require.NoError(t, json.Unmarshal([]byte(`{"role":"user","content":[]}`), &m))
	require.Equal(t, Message{Role: RoleUser}, m)
}

// FuzzMessageJSON: UnmarshalJSON never panics, and a message it reads
// that is valid and has a JSON shape reads back the same from its JSON.
func FuzzMessageJSON(f *testing.F) {
	for _, s := range []string{
		`{"role":"system","mode":"append","key":"env","source":"extension env","content":[{"type":"text","text":"cwd"}]}`,
		`{"role":"system","mode":"replace","key":"k","source":"s","content":[{"type":"text","text":"a"},{"type":"text","text":""}]}`,
		`{"role":"system","content":[{"type":"system","text":"x","mode":"replace","key":"k","source":"s"}]}`,
		`{"role":"system","content":[{"type":"system","text":"x"},{"type":"system","text":"y","key":"k"}]}`,
		`{"role":"system","content":[{"type":"system","text":"x","thinking":"dropped","content":[{"type":"text"}]}]}`,
		`{"role":"system","content":[{"type":"text","text":"x","data":"dropped"}]}`,
		`{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","media_type":"image/png"}]}`,
		`{"role":"user","content":[{"type":"text","added":"project /p/.panto/USER_PROMPT.md","text":"rules"},{"type":"text","text":"hi"}]}`,
		`{"role":"user","content":[{"type":"text","text":"rules","added":""},{"type":"image","added":"x","data":"AA==","media_type":"image/png"}]}`,
		`{"role":"system","content":[{"type":"text","added":"x","text":"rules"}]}`,
		`{"role":"tool","content":[{"type":"tool_result","tool_use_id":"t","content":[],"is_error":true}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{"a":1}}]}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if json.Unmarshal(data, &m) != nil || m.Validate() != nil {
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			return // a system message whose later blocks replace, have a key or another source
		}
		var back Message
		require.NoError(t, json.Unmarshal(out, &back), "%s", out)
		want := m
		if m.Role == RoleSystem {
			want = Message{Role: RoleSystem}
			for _, b := range m.Content {
				b.Mode = b.Mode.Normalize()
				want.Content = append(want.Content, b)
			}
		}
		require.Equal(t, normalizeInputs(want), normalizeInputs(back))
	})
}

// normalizeInputs compacts tool inputs, as encoding/json writes them.
func normalizeInputs(m Message) Message {
	m = m.Clone()
	for i := range m.Content {
		if in := m.Content[i].Input; len(in) > 0 {
			var c bytes.Buffer
			if json.Compact(&c, in) == nil {
				m.Content[i].Input = c.Bytes()
			}
		}
	}
	return m
}

// TestMarshalMessagesIsJSONMarshal: the list helpers give what
// json.Marshal and json.Unmarshal give, byte for byte and value for value.
func TestMarshalMessagesIsJSONMarshal(t *testing.T) {
	t.Parallel()
	keyedReplace := SystemMessage("x <y> & \u2028", ModeReplace).WithSource("s & <t>")
	keyedReplace.Content[0].Key = "k"
	lists := [][]Message{
		nil,
		{},
		{SystemMessage("seed", ModeAppend), KeyedSystemMessage("env", "cwd <a> & b").WithSource("extension env"), keyedReplace,
			UserText("hi <b> & \u2029"), {Role: RoleAssistant, Content: []Block{Thinking("t", "s"), ToolUse("1", "x", json.RawMessage(`{"a":"<"}`))}},
			{Role: RoleTool, Content: []Block{ToolResult("1", "r", true)}}, {Role: RoleUser}},
	}
	for _, msgs := range lists {
		want, err := json.Marshal(msgs)
		require.NoError(t, err)
		got, err := MarshalMessages(msgs)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))

		var wantBack []Message
		require.NoError(t, json.Unmarshal(want, &wantBack))
		gotBack, err := UnmarshalMessages(got)
		require.NoError(t, err)
		require.Equal(t, wantBack, gotBack)
	}

	old := `[{"role":"system","content":[{"type":"system","text":"a","mode":"replace"}]},null,{"role":"user","content":[]}]`
	var want []Message
	require.NoError(t, json.Unmarshal([]byte(old), &want))
	got, err := UnmarshalMessages([]byte(old))
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, []Message{SystemMessage("a", ModeReplace), {}, {Role: RoleUser}}, got)

	_, err = MarshalMessages([]Message{UserText("ok"), {Role: RoleSystem, Content: []Block{Text("x")}}})
	require.ErrorContains(t, err, `encode message 1 (system): system message content[0] is a "text" block`)
	_, err = UnmarshalMessages([]byte(`[{"role":"user","content":[]},{"role":"user","mode":"append","content":[]}]`))
	require.ErrorContains(t, err, "message 1: user message has a mode")
	_, err = UnmarshalMessages([]byte(`{"role":"user"}`))
	require.ErrorContains(t, err, "cannot unmarshal object")
}
