package tokens

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/panto-dev/panto/conversation"
)

func TestTextIsAboutFourBytesATokenAndNeverZeroForText(t *testing.T) {
	assert.Equal(t, 0, Text(""))
	assert.Equal(t, 1, Text("a"))
	assert.Equal(t, 1, Text("abcd"))
	assert.Equal(t, 2, Text("abcde"))
	assert.Equal(t, 250, Text(string(make([]byte, 1000))))
}

func TestMessagesCountEveryPartOfABlock(t *testing.T) {
	plain := Messages([]conversation.Message{conversation.UserText("hello there")})
	call := conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
		conversation.ToolUse("id1", "read", []byte(`{"path":"main.go"}`)),
	}}
	result := conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{
		conversation.ToolResult("id1", "package main\n\nfunc main() {}\n", false),
	}}
	assert.Greater(t, plain, Text("hello there"))
	assert.Greater(t, Messages([]conversation.Message{call}), Text(`{"path":"main.go"}`))
	assert.Greater(t, Messages([]conversation.Message{result}), Text("package main\n\nfunc main() {}\n"))
	assert.Equal(t, plain+Message(call), Messages([]conversation.Message{conversation.UserText("hello there"), call}))
}

func TestScaleSumsToTheTotal(t *testing.T) {
	got := Scale([]int{100, 300, 1}, 1000)
	assert.Equal(t, 1000, got[0]+got[1]+got[2])
	assert.InDelta(t, 249, got[0], 1)
	assert.InDelta(t, 748, got[1], 1)
	assert.Nil(t, Scale([]int{0, 0}, 10))
	assert.Equal(t, []int{0, 0}, Scale([]int{1, 1}, 0))
}
