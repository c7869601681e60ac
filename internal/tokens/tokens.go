// Package tokens estimates how many tokens text, messages and tool
// definitions take in a model request, without a tokenizer: text is
// split as the GPT-4o tokenizer splits it before its merges and each
// piece priced as measured (Text), and each wire's framing (message
// wrappers, the reply's start, the tools' preamble) is added as the
// providers document it (Wire).
//
// An estimate is for attribution ("which part costs what") and for
// thresholds; where the provider reported a real count, show it beside
// the estimate, or scale the estimates to it (Scale).
package tokens

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/panto-dev/panto/conversation"
)

// messageOverhead is a message's wrapper: its role and the separators
// around it (OpenAI documents 3 tokens a message and the role's own).
const messageOverhead = 4

// blockOverhead is the wrapper of a content block other than text: its
// type, an id, and the separators (text blocks run on in the message).
const blockOverhead = 3

// Block estimates the tokens of one content block: its text, thinking,
// tool input and nested result content, and its framing.
func Block(b conversation.Block) int {
	n := Text(b.Text) + Text(b.Thinking) + Text(string(b.Input)) + Text(b.Name)
	if b.Type != conversation.TypeText {
		n += blockOverhead
	}
	for _, c := range b.Content {
		n += Block(c)
	}
	return n
}

// Message estimates the tokens of one message.
func Message(m conversation.Message) int {
	n := messageOverhead
	for _, b := range m.Content {
		n += Block(b)
	}
	return n
}

// Messages estimates the tokens of msgs.
func Messages(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		n += Message(m)
	}
	return n
}

// Wire is how a provider frames a request. The zero Wire is Anthropic's
// (the estimates panto takes when it does not know the provider).
type Wire struct{ openai bool }

// WireOf is the framing of provider ("openai" for OpenAI's Chat
// Completions and servers that speak it; anything else Anthropic's).
func WireOf(provider string) Wire { return Wire{openai: provider == "openai"} }

// Tool estimates the tokens of one tool definition. Neither wire shows
// the model its tools as the JSON they are sent in: OpenAI's renders
// them as declarations, and Anthropic's tool-use prompt does much the
// same; both are estimated as OpenAI's cookbook counts them ("How to
// count tokens with tiktoken"): 7 a function with its name and
// description, 3 a parameter list, 3 a parameter with its name, type
// and description, 3 an enum value. Nested objects' parameters count
// the same way.
func Tool(name, description string, schema []byte) int {
	n := 7 + Text(name+":"+strings.TrimSuffix(description, "."))
	var s jsonSchema
	if json.Unmarshal(schema, &s) == nil {
		n += s.params()
	} else {
		n += Text(string(schema))
	}
	return n
}

// System estimates one block of the system prompt on w: OpenAI's wire
// sends each block as a system message of its own, with its wrapper;
// Anthropic's the blocks in one system field, whose wrapper its count
// of a request shows no cost for.
func (w Wire) System(text string) int {
	if w.openai {
		return messageOverhead + Text(text)
	}
	return Text(text)
}

// Overhead is what w adds once to a request: the reply's start, and
// with tools the preamble that presents them (Anthropic's tool-use
// system prompt: 346 tokens on Claude 4 models with tool_choice auto,
// as its tool-use pricing table says; OpenAI's declarations' wrapper,
// 12 by the cookbook).
func (w Wire) Overhead(tools bool) int {
	n := 3 // the reply's start
	if tools {
		if w.openai {
			n += 12
		} else {
			n += 346
		}
	}
	return n
}

// jsonSchema is what the estimate reads of a tool's JSON Schema.
type jsonSchema struct {
	Type        any                    `json:"type"`
	Description string                 `json:"description"`
	Enum        []any                  `json:"enum"`
	Properties  map[string]*jsonSchema `json:"properties"`
	Items       *jsonSchema            `json:"items"`
}

// params estimates s's parameters as OpenAI declares them.
func (s *jsonSchema) params() int {
	if s == nil {
		return 0
	}
	if len(s.Properties) == 0 {
		return s.Items.params()
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := 3
	for _, k := range keys {
		p := s.Properties[k]
		if p == nil {
			continue
		}
		n += 3
		typ, _ := json.Marshal(p.Type)
		n += Text(k + ":" + strings.Trim(string(typ), `"`) + ":" + strings.TrimSuffix(p.Description, "."))
		if len(p.Enum) > 0 {
			n -= 3
			for _, v := range p.Enum {
				e, _ := json.Marshal(v)
				n += 3 + Text(strings.Trim(string(e), `"`))
			}
		}
		if len(p.Properties) > 0 || p.Items != nil {
			n += p.params()
		}
	}
	return n
}

// Scale shares total out among parts in proportion to their estimates,
// so that the shares sum to total exactly (largest remainders get the
// leftover tokens). It returns nil when the estimates are all zero.
func Scale(parts []int, total int) []int {
	sum := 0
	for _, p := range parts {
		sum += p
	}
	if sum <= 0 || total < 0 {
		return nil
	}
	out := make([]int, len(parts))
	rem := make([]int64, len(parts))
	given := 0
	for i, p := range parts {
		q := int64(p) * int64(total)
		out[i] = int(q / int64(sum))
		rem[i] = q % int64(sum)
		given += out[i]
	}
	for left := total - given; left > 0; left-- {
		best := -1
		for i := range rem {
			if rem[i] >= 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
	}
	return out
}
