package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/internal/linediff"
)

// Tool is one tool call: a header with the tool and its main argument,
// a spinner and the elapsed time while it runs (and the last lines of
// its output, when its tool streams them), then how it ended (exit
// code, error) and an excerpt of its output that Ctrl-O expands. An edit
// or a write shows as a diff.
type Tool struct {
	ID, Name string
	Input    json.RawMessage
	Start    time.Time

	done     bool
	result   string
	isError  bool
	duration time.Duration
	// note says why it ended without a result shown ("interrupted").
	note     string
	expanded bool
	// folds is set when the last render hid lines.
	folds bool
	// live is the end of a running call's output, as its tool streams
	// it: at most liveLines lines, made safe for the terminal.
	live    []string
	version int
	c       cache
}

// liveLines is how many of its last lines a running call shows.
const liveLines = 5

// Progress shows the end of a running call's output (tail, its last
// lines as the tool streamed them) under its header, the last liveLines
// of it, until the call ends and its result replaces them.
func (t *Tool) Progress(tail string) {
	if t.done {
		return
	}
	lines := strings.Split(strings.TrimRight(termtext.Sanitize(tail), "\n"), "\n")
	if len(lines) > liveLines {
		lines = lines[len(lines)-liveLines:]
	}
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	t.live = lines
	t.version++
}

// NewTool returns a running call. Its name and input come from the
// model: they are kept made safe for the terminal (termtext), the input
// as JSON whose every string is.
func NewTool(id, name string, input json.RawMessage, start time.Time) *Tool {
	return &Tool{ID: id, Name: termtext.Line(name), Input: safeJSON(input), Start: start}
}

// End records how the call ended; the result is kept made safe for the
// terminal.
func (t *Tool) End(result string, isError bool, d time.Duration) {
	t.done, t.result, t.isError, t.duration = true, termtext.Sanitize(result), isError, d
	t.version++
}

// safeJSON returns input with every string in it (keys too) made safe
// for the terminal; input that is not JSON is kept as sanitized text.
func safeJSON(input json.RawMessage) json.RawMessage {
	if termtext.Safe(string(input)) && !bytes.ContainsRune(input, '\\') {
		return input // nothing a terminal obeys, and no escape to decode into one
	}
	var v any
	if json.Unmarshal(input, &v) != nil {
		return json.RawMessage(termtext.Sanitize(string(input)))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "a < b" stays as the model wrote it
	if enc.Encode(safeValue(v)) != nil {
		return json.RawMessage(termtext.Sanitize(string(input)))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func safeValue(v any) any {
	switch v := v.(type) {
	case string:
		return termtext.Sanitize(v)
	case []any:
		for i := range v {
			v[i] = safeValue(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[termtext.Sanitize(k)] = safeValue(x)
		}
		return out
	}
	return v
}

// Abandon ends a call whose end never came (the turn ended first).
func (t *Tool) Abandon(note string) {
	if t.done {
		return
	}
	t.done, t.note = true, note
	t.duration = 0
	t.version++
}

// Done reports whether the call ended.
func (t *Tool) Done() bool { return t.done }

// Live implements Live: a running call shows its elapsed time.
func (t *Tool) Live() bool { return !t.done }

// Toggle shows the whole output, or the excerpt again.
func (t *Tool) Toggle() { t.expanded = !t.expanded; t.version++ }

// Expanded reports whether the whole output shows.
func (t *Tool) Expanded() bool { return t.expanded }

// Foldable implements Collapsible.
func (t *Tool) Foldable() bool { return t.expanded || t.folds }

// How many lines of output a folded call shows.
const (
	foldLines = 8
	foldDiff  = 14
)

// spinner is the running call's glyph, one per frame.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Spinner returns the spinner glyph of frame.
func Spinner(frame int) string { return spinner[frame%len(spinner)] }

// Render implements Item.
func (t *Tool) Render(c Ctx) Lines {
	if t.done {
		if l, ok := t.c.get(c, t.version); ok {
			return l
		}
	}
	out := []string{t.header(c)}
	if !t.done {
		// The output so far, each line cut to the width: the view of a
		// running call does not grow or wrap as its lines come.
		gutter := c.Theme.Border.Render("  │ ")
		for _, l := range t.live {
			out = append(out, gutter+c.Theme.Dim.Render(cut(expandTabs(l), max(c.Width-4, 1))))
		}
		return Strings(out) // changes every frame: not worth caching
	}
	t.folds = false
	out = append(out, t.body(c)...)
	return t.c.put(c, t.version, Strings(out))
}

// header is the first line: state, name, main argument, how it ended.
func (t *Tool) header(c Ctx) string {
	th := c.Theme
	var glyph string
	var tail []string
	switch {
	case !t.done:
		glyph = th.Accent.Render(Spinner(c.Frame))
		tail = append(tail, elapsed(c.Now.Sub(t.Start)))
	case t.note != "":
		glyph = th.Warn.Render("◌")
		tail = append(tail, t.note)
	case t.isError:
		glyph = th.ErrorBold.Render("✗")
		if code, ok := exitCode(t.result); ok && t.Name == "bash" {
			tail = append(tail, th.Error.Render("exit "+strconv.Itoa(code)))
		} else {
			tail = append(tail, th.Error.Render("error"))
		}
		tail = append(tail, t.took()...)
	default:
		glyph = th.OK.Render("✓")
		if code, ok := exitCode(t.result); ok && t.Name == "bash" {
			tail = append(tail, "exit "+strconv.Itoa(code))
		}
		if s := t.summary(); s != "" {
			tail = append(tail, s)
		}
		tail = append(tail, t.took()...)
	}
	right := th.Dim.Render(" · " + strings.Join(tail, th.Dim.Render(" · ")))
	shown := describe.ToolName(t.Name) // an MCP server's tool: SERVER › TOOL
	name := th.ToolName.Render(shown)
	arg := t.mainArg()
	room := c.Width - 2 - len([]rune(shown)) - 1 - visibleWidth(right)
	if room < 8 {
		// Narrow: the state first; the argument on what is left.
		room = c.Width - 2 - len([]rune(shown)) - 1
		right = ""
	}
	return glyph + " " + name + " " + th.ToolArgs.Render(cut(arg, max(room, 1))) + right
}

// took is how long the call took, when known (not for a recorded one).
func (t *Tool) took() []string {
	if t.Start.IsZero() && t.duration == 0 {
		return nil
	}
	return []string{elapsed(t.duration)}
}

// summary says what a call did, on the header (a line count, edits).
func (t *Tool) summary() string {
	switch t.Name {
	case "read", "ls", "find", "grep":
		n := lineCount(t.result)
		if n == 1 {
			return "1 line"
		}
		return fmt.Sprintf("%d lines", n)
	case "edit", "write":
		return diffStat(t.result)
	}
	return ""
}

// mainArg is the argument that says what a call does: bash's command, a
// file tool's path, a search's pattern; otherwise its input, compacted.
func (t *Tool) mainArg() string {
	var in map[string]any
	if json.Unmarshal(t.Input, &in) != nil {
		return oneLine(string(t.Input))
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch t.Name {
	case "bash":
		return oneLine(str("command")) // a CR in it shows: the input is safe
	case "read", "write", "ls":
		s := str("path")
		if t.Name == "write" {
			if c := str("content"); c != "" {
				s += fmt.Sprintf(" (%d lines)", lineCount(c))
			}
		}
		if t.Name == "ls" && s == "" {
			s = "."
		}
		return s
	case "edit":
		s := str("path")
		if e, ok := in["edits"].([]any); ok && len(e) != 1 {
			s += fmt.Sprintf(" (%d edits)", len(e))
		}
		return s
	case "find", "grep":
		s := str("pattern")
		if p := str("path"); p != "" {
			s += " in " + p
		}
		return s
	case "fetch":
		if u := str("url"); u != "" {
			return oneLine(u)
		}
	case "search":
		if q := str("query"); q != "" {
			return oneLine(q)
		}
	}
	b, _ := json.Marshal(in)
	return oneLine(string(b))
}

// body is the output excerpt, the diff, or the error.
func (t *Tool) body(c Ctx) []string {
	th := c.Theme
	gutter := th.Border.Render("  │ ")
	width := c.Width - 4
	var lines []string
	fold := foldLines
	switch {
	case t.note != "":
		return nil
	case !t.isError && t.Name == "edit":
		lines = t.editDiff(th, width)
		fold = foldDiff
	case !t.isError && t.Name == "write":
		lines = t.writeDiff(th, width)
		fold = foldDiff
	case t.Name == "bash":
		out, _ := stripExit(t.result)
		lines = wrapText(out, width)
		if len(lines) == 1 && lines[0] == "" {
			lines = nil
		}
		// A command's end says the most: fold keeping the tail.
		if len(lines) > fold {
			t.folds = true
		}
		if !t.expanded && len(lines) > fold {
			hidden := len(lines) - fold
			lines = append([]string{th.Dim.Render(fmt.Sprintf("… %d earlier lines · ctrl+o shows them", hidden))}, lines[hidden:]...)
		}
		return gutterAll(gutter, lines)
	case t.isError:
		lines = styleAll(wrapText(strings.TrimRight(t.result, "\n"), width), th.Error)
	case t.Name == "read":
		fold = 3
		lines = styleAll(wrapText(strings.TrimRight(t.result, "\n"), width), th.Dim)
	default:
		lines = styleAll(wrapText(strings.TrimRight(t.result, "\n"), width), th.Dim)
	}
	if len(lines) == 1 && ansiEmpty(lines[0]) {
		lines = nil
	}
	if len(lines) > fold+1 {
		t.folds = true
	}
	if !t.expanded && len(lines) > fold+1 {
		hidden := len(lines) - fold
		lines = append(lines[:fold:fold], th.Dim.Render(fmt.Sprintf("… %d more lines · ctrl+o shows them", hidden)))
	}
	return gutterAll(gutter, lines)
}

// editDiff is an edit call's change: the diff its result carries (the
// file's lines, numbered, with context); for a result without one (a log
// written before), one hunk per edit of the input's old and new text, at
// the lines the result says the edits landed on.
func (t *Tool) editDiff(th *theme.Theme, width int) []string {
	if _, hunks, cutShort := linediff.Parse(t.result); len(hunks) > 0 {
		return drawHunks(th, hunks, cutShort, width)
	}
	var in struct {
		Path  string `json:"path"`
		Edits []struct {
			Old string `json:"old_text"`
			New string `json:"new_text"`
		} `json:"edits"`
	}
	if json.Unmarshal(t.Input, &in) != nil || len(in.Edits) == 0 {
		return styleAll(wrapText(t.result, width), th.Dim)
	}
	at := landedAt(t.result)
	var out []string
	for i, e := range in.Edits {
		line := 1
		if i < len(at) {
			line = at[i]
		}
		out = append(out, Diff(th, e.Old, e.New, line, width)...)
	}
	return out
}

// writeDiff is a write call's change: over an existing file, the diff
// its result carries; a new file's content as added lines, numbered; an
// overwrite whose result has no diff (a log written before) its content
// as added lines, as it always showed.
func (t *Tool) writeDiff(th *theme.Theme, width int) []string {
	var in struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(t.Input, &in)
	head, hunks, cutShort := linediff.Parse(t.result)
	out := []string{th.Dim.Render(cut(firstLine(head), width))}
	switch {
	case len(hunks) > 0:
		return append(out, drawHunks(th, hunks, cutShort, width)...)
	case strings.HasPrefix(head, "Created "):
		return append(out, drawNewFile(th, in.Content, width)...)
	}
	for _, l := range strings.Split(strings.TrimSuffix(in.Content, "\n"), "\n") {
		out = append(out, th.DiffAdd.Render(cut("+ "+expandTabs(l), width)))
	}
	return out
}

// Diff renders the change from before to after as unified diff lines,
// numbered from line (the first line of before in its file).
func Diff(th *theme.Theme, before, after string, line, width int) []string {
	if !strings.HasSuffix(before, "\n") && before != "" {
		before += "\n"
	}
	if !strings.HasSuffix(after, "\n") && after != "" {
		after += "\n"
	}
	edits := udiff.Lines(before, after)
	u, err := udiff.ToUnifiedDiff("a", "b", before, edits, 2)
	if err != nil {
		return nil
	}
	var out []string
	for _, h := range u.Hunks {
		del, add := 0, 0
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				del++
			case udiff.Insert:
				add++
			}
		}
		from, to := h.FromLine+line-1, h.ToLine+line-1
		out = append(out, th.DiffHunk.Render(cut(fmt.Sprintf("@@ -%d +%d @@ (-%d +%d)", from, to, del, add), width)))
		for _, l := range h.Lines {
			text := strings.TrimRight(expandTabs(l.Content), "\n")
			switch l.Kind {
			case udiff.Insert:
				out = append(out, th.DiffAdd.Render(cut("+ "+text, width)))
			case udiff.Delete:
				out = append(out, th.DiffDel.Render(cut("- "+text, width)))
			default:
				out = append(out, th.Dim.Render(cut("  "+text, width)))
			}
		}
	}
	return out
}

var landed = regexp.MustCompile(`\(at lines? ([0-9, ]+)\)`)

// landedAt reads the lines an edit result says its edits landed on:
// "applied 2 edits (at line 3, 10)".
func landedAt(result string) []int {
	m := landed.FindStringSubmatch(result)
	if m == nil {
		return nil
	}
	var out []int
	for _, f := range strings.Split(m[1], ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

var exitRe = regexp.MustCompile(`(?m)^\[exit code (-?[0-9]+)\]\s*$`)

// exitCode reads bash's "[exit code N]" trailer.
func exitCode(result string) (int, bool) {
	m := exitRe.FindAllStringSubmatch(result, -1)
	if len(m) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(m[len(m)-1][1])
	return n, err == nil
}

// stripExit removes bash's "[exit code N]" trailer.
func stripExit(result string) (string, bool) {
	r := strings.TrimRight(result, "\n")
	i := strings.LastIndexByte(r, '\n')
	last := r[i+1:]
	if exitRe.MatchString(last) {
		return strings.TrimRight(r[:max(i, 0)], "\n"), true
	}
	return r, false
}

func elapsed(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func lineCount(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func styleAll(lines []string, st theme.Style) []string {
	for i, l := range lines {
		lines[i] = st.Render(l)
	}
	return lines
}

func gutterAll(g string, lines []string) []string {
	for i, l := range lines {
		lines[i] = g + l
	}
	return lines
}

func ansiEmpty(s string) bool { return strings.TrimSpace(stripANSI(s)) == "" }
