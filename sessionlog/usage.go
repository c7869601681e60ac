package sessionlog

import "bytes"

// ModelUsage is the tokens the replies of one model used.
type ModelUsage struct {
	// Provider and Model are as the model_change entry in force names
	// them; both "" for the replies before any.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Usage    Usage  `json:"usage"`
}

// usageSums adds up usage by model, in the order the models first used
// tokens.
type usageSums struct {
	out   []ModelUsage
	index map[ModelChange]int
}

func (s *usageSums) add(m ModelChange, u Usage) {
	i, ok := s.index[m]
	if !ok {
		if s.index == nil {
			s.index = map[ModelChange]int{}
		}
		i = len(s.out)
		s.index[m] = i
		s.out = append(s.out, ModelUsage{Provider: m.Provider, Model: m.Model})
	}
	s.out[i].Usage.Add(u)
}

// UsageByModel sums the usage of the message entries of entries (a whole
// log's, in file order: every branch, since each request was paid for),
// by the model in force where each was recorded: the last model_change
// on its path from the root. Entries without usage count nothing; the
// result is nil when none has any, else in the order the models first
// appear.
func UsageByModel(entries []Entry) []ModelUsage {
	modelOf := make(map[string]ModelChange, len(entries))
	var sums usageSums
	for i := range entries {
		e := &entries[i]
		m := modelOf[e.ParentID]
		if mc := e.ModelChange; mc != nil {
			m = *mc
		}
		modelOf[e.ID] = m
		if e.Usage != nil {
			sums.add(m, *e.Usage)
		}
	}
	return sums.out
}

// usageTail is how much of the end of an assistant message's line the
// scan looks at for its usage: more than a usage object of five counts
// needs.
const usageTail = 256

var usageKey = []byte(`,"usage":`)

// usageByModel is UsageByModel of the log t was scanned from, with the
// replies' usage the scan kept (scanWith): only the model_change entries
// are decoded (they are few). A usage given elsewhere than at the end of
// its line is not seen (panto writes none there).
func (t *Tree) usageByModel() ([]ModelUsage, error) {
	if len(t.usage) == 0 {
		return nil, nil
	}
	n := t.nodes.n
	var changes []int32
	for i := range n {
		if t.nodes.at(i).kind() == kindModelChange {
			changes = append(changes, i)
		}
	}
	es, err := t.decode(changes)
	if err != nil {
		return nil, err
	}
	models := []ModelChange{{}}
	modelOf := make([]int32, n) // index in models
	var sums usageSums
	k := 0
	for i := range n {
		nd := t.nodes.at(i)
		var m int32
		if nd.parent >= 0 {
			m = modelOf[nd.parent]
		}
		if nd.kind() == kindModelChange {
			if mc := es[k].ModelChange; mc != nil {
				m = int32(len(models))
				models = append(models, *mc)
			}
			k++
		} else if u, ok := t.usage[i]; ok {
			sums.add(models[m], u)
		}
		modelOf[i] = m
	}
	return sums.out, nil
}

// usageAtEnd reads the usage object a line ends with: ,"usage":{...}}.
// A "usage" key nested in the message cannot match, since its object is
// followed by at least two closing brackets (the message's and the
// line's), and in a string the quotes would be escaped.
func (d *fastDecoder) usageAtEnd(tail []byte) (Usage, bool) {
	i := bytes.LastIndex(tail, usageKey)
	if i < 0 {
		return Usage{}, false
	}
	d.b, d.i = tail, i+len(usageKey)
	var u Usage
	if !d.usage(&u) {
		return Usage{}, false
	}
	d.ws()
	if !d.consume('}') {
		return Usage{}, false
	}
	d.ws()
	return u, d.i == len(d.b)
}
