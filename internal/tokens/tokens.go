// Package tokens estimates how many tokens text, messages and tool
// definitions take in a model request, without a tokenizer: about four
// bytes of English or code per token, as the providers' guides put it,
// plus a small cost per block for the framing the wire adds.
//
// An estimate is for attribution ("which part costs what") and for
// thresholds; where the provider reported a real count, show it beside
// the estimate, or scale the estimates to it (Scale).
package tokens

import (
	"github.com/panto-dev/panto/conversation"
)

// bytesPerToken is the bytes of text one token holds on average.
const bytesPerToken = 4

// blockOverhead is the tokens a content block's framing costs (its type,
// role and separators on the wire).
const blockOverhead = 4

// Text estimates the tokens of s: at least one for any text.
func Text(s string) int {
	if s == "" {
		return 0
	}
	return (len(s) + bytesPerToken - 1) / bytesPerToken
}

// Block estimates the tokens of one content block: its text, thinking,
// tool input and nested result content, and its framing.
func Block(b conversation.Block) int {
	n := blockOverhead + Text(b.Text) + Text(b.Thinking) + Text(string(b.Input)) + Text(b.Name)
	for _, c := range b.Content {
		n += Block(c)
	}
	return n
}

// Message estimates the tokens of one message.
func Message(m conversation.Message) int {
	n := blockOverhead
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

// Tool estimates the tokens of one tool definition: its name,
// description and input schema.
func Tool(name, description string, schema []byte) int {
	return blockOverhead + Text(name) + Text(description) + Text(string(schema))
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
