// What the index scan reads of an entry line without decoding it: its
// type, id, parent id and role, by a fast path for the lines panto
// writes and a decoder for any other.

package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errHeadTwice is the error for a line whose type, id or parent_id reads
// differently to the scan and to the decoder: the line gives one of them
// twice (encoding/json takes the last).
var errHeadTwice = errors.New("the line gives its type, id or parent_id twice")

// head is what the scan reads of an entry line. The slices point into the
// line; idv and parentv are the id and parent packed, when idHex and
// parentHex say they are 16 hex characters.
type head struct {
	typ, id, parent  []byte
	role             role
	idv, parentv     uint64
	idHex, parentHex bool
}

var (
	headType    = []byte(`{"type":"`)
	headID      = []byte(`,"id":"`)
	headParent  = []byte(`,"parent_id":"`)
	headTime    = []byte(`,"time":"`)
	headMessage = []byte(`,"message":{"role":"`)
)

// fastHead reads the head of a line in panto's layout; false for any
// other line.
func fastHead(l []byte, h *head) bool {
	if len(l) == 0 || l[len(l)-1] != '}' || !bytes.HasPrefix(l, headType) {
		return false
	}
	i := len(headType)
	var ok bool
	if h.typ, i, ok = plainAt(l, i); !ok || !bytes.HasPrefix(l[i:], headID) {
		return false
	}
	if h.id, h.idv, h.idHex, i, ok = idAt(l, i+len(headID)); !ok {
		return false
	}
	// A line without parent_id right after its id (the first entry, or
	// one written in another key order) is read the slow way: its
	// parent_id may come later.
	if !bytes.HasPrefix(l[i:], headParent) {
		return false
	}
	if h.parent, h.parentv, h.parentHex, i, ok = idAt(l, i+len(headParent)); !ok {
		return false
	}
	if string(h.typ) != string(TypeMessage) {
		return true
	}
	if !bytes.HasPrefix(l[i:], headTime) {
		return false
	}
	i += len(headTime)
	k := bytes.IndexByte(l[i:], '"')
	if k < 0 || !bytes.HasPrefix(l[i+k+1:], headMessage) {
		return false
	}
	var r []byte
	if r, _, ok = plainAt(l, i+k+1+len(headMessage)); !ok {
		return false
	}
	h.role = roleOfBytes(r)
	return true
}

// plainAt reads a string of printable ASCII without escapes from l[i:],
// up to its closing quote; it returns the string and the index after the
// quote.
func plainAt(l []byte, i int) ([]byte, int, bool) {
	for j := i; j < len(l); j++ {
		switch c := l[j]; {
		case c == '"':
			return l[i:j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// idAt is plainAt for an id, which is usually 16 hex characters: then it
// returns them packed too.
func idAt(l []byte, i int) (id []byte, v uint64, isHex bool, next int, ok bool) {
	if i+16 < len(l) && l[i+16] == '"' {
		if v, ok := packID(l[i : i+16]); ok {
			return l[i : i+16], v, true, i + 17, true
		}
	}
	id, next, ok = plainAt(l, i)
	v, isHex = packID(id)
	return id, v, isHex, next, ok
}

// slowHead reads the head of any line with encoding/json.
func slowHead(l []byte, h *head) error {
	var w struct {
		Type     EntryType       `json:"type"`
		ID       string          `json:"id"`
		ParentID string          `json:"parent_id"`
		Message  json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(l, &w); err != nil {
		return errors.New(describeJSONError(err))
	}
	h.typ, h.id, h.parent, h.role = []byte(w.Type), []byte(w.ID), []byte(w.ParentID), roleUnknown
	h.idv, h.idHex = packID(w.ID)
	h.parentv, h.parentHex = packID(w.ParentID)
	if w.Type == TypeMessage {
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(w.Message, &m) == nil {
			h.role = roleOf(m.Role)
		}
	}
	return nil
}

func kindOfBytes(b []byte) kind {
	switch string(b) {
	case "message":
		return kindMessage
	case "lifecycle":
		return kindLifecycle
	case "extension_data":
		return kindExtensionData
	case "model_change":
		return kindModelChange
	case "compaction":
		return kindCompaction
	case "move":
		return kindMove
	case "label":
		return kindLabel
	case "branch_summary":
		return kindBranchSummary
	case "permissions":
		return kindPermissions
	}
	return kindOther
}

func roleOfBytes(b []byte) role {
	switch string(b) {
	case "system":
		return roleSystem
	case "user":
		return roleUser
	case "assistant":
		return roleAssistant
	case "tool":
		return roleTool
	}
	return roleOther
}
