package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/internal/linediff"
)

// How a tool call looks to an ACP client: a title, a kind (the client's
// icon), the files it touches, and for edit and write a diff. panto's
// own tools (the tools extension's) are known by name; any other tool is
// "other", titled by its name.

// toolInput is the part of a tool's input panto reads to describe it.
type toolInput struct {
	Path    string `json:"path"`
	Offset  int    `json:"offset"`
	Command string `json:"command"`
	Pattern string `json:"pattern"`
	URL     string `json:"url"`
}

// toolView is what the client is shown of a call.
type toolView struct {
	title     string
	kind      acpsdk.ToolKind
	locations []acpsdk.ToolCallLocation
	// file is the file an edit or write changes (absolute): its diff is
	// shown once the call has run.
	file string
	raw  any
}

// maxTitle bounds a title, in runes.
const maxTitle = 120

// describe says what a call of the tool name with input does, paths
// taken from cwd.
func describe(name string, input json.RawMessage, cwd string) toolView {
	var in toolInput
	_ = json.Unmarshal(input, &in) // a tool's input the model wrote: what does not parse is left out
	var raw any
	if json.Unmarshal(input, &raw) != nil {
		raw = string(input)
	}
	v := toolView{title: name, kind: acpsdk.ToolKindOther, raw: raw}
	abs := func(p string) string {
		if p == "" {
			p = "."
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		return filepath.Clean(p)
	}
	at := func(p string, line int) {
		loc := acpsdk.ToolCallLocation{Path: abs(p)}
		if line > 0 {
			loc.Line = acpsdk.Ptr(line)
		}
		v.locations = append(v.locations, loc)
	}
	switch name {
	case "read":
		v.kind, v.title = acpsdk.ToolKindRead, "Read "+in.Path
		at(in.Path, in.Offset)
	case "write":
		v.kind, v.title, v.file = acpsdk.ToolKindEdit, "Write "+in.Path, abs(in.Path)
		at(in.Path, 0)
	case "edit":
		v.kind, v.title, v.file = acpsdk.ToolKindEdit, "Edit "+in.Path, abs(in.Path)
		at(in.Path, 0)
	case "bash":
		v.kind, v.title = acpsdk.ToolKindExecute, firstLine(in.Command)
	case "grep":
		v.kind, v.title = acpsdk.ToolKindSearch, "grep "+in.Pattern
		at(in.Path, 0)
	case "find":
		v.kind, v.title = acpsdk.ToolKindSearch, "find "+in.Pattern
		at(in.Path, 0)
	case "ls":
		v.kind, v.title = acpsdk.ToolKindSearch, "ls "+orDot(in.Path)
		at(in.Path, 0)
	case "fetch", "web_fetch":
		v.kind, v.title = acpsdk.ToolKindFetch, "Fetch "+in.URL
	}
	v.title = cut(strings.TrimSpace(v.title), maxTitle)
	if v.title == "" {
		v.title = name
	}
	return v
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// firstLine is s's first line, with an ellipsis when more follows.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// cut cuts s to n runes, with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// maxDiffFile is the largest file an edit or write shows as a diff;
// past it the client gets the result text alone.
const maxDiffFile = 1 << 20

// snapshot reads path for a diff: its text, whether it exists, and
// whether it can be shown (a regular UTF-8 file of at most maxDiffFile
// bytes, or no file at all).
func snapshot(path string) (text string, exists, ok bool) {
	if path == "" {
		return "", false, false
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, true
	}
	if err != nil {
		return "", false, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxDiffFile {
		return "", true, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDiffFile+1))
	if err != nil || len(b) > maxDiffFile || !utf8.Valid(b) {
		return "", true, false
	}
	return string(b), true, true
}

// before is a file as it was when its edit or write started.
type before struct {
	path   string
	text   string
	exists bool
	ok     bool
}

// diff is the diff content of an edit or write that ran, given its
// result, nil when it cannot be shown.
//
// The snapshot is taken as the ToolStart event is handled, which under
// load can be after the call already wrote the file: then it reads as
// the file after, and the result says the file changed. The file before
// is then rebuilt from the diff the result carries (see linediff), and
// with no diff to rebuild it from the client gets none rather than a
// wrong one.
func (b before) diff(result string) []acpsdk.ToolCallContent {
	if !b.ok {
		return nil
	}
	after, exists, ok := snapshot(b.path)
	if !ok || !exists {
		return nil
	}
	if !b.exists {
		return []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(b.path, after)}
	}
	old := b.text
	if old == after {
		if _, hunks, _ := linediff.Parse(result); len(hunks) > 0 {
			rebuilt, ok := rebuild(after, result)
			if !ok {
				return nil
			}
			old = rebuilt
		}
	}
	return []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(b.path, after, old)}
}

// rebuild returns the text a file had before the change whose unified
// diff ends result (an edit's or a write's, see linediff), given the
// text it has after. It refuses — ok false — a diff cut short or with
// lines cut, and one that the text it rebuilt does not give back.
func rebuild(after, result string) (before string, ok bool) {
	_, hunks, cutShort := linediff.Parse(result)
	if cutShort || len(hunks) == 0 {
		return "", false
	}
	lines := strings.SplitAfter(after, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	eol := "\n"
	if len(lines) > 0 && strings.HasSuffix(lines[0], "\r\n") {
		eol = "\r\n"
	}
	var out []string
	next := 0 // the first line of after not yet copied
	for _, h := range hunks {
		_, nc := h.Counts()
		start := h.NewStart - 1 // 0-based first new line of the hunk
		if nc == 0 {
			start = h.NewStart
		}
		if start < next || start+nc > len(lines) {
			return "", false
		}
		out = append(out, lines[next:start]...)
		i := start
		for _, l := range h.Lines {
			switch l.Kind {
			case linediff.Delete:
				if len(l.Text) > linediff.MaxLineBytes {
					return "", false // cut: its end is not in the result
				}
				out = append(out, l.Text+eol)
			case linediff.Insert:
				i++
			default:
				out = append(out, lines[i])
				i++
			}
		}
		next = i
	}
	tail := next == len(lines) && len(out) > 0 && !strings.HasSuffix(after, "\n") && after != ""
	out = append(out, lines[next:]...)
	if tail && strings.HasSuffix(out[len(out)-1], eol) {
		// The diff does not say whether the file ended in a newline
		// before; as it does not now, it did not then.
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], eol)
	}
	before = strings.Join(out, "")
	at := strings.Index(result, "\n@@ -")
	if at < 0 {
		return "", false
	}
	want := result[at+1:]
	if strings.TrimSuffix(linediff.Format(linediff.Diff(before, after, 3)), "\n") != strings.TrimSuffix(want, "\n") {
		return "", false
	}
	return before, true
}

// resultContent is a result's text as tool call content.
func resultContent(text string) []acpsdk.ToolCallContent {
	if text == "" {
		return nil
	}
	return []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}
}

// questionCallID names the tool call of a question asked outside any
// call the client knows of.
func questionCallID(id int64) acpsdk.ToolCallId {
	return acpsdk.ToolCallId(fmt.Sprintf("question-%d", id))
}
