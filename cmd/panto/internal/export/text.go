package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/panto-dev/panto/sessionlog"
)

// This file holds the words both formats share: titles, times, counts
// and the one-line texts of events.

// title is the document's title.
func (p *plan) title() string {
	if p.opt.Title != "" {
		return p.opt.Title
	}
	return "panto session " + p.log.Header.ID
}

// scope says what the export holds, for its header.
func (p *plan) scope() string {
	n := 0
	for _, b := range p.branches {
		n += len(b.entries)
	}
	switch {
	case len(p.log.Entries) == 0:
		return "an empty session: no entries"
	case p.opt.All && len(p.branches) == 1:
		return fmt.Sprintf("the whole tree: one branch, %s", plural(n, "entry", "entries"))
	case p.opt.All:
		return fmt.Sprintf("the whole tree: %d branches, %s", len(p.branches), plural(n, "entry", "entries"))
	case p.leaves > 1:
		return fmt.Sprintf("the active branch: %d of %d entries (%s not shown)", n, len(p.log.Entries), plural(p.leaves-1, "other branch", "other branches"))
	}
	return "the active branch: " + plural(n, "entry", "entries")
}

// clock formats entry times, with the date only when it differs from the
// last one shown.
type clock struct {
	day    string
	layout string // of the time of day
}

func newClock(created time.Time, layout string) *clock {
	return &clock{day: created.UTC().Format(time.DateOnly), layout: layout}
}

// format returns t as the time of day, with the date before it when the
// day changed; "" for a zero time.
func (c *clock) format(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	day := t.Format(time.DateOnly)
	if day != c.day {
		c.day = day
		return day + " " + t.Format(c.layout)
	}
	return t.Format(c.layout)
}

// excerpt returns s on one line, cut to about n characters.
func excerpt(s string, n int) string {
	if len(s) > 8*n { // enough for n characters and the spaces between them, mostly
		s = strings.ToValidUTF8(s[:8*n], "")
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// orUnrecorded returns s, or "(not recorded)" when it is empty.
func orUnrecorded(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

// plural returns "1 entry" or "3 entries".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// lifecycleText is a lifecycle entry as an event line.
func lifecycleText(l *sessionlog.Lifecycle) string {
	var s string
	switch l.Event {
	case sessionlog.LifecycleStarted:
		s = "session started"
	case sessionlog.LifecycleResumed:
		s = "session resumed"
		if l.Reseeded {
			s += ", system prompt re-seeded"
		}
	default:
		s = "lifecycle " + string(l.Event)
	}
	if len(l.Extensions) == 0 {
		return s + " · no extensions"
	}
	return s + " · extensions: " + strings.Join(l.Extensions, ", ")
}

// modelText is a model_change entry as an event line.
func modelText(m *sessionlog.ModelChange) string {
	return "model: " + m.Provider + " " + m.Model
}

// requestText says what a request_settings entry records: what every
// request from here on is sent with (panto request --at rebuilds one).
func requestText(r *sessionlog.RequestSettings) string {
	parts := []string{r.Model + " (" + r.Wire + ")"}
	if r.MaxTokens > 0 {
		parts = append(parts, "max_tokens "+strconv.Itoa(r.MaxTokens))
	}
	if r.ThinkingBudget > 0 {
		parts = append(parts, "thinking "+strconv.Itoa(r.ThinkingBudget))
	}
	if r.Temperature != nil {
		parts = append(parts, "temperature "+strconv.FormatFloat(*r.Temperature, 'g', -1, 64))
	}
	if r.Stream {
		parts = append(parts, "streamed")
	}
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	tools := "no tools"
	switch len(names) {
	case 0:
	case 1:
		tools = "1 tool: " + names[0]
	default:
		tools = strconv.Itoa(len(names)) + " tools: " + strings.Join(names, ", ")
	}
	return "requests from here: " + strings.Join(append(parts, tools), ", ")
}

// permissionsText says what a permissions entry records.
func permissionsText(p *sessionlog.Permissions) string {
	s := "permissions: mode " + p.Mode + ", " + strconv.Itoa(len(p.Rules)) + " rules, " + strconv.Itoa(len(p.Grants)) + " grants"
	if p.Sandbox != nil {
		s += ", sandbox " + p.Sandbox.Mode
	}
	if p.Reason != "" {
		s += " (" + p.Reason + ")"
	}
	return s
}

// toolsText says what a tools entry records: the tools an extension
// offers the model from here on, and what changed.
func toolsText(t *sessionlog.Tools) string {
	names := make([]string, len(t.Tools))
	for i, d := range t.Tools {
		names[i] = d.Name
	}
	s := "tools of extension " + t.Extension + ": "
	switch len(names) {
	case 0:
		s += "none"
	default:
		s += strings.Join(names, ", ")
	}
	var changes []string
	for _, c := range []struct {
		what  string
		names []string
	}{{"added", t.Added}, {"removed", t.Removed}, {"changed", t.Changed}} {
		if len(c.names) > 0 {
			changes = append(changes, c.what+" "+strings.Join(c.names, ", "))
		}
	}
	if len(changes) > 0 {
		s += " (" + strings.Join(changes, "; ") + ")"
	}
	if t.Reason != "" {
		s += " · " + t.Reason
	}
	return s
}

// sessionInfoText says what a session_info entry records: the session's
// name (/name).
func sessionInfoText(i *sessionlog.SessionInfo) string {
	if i.Name == "" {
		return "removed the session's name"
	}
	return "named the session “" + i.Name + "”"
}

// sizeText is a byte count for people: "812 B", "12 KB", "3.4 MB".
func sizeText(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 1000*1000:
		return strconv.Itoa((n+500)/1000) + " KB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}

// imageBytes is the size of an image's base64 data once decoded, roughly.
func imageBytes(data string) int { return len(data) * 3 / 4 }

// indentJSON returns raw indented for reading, or as it is when it is not
// valid JSON.
func indentJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// groupDigits writes n with thousands separators: 161,234.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
