package conversation

import "slices"

// SystemText is one surviving block of the effective system prompt.
type SystemText struct {
	// Text is the block's text as recorded.
	Text string
	// Key is the block's section key (Block.Key), or "" for an unkeyed
	// block.
	Key string
	// Source says who wrote the block's text (Block.Source), for people.
	Source string
	// Index is the position, in the message list that was derived, of the
	// system message that last set the block's text: the one that added
	// it or, for a section updated in place, the latest update.
	Index int
}

// EffectiveSystem derives the effective system prompt of msgs: the ordered
// system-text blocks that survive. It walks the messages in order, and
// applies every System block of a system-role message:
//
//   - an unkeyed block in append mode is added at the end;
//   - a block in replace mode first clears the list, keyed blocks
//     included ("replace means replace"), then is added; a keyed replace
//     with an empty text leaves the list empty;
//   - a keyed block in append mode whose key names a surviving block sets
//     that block's text (and source) in place: it keeps its position. An
//     empty text removes the block;
//   - a keyed block in append mode with a new key is added at the end;
//     with an empty text it adds nothing.
//
// So a keyed block in the result never has an empty text, and no two
// have the same key; an unkeyed block may be empty (the serializers skip
// those). Source is carried along and never changes what the prompt is.
//
// This is the only implementation of the rule. The serializers, the
// session-log rebuild and the "prompt as of message N" view all call it;
// the prompt as of message N is EffectiveSystem(msgs[:N]). It takes time
// linear in len(msgs) and allocates only the result (and, for a prompt of
// many blocks edited by key, one small map).
func EffectiveSystem(msgs []Message) []SystemText {
	var d derivation
	for i := range msgs {
		m := &msgs[i]
		if m.Role != RoleSystem {
			continue
		}
		for j := range m.Content {
			b := &m.Content[j] // by reference: a Block is large
			switch {
			case b.Type != TypeSystem:
			case b.Key == "":
				if b.Mode == ModeReplace {
					d.clear()
				}
				d.out = append(d.out, SystemText{Text: b.Text, Source: b.Source, Index: i})
			default:
				d.keyed(b, i)
			}
		}
	}
	if d.removed > 0 {
		d.out = slices.DeleteFunc(d.out, func(s SystemText) bool { return s.Index < 0 })
	}
	return d.out
}

// mapFrom is how many blocks the running list must hold before a keyed
// block finds its section through a map rather than a scan of the list.
const mapFrom = 32

// derivation is EffectiveSystem's running list.
type derivation struct {
	out []SystemText
	// removed counts the removed sections still in out as gaps (Index
	// -1, no key), so that a removal costs no shift; they are dropped at
	// the end.
	removed int
	// keys maps each surviving key to its block in out, once a keyed
	// block met a list of mapFrom blocks or more; nil until then.
	keys map[string]int
}

func (d *derivation) clear() {
	d.out, d.removed, d.keys = d.out[:0], 0, nil
}

// keyed applies a keyed block of message i.
func (d *derivation) keyed(b *Block, i int) {
	if b.Mode == ModeReplace {
		d.clear()
	} else if k := d.find(b.Key); k >= 0 {
		if b.Text == "" {
			d.out[k] = SystemText{Index: -1}
			d.removed++
			delete(d.keys, b.Key)
			return
		}
		d.out[k] = SystemText{Text: b.Text, Key: b.Key, Source: b.Source, Index: i}
		return
	}
	if b.Text == "" {
		return
	}
	if d.keys != nil {
		d.keys[b.Key] = len(d.out)
	}
	d.out = append(d.out, SystemText{Text: b.Text, Key: b.Key, Source: b.Source, Index: i})
}

// find returns the position in out of the block keyed key, or -1.
func (d *derivation) find(key string) int {
	if d.keys == nil && len(d.out) >= mapFrom {
		d.keys = make(map[string]int)
		for k := range d.out {
			if d.out[k].Key != "" {
				d.keys[d.out[k].Key] = k
			}
		}
	}
	if d.keys != nil {
		if k, ok := d.keys[key]; ok {
			return k
		}
		return -1
	}
	for k := range d.out {
		if d.out[k].Key == key {
			return k
		}
	}
	return -1
}

// Texts returns the text of each block, in order.
func Texts(blocks []SystemText) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.Text
	}
	return out
}
