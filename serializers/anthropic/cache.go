package anthropic

import "github.com/panto-dev/panto/conversation"

// Prompt caching. Anthropic caches only prefixes a request marks with
// cache_control, at most MaxCacheMarks per request, and a marked prefix
// is found again by a later request when that request marks the same
// place, or one up to about 20 blocks after it (the API's lookback). The
// prefix runs tools → system → messages. With Request.Cache.Mark set,
// EncodeRequest marks:
//
//  1. the system prompt (its one text block): tools and system, the part
//     every request of a session shares, kept when the conversation is
//     rewritten (a compaction, /tree);
//  2. the newest message's last markable block (the rolling breakpoint):
//     the whole request, for the next one to read;
//  3. the previous request's breakpoint — the last block of the newest
//     user message before the newest message — only when it lies
//     PrevMarkDistance blocks or more before the rolling one, where the
//     lookback might not reach it: a tool step whose calls and results
//     add many blocks would otherwise be written again whole.
//
// A mark never goes on a block the API does not let carry one (thinking,
// redacted thinking); it moves back to the nearest block that may. With
// no system prompt there is no system mark. The fourth slot stays free:
// see docs/system-prompt.md for why.

// MaxCacheMarks is the most cache_control breakpoints the API accepts in
// one request; EncodeRequest writes at most three.
const MaxCacheMarks = 4

// PrevMarkDistance is how many blocks before the rolling breakpoint the
// previous request's one must lie for a mark of its own. Anthropic's
// lookback is "about 20" blocks; counting 16 keeps a mark from depending
// on the "about".
const PrevMarkDistance = 16

// cacheControl is the breakpoint, as the last member of a block's object.
const cacheControl = `,"cache_control":{"type":"ephemeral"}`

// marks are the breakpoints among the messages' blocks, each the position
// of a block in the order the blocks are written (over all the wire
// messages, nested tool-result content not counted); -1 is none.
type marks struct{ rolling, prev int }

// noMarks marks nothing.
var noMarks = marks{rolling: -1, prev: -1}

func (m marks) has(seq int) bool {
	return seq == m.rolling || seq == m.prev
}

// markable reports whether a block may carry cache_control: the request
// schema gives it to text, image, tool_use and tool_result blocks, not to
// thinking or redacted_thinking.
func markable(blk *conversation.Block) bool {
	switch blk.Type {
	case conversation.TypeText, conversation.TypeImage, conversation.TypeToolUse, conversation.TypeToolResult:
		return true
	}
	return false
}

// planMarks chooses the breakpoints among the blocks appendMessages will
// write for msgs (a pure function of msgs).
func planMarks(msgs []conversation.Message) marks {
	// For each wire message: its role and the position of its last
	// markable block, or of the nearest one before it.
	type wireMsg struct {
		role     string
		lastMark int
	}
	var wire []wireMsg
	seq, lastMark := 0, -1
	_ = eachRun(msgs, false, func(start, end int, role string) error {
		_ = eachRunBlock(msgs, start, end, role, func(_, _ int, blk *conversation.Block) error {
			if markable(blk) {
				lastMark = seq
			}
			seq++
			return nil
		})
		wire = append(wire, wireMsg{role, lastMark})
		return nil
	})
	m := noMarks
	if len(wire) == 0 {
		return m
	}
	m.rolling = wire[len(wire)-1].lastMark
	for k := len(wire) - 2; k >= 0; k-- {
		if wire[k].role != "user" {
			continue
		}
		if p := wire[k].lastMark; p >= 0 && m.rolling-p >= PrevMarkDistance {
			m.prev = p
		}
		break
	}
	return m
}
