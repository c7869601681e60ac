// Package testgen generates realistic conversations for tests and
// benchmarks: the shape of a coding session (user text, assistant text
// with tool calls, tool results of a few hundred bytes to a few KB, system
// blocks now and then), and session logs of any size made of them
// (WriteLog, streamed, for the 1 GB benchmarks). It is deterministic: the
// same arguments give the same messages and bytes.
package testgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/panto-dev/panto/conversation"
)

// words make up generated text; the quotes, tabs and newlines make the
// encoders escape as real transcripts do.
var words = strings.Fields(`the a function returns error file line session log panto model tool
	result "quoted" path/to/file.go func main() { } if err != nil return nil, fmt.Errorf
	<tag> & because we need to check that the value is set before calling it again`)

// Text returns about n bytes of generated text.
func Text(r *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		if sb.Len() > 0 {
			switch r.IntN(12) {
			case 0:
				sb.WriteString("\n")
			case 1:
				sb.WriteString("\t")
			default:
				sb.WriteString(" ")
			}
		}
		sb.WriteString(words[r.IntN(len(words))])
	}
	return sb.String()
}

// Messages returns n messages shaped like a coding session: two system
// blocks, then turns of user text; assistant text with a tool call (JSON
// input); the tool's result; assistant text; and now and then a system
// message (a replace every 500 turns). 20,000 messages make a session log
// of about 13 MB.
func Messages(n int) []conversation.Message {
	r := rand.New(rand.NewPCG(1, 2))
	msgs := make([]conversation.Message, 0, n+8)
	msgs = append(msgs, conversation.SystemMessage(Text(r, 3000), conversation.ModeAppend),
		conversation.SystemMessage(Text(r, 800), conversation.ModeAppend))
	for turn := 0; len(msgs) < n; turn++ {
		switch {
		case turn%500 == 499:
			msgs = append(msgs, conversation.SystemMessage(Text(r, 2000), conversation.ModeReplace))
		case turn%97 == 96:
			msgs = append(msgs, conversation.SystemMessage(Text(r, 200), conversation.ModeAppend))
		}
		id := fmt.Sprintf("toolu_%016x", r.Uint64())
		input, _ := json.Marshal(map[string]any{
			"path": "internal/" + words[r.IntN(len(words))] + ".go", "old": Text(r, 40+r.IntN(120)), "new": Text(r, 40+r.IntN(120)),
		})
		msgs = append(msgs,
			conversation.UserText(Text(r, 80+r.IntN(300))),
			conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
				conversation.Text(Text(r, 80+r.IntN(300))),
				conversation.ToolUse(id, "edit", input),
			}},
			conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{
				conversation.ToolResult(id, Text(r, 150+r.IntN(1150)), r.IntN(20) == 0),
			}},
			conversation.AssistantText(Text(r, 100+r.IntN(450))),
		)
	}
	return msgs[:n]
}
