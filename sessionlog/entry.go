package sessionlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/panto-dev/panto/conversation"
)

// wireEntry is every field any known entry type has on disk, so one
// Unmarshal decodes any line.
type wireEntry struct {
	Type     EntryType `json:"type"`
	ID       string    `json:"id"`
	ParentID string    `json:"parent_id"`
	Time     time.Time `json:"time"`

	Message *conversation.MessageJSON `json:"message"`
	Usage   *Usage                    `json:"usage"` // message

	Event      LifecycleEvent `json:"event"`
	Reseeded   bool           `json:"reseeded"`
	Extensions []string       `json:"extensions"`

	Extension string          `json:"extension"`
	Data      json.RawMessage `json:"data"`

	Provider string `json:"provider"`
	Model    string `json:"model"`

	Summary      string `json:"summary"` // compaction, branch_summary
	FirstKeptID  string `json:"first_kept_id"`
	TokensBefore int    `json:"tokens_before"`

	From   string `json:"from"` // move, branch_summary
	Target string `json:"target"`
	Label  string `json:"label"`

	Reason  string    `json:"reason"` // tools (and its extension)
	Tools   []ToolDef `json:"tools"`
	Added   []string  `json:"added"`
	Removed []string  `json:"removed"`
	Changed []string  `json:"changed"`

	Permissions *Permissions `json:"permissions"`

	Name string `json:"name"` // session_info

	Request *RequestSettings `json:"request"` // request_settings
}

// rawHead is what an entry of an unknown type must have.
type rawHead struct {
	Type     EntryType       `json:"type"`
	ID       string          `json:"id"`
	ParentID string          `json:"parent_id"`
	Time     json.RawMessage `json:"time"`
}

// decodeEntry decodes one line into e; a message goes into slot, which e
// then points to. fd is tried first; encoding/json decides what fd gives
// up on.
func decodeEntry(fd *fastDecoder, line []byte, e *Entry, slot *conversation.Message) error {
	var fw wireEntry // on the stack: only the shortcut sees it
	if fd.entry(line, &fw) {
		return entryFromWire(&fw, line, e, slot)
	}
	w := new(wireEntry) // encoding/json takes it to the heap
	if err := json.Unmarshal(line, w); err != nil {
		// An unknown type may use the known fields' names for other
		// shapes; only its head has to be right.
		var h rawHead
		if json.Unmarshal(line, &h) != nil || h.Type.known() || h.Type == headerType || h.Type == "" {
			return errors.New(describeJSONError(err))
		}
		return rawEntry(line, h.Type, h.ID, h.ParentID, h.Time, e)
	}
	return entryFromWire(w, line, e, slot)
}

// entryFromWire checks a decoded line and fills e from it.
func entryFromWire(w *wireEntry, line []byte, e *Entry, slot *conversation.Message) error {
	switch {
	case w.Type == "":
		return errors.New("entry without a type")
	case w.Type == headerType:
		return errors.New("a second session header (only line 1 may be one)")
	case !w.Type.known():
		return rawEntry(line, w.Type, w.ID, w.ParentID, nil, e)
	case w.ID == "":
		return fmt.Errorf("%s entry without an id", w.Type)
	case w.Time.IsZero():
		return fmt.Errorf("%s entry %s without a time", w.Type, w.ID)
	case !writableTime(w.Time):
		return fmt.Errorf("%s entry %s: time %s is out of range", w.Type, w.ID, w.Time)
	}
	*e = Entry{Type: w.Type, ID: w.ID, ParentID: w.ParentID, Time: w.Time.UTC()}
	switch w.Type {
	case TypeMessage:
		if w.Message == nil {
			return fmt.Errorf("message entry %s without a message", w.ID)
		}
		m, err := messageFromDisk(w.Message)
		if err != nil {
			return fmt.Errorf("message entry %s: %w", w.ID, err)
		}
		*slot = m
		e.Message = slot
		if w.Usage != nil && *w.Usage != (Usage{}) {
			e.Usage = new(*w.Usage)
		}
	case TypeLifecycle:
		if w.Event == "" {
			return fmt.Errorf("lifecycle entry %s without an event", w.ID)
		}
		if len(w.Extensions) == 0 {
			w.Extensions = nil
		}
		e.Lifecycle = &Lifecycle{Event: w.Event, Reseeded: w.Reseeded, Extensions: w.Extensions}
	case TypeExtensionData:
		if w.Extension == "" {
			return fmt.Errorf("extension_data entry %s without an extension name", w.ID)
		}
		e.ExtensionData = &ExtensionData{Extension: w.Extension, Data: w.Data}
	case TypeModelChange:
		if w.Provider == "" || w.Model == "" {
			return fmt.Errorf("model_change entry %s without provider and model", w.ID)
		}
		e.ModelChange = &ModelChange{Provider: w.Provider, Model: w.Model}
	case TypeCompaction:
		if w.Summary == "" || w.FirstKeptID == "" {
			return fmt.Errorf("compaction entry %s without summary and first_kept_id", w.ID)
		}
		e.Compaction = &Compaction{Summary: w.Summary, FirstKeptID: w.FirstKeptID, TokensBefore: w.TokensBefore}
	case TypeMove:
		switch {
		case w.ParentID == "":
			return fmt.Errorf("move entry %s without a target (its parent_id)", w.ID)
		case w.From == "":
			return fmt.Errorf("move entry %s without from (the leaf it left)", w.ID)
		}
		e.Move = &Move{From: w.From}
	case TypeLabel:
		if w.Target == "" {
			return fmt.Errorf("label entry %s without a target", w.ID)
		}
		e.Label = &Label{Target: w.Target, Text: w.Label}
	case TypeBranchSummary:
		if w.Summary == "" || w.From == "" {
			return fmt.Errorf("branch_summary entry %s without summary and from", w.ID)
		}
		e.BranchSummary = &BranchSummary{Summary: w.Summary, From: w.From}
	case TypeTools:
		if w.Extension == "" {
			return fmt.Errorf("tools entry %s without an extension name", w.ID)
		}
		for _, t := range w.Tools {
			if t.Name == "" {
				return fmt.Errorf("tools entry %s: a tool without a name", w.ID)
			}
		}
		e.Tools = &Tools{Extension: w.Extension, Reason: w.Reason, Tools: w.Tools, Added: w.Added, Removed: w.Removed, Changed: w.Changed}
	case TypeSessionInfo:
		e.SessionInfo = &SessionInfo{Name: w.Name}
	case TypePermissions:
		if err := checkPermissions(w.Permissions); err != nil {
			return fmt.Errorf("%w (entry %s)", err, w.ID)
		}
		e.Permissions = w.Permissions
	case TypeRequestSettings:
		if err := checkRequestSettings(w.Request); err != nil {
			return fmt.Errorf("%w (entry %s)", err, w.ID)
		}
		e.RequestSettings = w.Request
	}
	return nil
}

// rawEntry keeps a line of an unknown type. Its id is required; a time
// that is not an RFC 3339 string is left zero.
func rawEntry(line []byte, typ EntryType, id, parentID string, rawTime json.RawMessage, e *Entry) error {
	if id == "" {
		return fmt.Errorf("entry of type %q without an id", typ)
	}
	*e = Entry{Type: typ, ID: id, ParentID: parentID, Raw: append(json.RawMessage(nil), line...)}
	if rawTime == nil {
		var t struct {
			Time json.RawMessage `json:"time"`
		}
		_ = json.Unmarshal(line, &t) // line is valid JSON: it decoded before
		rawTime = t.Time
	}
	var s string
	if json.Unmarshal(rawTime, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil && writableTime(t) {
			e.Time = t.UTC()
		}
	}
	return nil
}

// messageFromDisk turns a message as written into the model's form, by
// the one JSON shape of a message (conversation.MessageJSON), and checks
// it.
func messageFromDisk(w *conversation.MessageJSON) (conversation.Message, error) {
	m, err := w.Message()
	if err != nil {
		return m, err
	}
	return m, m.Validate()
}

// describeJSONError says what was wrong with a line, in words.
func describeJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("field %q cannot be a JSON %s", te.Field, te.Value)
	case errors.As(err, &te):
		return fmt.Sprintf("not a JSON object (a JSON %s)", te.Value)
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("time: %v", pe)
	}
	return err.Error()
}
