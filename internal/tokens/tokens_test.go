package tokens

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// counted is text whose real token counts OpenAI's tokenizers gave
// (testdata/counted.json: chunks of this repository's docs, code and
// JSON, and a few short texts; counted with tiktoken-go v0.1.8's
// o200k_base and cl100k_base, offline vocabularies of
// tiktoken-go-loader v0.0.2).
type counted struct {
	From   string `json:"from"`
	Text   string `json:"text"`
	O200k  int    `json:"o200k_base"`
	Cl100k int    `json:"cl100k_base"`
}

func TestTextIsNearTheRealCountOfGPT4osTokenizer(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "counted.json"))
	require.NoError(t, err)
	var samples []counted
	require.NoError(t, json.Unmarshal(data, &samples))
	require.NotEmpty(t, samples)
	var errs []float64
	est, real := 0, 0
	for _, s := range samples {
		n := Text(s.Text)
		off := float64(n)/float64(s.O200k) - 1
		errs = append(errs, math.Abs(off))
		est += n
		real += s.O200k
		switch s.From {
		case "Japanese":
			// Letters of a script with few to a token: about one each.
			assert.InDelta(t, s.O200k, n, float64(s.O200k)*0.5, s.From)
		case "a sha256 hash":
			// Random text: off more than prose (Text's doc says by how much).
			assert.InDelta(t, 0, off, 0.25, "%s: estimated %d, real %d", s.From, n, s.O200k)
		default:
			assert.InDelta(t, 0, off, 0.15, "%s: estimated %d, real %d", s.From, n, s.O200k)
		}
	}
	sort.Float64s(errs)
	median := errs[len(errs)/2]
	t.Logf("%d samples: median error %.1f%%, total %d estimated against %d real (%+.1f%%)",
		len(samples), 100*median, est, real, 100*(float64(est)/float64(real)-1))
	assert.Less(t, median, 0.05, "half the samples within 5%")
	assert.InDelta(t, 0, float64(est)/float64(real)-1, 0.03, "the total within 3%")
}

func TestTextIsNeverZeroForText(t *testing.T) {
	assert.Equal(t, 0, Text(""))
	assert.Equal(t, 1, Text("a"))
	assert.Equal(t, 1, Text("\x00"))
	assert.Equal(t, 1, Text(" "))
	assert.Equal(t, 2, Text("hello world"))
	assert.Equal(t, 1, Text("\xff"), "an invalid byte")
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "hello, world", "a\n\n\tb", "\xff\xfe", "日本語", "it's 2026", "  {\"a\": [1,2]}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Text(s)
		if s == "" {
			require.Equal(t, 0, n)
			return
		}
		// Never zero for text, never more than a token a byte.
		require.GreaterOrEqual(t, n, 1)
		require.LessOrEqual(t, n, len(s))
		require.LessOrEqual(t, Text(s+s), 2*n+2, "text twice is about twice the tokens")
		require.GreaterOrEqual(t, Text(s+s), n)
	})
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
