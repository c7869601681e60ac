package sessionlog

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/panto-dev/panto/conversation"
)

// Version is the format version this package writes, and the newest it
// reads. A log whose header has a greater version was written by a newer
// panto and is refused (see ErrNewerVersion).
const Version = 1

// ErrNewerVersion is wrapped by the error for a log whose header version is
// greater than Version. The log is fine; this panto is too old to read it.
// Tell the user to upgrade panto; do not try to repair or rewrite the file.
var ErrNewerVersion = errors.New("session log written by a newer panto")

// Header is the first line of a log: {"type":"session",...}. It is the only
// line without an entry id.
type Header struct {
	// Version is the format version (Version when written by this panto).
	Version int
	// ID is the session's id, a random UUIDv4-style string (NewID).
	ID string
	// Created is when the session was created, in UTC.
	Created time.Time
	// Cwd is the absolute working directory the session was started in.
	Cwd string
	// ParentSession is, for a session forked from another, the id of the
	// session it was forked from; "" otherwise. Written only when set.
	ParentSession string
	// ParentEntry is, for a forked session, the id of the entry of
	// ParentSession's log it was forked at; "" otherwise. Written only
	// when set.
	ParentEntry string
}

// EntryType names the kind of an entry (its "type" field).
type EntryType string

// The entry types this version knows. Any other type read from a log is
// kept as raw JSON (Entry.Raw): it takes part in the tree but not in the
// conversation.
const (
	// TypeMessage carries one conversation message (Entry.Message).
	TypeMessage EntryType = "message"
	// TypeLifecycle marks a start or resume of the session (Entry.Lifecycle).
	TypeLifecycle EntryType = "lifecycle"
	// TypeExtensionData is an extension's state, never sent to the model
	// (Entry.ExtensionData).
	TypeExtensionData EntryType = "extension_data"
	// TypeModelChange records a switch of provider or model
	// (Entry.ModelChange).
	TypeModelChange EntryType = "model_change"
	// TypeCompaction records a summary of the messages before
	// FirstKeptID, which requests send in their place (Entry.Compaction).
	TypeCompaction EntryType = "compaction"
	// TypeMove records that the user moved to another point of the tree:
	// its parent is the point moved to (Entry.Move).
	TypeMove EntryType = "move"
	// TypeLabel gives an entry a label, or removes it (Entry.Label).
	TypeLabel EntryType = "label"
	// TypeBranchSummary summarises a branch the user left, on the path
	// taken instead (Entry.BranchSummary).
	TypeBranchSummary EntryType = "branch_summary"
	// TypeTools records an extension's tool set: what the model is offered
	// from it from here on (Entry.Tools).
	TypeTools EntryType = "tools"
	// TypePermissions records the permission policy in force from here
	// on (Entry.Permissions).
	TypePermissions EntryType = "permissions"
	// TypeSessionInfo names the session (Entry.SessionInfo): /name. The
	// latest in the file wins.
	TypeSessionInfo EntryType = "session_info"
	// TypeRequestSettings records what shapes the model requests from
	// here on, apart from the conversation (Entry.RequestSettings).
	TypeRequestSettings EntryType = "request_settings"
)

// headerType is the "type" of the header line; no entry may use it.
const headerType = "session"

func (t EntryType) known() bool {
	switch t {
	case TypeMessage, TypeLifecycle, TypeExtensionData, TypeModelChange, TypeCompaction,
		TypeMove, TypeLabel, TypeBranchSummary, TypeTools, TypePermissions, TypeSessionInfo, TypeRequestSettings:
		return true
	}
	return false
}

// Entry is one line of the log after the header. Type says which of the
// payload fields is set; ID and ParentID place it in the tree.
type Entry struct {
	Type EntryType
	// ID is 16 lowercase hex characters when written by this package
	// (readers accept any non-empty string). Unique within the log.
	ID string
	// ParentID is the id of the entry this one follows; empty only for the
	// first entry of the log.
	ParentID string
	// Time is when the entry was recorded, in UTC.
	Time time.Time

	// Message is the payload of a TypeMessage entry. A system message is
	// held as conversation.SystemMessage or KeyedSystemMessage builds it:
	// System blocks, with their mode, key and source. On disk it has the
	// one JSON shape of a message, conversation's (MessageJSON).
	Message *conversation.Message
	// Usage is, on a message entry of an assistant reply, the tokens the
	// request that produced it used, as the provider reported them; nil
	// when not known (an older log, a reply not from a provider). On disk
	// it is the entry's "usage" object, after the message.
	Usage *Usage
	// Lifecycle is the payload of a TypeLifecycle entry.
	Lifecycle *Lifecycle
	// ExtensionData is the payload of a TypeExtensionData entry.
	ExtensionData *ExtensionData
	// ModelChange is the payload of a TypeModelChange entry.
	ModelChange *ModelChange
	// Compaction is the payload of a TypeCompaction entry.
	Compaction *Compaction
	// Move is the payload of a TypeMove entry.
	Move *Move
	// Label is the payload of a TypeLabel entry.
	Label *Label
	// BranchSummary is the payload of a TypeBranchSummary entry.
	BranchSummary *BranchSummary
	// Tools is the payload of a TypeTools entry.
	Tools *Tools
	// Permissions is the payload of a TypePermissions entry.
	Permissions *Permissions
	// SessionInfo is the payload of a TypeSessionInfo entry.
	SessionInfo *SessionInfo
	// RequestSettings is the payload of a TypeRequestSettings entry.
	RequestSettings *RequestSettings

	// Raw is the whole line of an entry of a type this version does not
	// know, kept so it can be written back byte for byte: Append writes
	// such an entry as its Raw line, whose own id and parent_id hold. Nil
	// for the known types.
	Raw json.RawMessage
}

// LifecycleEvent says what a lifecycle entry marks. A newer panto may add
// events; readers keep them as they are.
type LifecycleEvent string

// The lifecycle events.
const (
	// LifecycleStarted marks a fresh session, after the system prompt
	// was seeded.
	LifecycleStarted LifecycleEvent = "started"
	// LifecycleResumed marks a resume, after the system prompt was
	// reconciled with the configuration.
	LifecycleResumed LifecycleEvent = "resumed"
)

// Lifecycle is the payload of a lifecycle entry. The host records one right
// after seeding or reconciling the system prompt, so the run of seed system
// entries always ends with an entry of another kind.
type Lifecycle struct {
	Event LifecycleEvent
	// Reseeded is true when the system prompt was (re)seeded from the
	// configuration in this start or resume.
	Reseeded bool
	// Extensions names the extensions loaded, in load order.
	Extensions []string
}

// ExtensionData is an extension's state. It is never sent to the model.
type ExtensionData struct {
	// Extension is the extension's name.
	Extension string
	// Data is any JSON value; nil is written as null.
	Data json.RawMessage
}

// Compaction records that the conversation's messages before the entry
// FirstKeptID were summarised: requests send the system messages among
// them (never summarised away), then Summary, then the messages from
// FirstKeptID on. The messages themselves stay in the log.
type Compaction struct {
	Summary     string
	FirstKeptID string
	// TokensBefore is the context size that triggered it, when known.
	TokensBefore int
}

// CompactionEntry returns an entry recording a compaction.
func CompactionEntry(summary, firstKeptID string, tokensBefore int) Entry {
	return Entry{Type: TypeCompaction, Compaction: &Compaction{Summary: summary, FirstKeptID: firstKeptID, TokensBefore: tokensBefore}}
}

// Move records that the user moved to another point of the tree. The
// point moved to is the entry's parent, so the chain from the root to the
// move is the conversation from then on, and the next entry follows the
// move. Nothing else is needed to read a log with moves: the last entry
// is still the current leaf.
type Move struct {
	// From is the leaf the user left.
	From string
}

// MoveEntry returns an entry recording a move to the entry target from
// the leaf from: its ParentID is target.
func MoveEntry(target, from string) Entry {
	return Entry{Type: TypeMove, ParentID: target, Move: &Move{From: from}}
}

// Label gives the entry Target the label Text; an empty Text removes
// its label. The latest label entry of a target wins. A label entry is
// placed in the tree like any other (its parent is the current leaf); its
// target may be anywhere.
type Label struct {
	Target string
	Text   string
}

// LabelEntry returns an entry labelling the entry target with text (""
// removes its label).
func LabelEntry(target, text string) Entry {
	return Entry{Type: TypeLabel, Label: &Label{Target: target, Text: text}}
}

// SessionInfo names the session: what the session lists show beside
// its id (/name). An empty Name removes the name. The latest
// session_info entry of the file wins, wherever it is in the tree.
type SessionInfo struct {
	Name string
}

// SessionInfoEntry returns an entry naming the session name ("" removes
// its name).
func SessionInfoEntry(name string) Entry {
	return Entry{Type: TypeSessionInfo, SessionInfo: &SessionInfo{Name: name}}
}

// BranchSummary summarises the branch the user left (ending at the entry
// From) on the path taken instead, so that the model knows what was
// tried there. The host sends it as a user message.
type BranchSummary struct {
	Summary string
	From    string
}

// BranchSummaryEntry returns an entry summarising the branch that ends at
// the entry from.
func BranchSummaryEntry(summary, from string) Entry {
	return Entry{Type: TypeBranchSummary, BranchSummary: &BranchSummary{Summary: summary, From: from}}
}

// Tools records the whole tool set of one extension from here on: what
// the model is offered from it on each later request of this path, until
// the next tools entry of that extension. Added, Removed and Changed name
// what differs from the set recorded before (all of Tools are added when
// there was none). Reason says why, for people.
type Tools struct {
	Extension string
	Reason    string
	Tools     []ToolDef
	Added     []string
	Removed   []string
	Changed   []string
}

// ToolDef is one tool as the model is offered it.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolSetsOf returns the tool sets a path of entries (root first) ends
// with: each extension's last recorded set, in the order the extensions
// were first recorded, without the empty ones. It is what the next
// request of that path offers, before narrowing.
func ToolSetsOf(entries []Entry) []Tools {
	var order []string
	last := map[string]*Tools{}
	for i := range entries {
		t := entries[i].Tools
		if t == nil {
			continue
		}
		if _, seen := last[t.Extension]; !seen {
			order = append(order, t.Extension)
		}
		last[t.Extension] = t
	}
	var out []Tools
	for _, name := range order {
		if t := last[name]; len(t.Tools) > 0 {
			out = append(out, *t)
		}
	}
	return out
}

// ToolsEntry returns an entry recording an extension's tool set.
func ToolsEntry(t Tools) Entry { return Entry{Type: TypeTools, Tools: &t} }

// ModelChange records that later requests go to Model of Provider.
type ModelChange struct {
	Provider string
	Model    string
}

// MessageEntry returns an entry recording m. Append fills in the id,
// parent and time.
func MessageEntry(m conversation.Message) Entry {
	return Entry{Type: TypeMessage, Message: &m}
}

// ReplyEntry returns an entry recording the assistant reply m with the
// tokens its request used (nil: not known).
func ReplyEntry(m conversation.Message, u *Usage) Entry {
	e := MessageEntry(m)
	if u != nil && *u != (Usage{}) {
		e.Usage = new(*u)
	}
	return e
}

// Usage is the tokens one model request used, as the provider reported
// them; its JSON is that of serializers.Usage. InputTokens is the
// provider's own count: Anthropic's leaves out the cache reads and
// writes, OpenAI's includes the cache reads.
type Usage struct {
	InputTokens      int `json:"input_tokens,omitempty"`
	OutputTokens     int `json:"output_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Add adds o's tokens to u's.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// LifecycleEntry returns an entry recording a start or resume.
func LifecycleEntry(event LifecycleEvent, reseeded bool, extensions []string) Entry {
	return Entry{Type: TypeLifecycle, Lifecycle: &Lifecycle{Event: event, Reseeded: reseeded, Extensions: extensions}}
}

// ExtensionDataEntry returns an entry recording an extension's state.
func ExtensionDataEntry(extension string, data json.RawMessage) Entry {
	return Entry{Type: TypeExtensionData, ExtensionData: &ExtensionData{Extension: extension, Data: data}}
}

// ModelChangeEntry returns an entry recording a switch of model.
func ModelChangeEntry(provider, model string) Entry {
	return Entry{Type: TypeModelChange, ModelChange: &ModelChange{Provider: provider, Model: model}}
}

// WithParent returns e with ParentID set: appended, it starts or continues
// the branch below the entry parentID instead of following the current
// leaf. This is how navigating to an earlier point is recorded.
func (e Entry) WithParent(parentID string) Entry {
	e.ParentID = parentID
	return e
}

// NewID returns a random session id in the UUIDv4 form
// (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx), from crypto/rand.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// newEntryID returns 16 random lowercase hex characters.
func newEntryID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// The JSON shapes of the lines. Field order here is the order on disk.

type headerLine struct {
	Type          string `json:"type"`
	Version       int    `json:"version"`
	ID            string `json:"id"`
	Created       string `json:"created"`
	Cwd           string `json:"cwd"`
	ParentSession string `json:"parent_session,omitempty"`
	ParentEntry   string `json:"parent_entry,omitempty"`
}

type lineHead struct {
	Type     EntryType `json:"type"`
	ID       string    `json:"id"`
	ParentID string    `json:"parent_id,omitempty"`
	Time     string    `json:"time"`
}

// messageLine holds a message as conversation.Message.JSONValue gives it:
// the one JSON shape of a message is conversation's.
type messageLine struct {
	lineHead
	Message any    `json:"message"`
	Usage   *Usage `json:"usage,omitempty"` // last: Summarize reads it from the line's end
}

type lifecycleLine struct {
	lineHead
	Event      LifecycleEvent `json:"event"`
	Reseeded   bool           `json:"reseeded"`
	Extensions []string       `json:"extensions"`
}

type extensionDataLine struct {
	lineHead
	Extension string          `json:"extension"`
	Data      json.RawMessage `json:"data"`
}

type compactionLine struct {
	lineHead
	Summary      string `json:"summary"`
	FirstKeptID  string `json:"first_kept_id"`
	TokensBefore int    `json:"tokens_before,omitempty"`
}

type moveLine struct {
	lineHead
	From string `json:"from"`
}

type labelLine struct {
	lineHead
	Target string `json:"target"`
	Label  string `json:"label"`
}

type sessionInfoLine struct {
	lineHead
	Name string `json:"name"`
}

type branchSummaryLine struct {
	lineHead
	Summary string `json:"summary"`
	From    string `json:"from"`
}

type toolsLine struct {
	lineHead
	Extension string    `json:"extension"`
	Reason    string    `json:"reason,omitempty"`
	Tools     []ToolDef `json:"tools"`
	Added     []string  `json:"added,omitempty"`
	Removed   []string  `json:"removed,omitempty"`
	Changed   []string  `json:"changed,omitempty"`
}

type modelChangeLine struct {
	lineHead
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// newEncoder returns an encoder that appends to buf and leaves <, > and &
// as they are, so the log stays readable.
func newEncoder(buf *bytes.Buffer) *json.Encoder {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc
}

// appendHeader writes h as the header line, with its newline.
func appendHeader(buf *bytes.Buffer, h Header) error {
	return newEncoder(buf).Encode(headerLine{
		Type: headerType, Version: h.Version, ID: h.ID, Created: formatTime(h.Created), Cwd: h.Cwd,
		ParentSession: h.ParentSession, ParentEntry: h.ParentEntry,
	})
}

// appendEntry writes e as one line, with its newline. e must have passed
// checkEntry. On error buf may hold part of the line; the caller discards
// it.
func appendEntry(buf *bytes.Buffer, e *Entry) error {
	head := lineHead{Type: e.Type, ID: e.ID, ParentID: e.ParentID, Time: formatTime(e.Time)}
	var v any
	switch e.Type {
	case TypeMessage:
		m, err := e.Message.JSONValue()
		if err != nil {
			return err
		}
		v = messageLine{head, m, e.Usage}
	case TypeLifecycle:
		ext := e.Lifecycle.Extensions
		if ext == nil {
			ext = []string{}
		}
		v = lifecycleLine{head, e.Lifecycle.Event, e.Lifecycle.Reseeded, ext}
	case TypeExtensionData:
		data := e.ExtensionData.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		v = extensionDataLine{head, e.ExtensionData.Extension, data}
	case TypeModelChange:
		v = modelChangeLine{head, e.ModelChange.Provider, e.ModelChange.Model}
	case TypeCompaction:
		v = compactionLine{head, e.Compaction.Summary, e.Compaction.FirstKeptID, e.Compaction.TokensBefore}
	case TypeMove:
		v = moveLine{head, e.Move.From}
	case TypeLabel:
		v = labelLine{head, e.Label.Target, e.Label.Text}
	case TypeBranchSummary:
		v = branchSummaryLine{head, e.BranchSummary.Summary, e.BranchSummary.From}
	case TypeTools:
		t := e.Tools
		tools := t.Tools
		if tools == nil {
			tools = []ToolDef{}
		}
		v = toolsLine{head, t.Extension, t.Reason, tools, t.Added, t.Removed, t.Changed}
	case TypePermissions:
		v = permissionsLine{head, e.Permissions}
	case TypeSessionInfo:
		v = sessionInfoLine{head, e.SessionInfo.Name}
	case TypeRequestSettings:
		v = requestSettingsLine{head, e.RequestSettings}
	default:
		return appendRaw(buf, e.Raw)
	}
	return newEncoder(buf).Encode(v)
}

// appendRaw writes an unknown entry's line untouched; only a line that
// spans several lines is compacted onto one.
func appendRaw(buf *bytes.Buffer, raw json.RawMessage) error {
	if bytes.ContainsAny(raw, "\r\n") {
		if err := json.Compact(buf, raw); err != nil {
			return err
		}
	} else {
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	return nil
}

// checkEntry checks that e, as handed to Append, can be written and read
// back: its payload is set and well formed.
func checkEntry(e *Entry) error {
	switch e.Type {
	case TypeMessage:
		if e.Message == nil {
			return errors.New("message entry without a message")
		}
		if err := e.Message.Validate(); err != nil {
			return err
		}
		_, err := e.Message.JSONValue() // it may have no JSON shape
		return err
	case TypeLifecycle:
		if e.Lifecycle == nil {
			return errors.New("lifecycle entry without its payload")
		}
		if e.Lifecycle.Event == "" {
			// Other events than started and resumed are kept: a newer
			// panto may record them, and copying its log must not fail.
			return errors.New("lifecycle entry without an event")
		}
		return nil
	case TypeExtensionData:
		if e.ExtensionData == nil || e.ExtensionData.Extension == "" {
			return errors.New("extension_data entry without an extension name")
		}
		if d := e.ExtensionData.Data; len(d) > 0 && !json.Valid(d) {
			return fmt.Errorf("extension_data entry of %s: data is not valid JSON", e.ExtensionData.Extension)
		}
		return nil
	case TypeModelChange:
		if e.ModelChange == nil || e.ModelChange.Provider == "" || e.ModelChange.Model == "" {
			return errors.New("model_change entry without provider and model")
		}
		return nil
	case TypeCompaction:
		if e.Compaction == nil || e.Compaction.Summary == "" || e.Compaction.FirstKeptID == "" {
			return errors.New("compaction entry without summary and first_kept_id")
		}
		return nil
	case TypeMove:
		if e.Move == nil || e.Move.From == "" {
			return errors.New("move entry without from (the leaf it left)")
		}
		if e.ParentID == "" {
			return errors.New("move entry without a target (its parent_id)")
		}
		return nil
	case TypeLabel:
		if e.Label == nil || e.Label.Target == "" {
			return errors.New("label entry without a target")
		}
		return nil
	case TypeBranchSummary:
		if e.BranchSummary == nil || e.BranchSummary.Summary == "" || e.BranchSummary.From == "" {
			return errors.New("branch_summary entry without summary and from")
		}
		return nil
	case TypeTools:
		if e.Tools == nil || e.Tools.Extension == "" {
			return errors.New("tools entry without an extension name")
		}
		for _, t := range e.Tools.Tools {
			if t.Name == "" {
				return fmt.Errorf("tools entry of %s: a tool without a name", e.Tools.Extension)
			}
			if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
				return fmt.Errorf("tools entry of %s: tool %s: parameters are not valid JSON", e.Tools.Extension, t.Name)
			}
		}
		return nil
	case TypePermissions:
		return checkPermissions(e.Permissions)
	case TypeSessionInfo:
		if e.SessionInfo == nil {
			return errors.New("session_info entry without its payload")
		}
		return nil
	case TypeRequestSettings:
		return checkRequestSettings(e.RequestSettings)
	case headerType:
		return errors.New(`entry type "session" is reserved for the header`)
	case "":
		return errors.New("entry without a type")
	}
	if len(e.Raw) == 0 {
		return fmt.Errorf("entry of unknown type %q without its raw line (only entries read from a log can have a type this panto does not know)", e.Type)
	}
	return nil
}
