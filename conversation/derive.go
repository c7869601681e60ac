package conversation

// SystemText is one surviving block of the effective system prompt.
type SystemText struct {
	// Text is the block's text as recorded.
	Text string
	// Index is the position, in the message list that was derived, of the
	// system message the block came from.
	Index int
}

// EffectiveSystem derives the effective system prompt of msgs: the ordered
// system-text blocks that survive. It walks the messages in order; every
// System block of a system-role message in append mode is added to the
// running list, and one in replace mode first clears the list, then is
// added ("replace means replace").
//
// This is the only implementation of the rule. The serializers, the
// session-log rebuild and the "prompt as of message N" view all call it;
// the prompt as of message N is EffectiveSystem(msgs[:N]).
func EffectiveSystem(msgs []Message) []SystemText {
	var out []SystemText
	for i, m := range msgs {
		if m.Role != RoleSystem {
			continue
		}
		for _, b := range m.Content {
			if b.Type != TypeSystem {
				continue
			}
			if b.Mode == ModeReplace {
				out = out[:0]
			}
			out = append(out, SystemText{Text: b.Text, Index: i})
		}
	}
	return out
}

// Texts returns the text of each block, in order.
func Texts(blocks []SystemText) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.Text
	}
	return out
}

// NonSystem returns the messages of msgs that are not system messages, in
// their original order. The result shares msgs' backing data.
func NonSystem(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != RoleSystem {
			out = append(out, m)
		}
	}
	return out
}
