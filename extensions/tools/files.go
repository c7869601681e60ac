package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/imagefit"
	"github.com/panto-dev/panto/internal/linediff"
	"github.com/panto-dev/panto/sdk"
)

// read

var readParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to read: relative to the project directory, or absolute."},
    "offset": {"type": "integer", "minimum": 1, "description": "The first line to show, 1-based. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "How many lines to show at most. Default and maximum 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)

type readInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func readTool(dir string) sdk.Tool {
	return sdk.Tool{
		Name:        "read",
		Description: "Read a text file, with line numbers, or look at an image (PNG, JPEG, GIF, WebP). Shows at most 2000 lines or 50 KB per call; use offset and limit to page through longer files.",
		Parameters:  readParams,
		Guidance: "Use read to look at a file before you edit it, instead of cat, head or tail in bash. Each line is shown " +
			"as its number, a tab, then the text; the numbers are not part of the file, so leave them out of an edit's " +
			"old_text. A long file is cut at 2000 lines or 50 KB with a note giving the offset to continue from; for a " +
			"big file, find the place with grep first and read around it with offset and limit. An image file (PNG, JPEG, " +
			"GIF, WebP) is shown to you as the image, scaled down when it is large. Other binary files are refused.",
		Run: bind(readParams, func(ctx context.Context, in readInput) (sdk.ToolResult, error) { return readFileOrImage(ctx, dir, in) }),
	}
}

// maxImageFile is the largest image file read reads, to scale it down.
const maxImageFile = 64 << 20

// readFileOrImage is readFile, except that an image file (by its first
// bytes) is the image, fitted to the providers' limits (imagefit), and a
// line saying what it is.
func readFileOrImage(ctx context.Context, dir string, in readInput) (sdk.ToolResult, error) {
	if p, err := resolvePath(dir, in.Path); err == nil {
		if res, ok, err := readImage(p); ok {
			return res, err
		}
	}
	text, err := readFile(ctx, dir, in)
	return sdk.ToolResult{Content: text}, err
}

// readImage returns the image file p as an image; ok is false when p is
// not a regular file that starts as an image does.
func readImage(p string) (res sdk.ToolResult, ok bool, err error) {
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return res, false, nil // readFile says what it is
	}
	f, fi, err := openRegular("read", p, "read only reads regular files")
	if err != nil {
		return res, false, nil
	}
	defer f.Close()
	var head [12]byte
	n, _ := io.ReadFull(f, head[:])
	mt := imagefit.Detect(head[:n])
	if mt == "" {
		return res, false, nil
	}
	if fi.Size() > maxImageFile {
		return res, true, fmt.Errorf("read %s: %s image of %d bytes: too large to read (the limit is %d bytes)", p, mt, fi.Size(), maxImageFile)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return res, true, fmt.Errorf("read %s: %w", p, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxImageFile+1))
	if err != nil {
		return res, true, fmt.Errorf("read %s: %w", p, cause(err))
	}
	im, err := imagefit.Fit(data, imagefit.Default)
	if err != nil {
		return res, true, fmt.Errorf("read %s: %w", p, err)
	}
	return sdk.ToolResult{
		Content: im.Describe(filepath.Base(p)),
		Images:  []sdk.Image{{MediaType: im.MediaType, Data: im.Data}},
	}, true, nil
}

// readFile returns the lines of in.Path from in.Offset, numbered like
// cat -n, cut to in.Limit lines and maxBytes with a note on how to go on.
// It streams the file: a line is held only up to maxLineLen, however long
// it is.
func readFile(ctx context.Context, dir string, in readInput) (string, error) {
	offset := in.Offset
	switch {
	case offset == 0:
		offset = 1
	case offset < 0:
		return "", fmt.Errorf("invalid input: field \"offset\" must be 1 or more, not %d", offset)
	}
	limit, err := checkLimit("limit", in.Limit, maxLines, maxLines)
	if err != nil {
		return "", err
	}
	p, err := resolvePath(dir, in.Path)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return "", fmt.Errorf("read %s: is a directory; list it with ls", p)
	}
	if text, ok, err := readWorkspace(ctx, "read", p); ok {
		if err != nil {
			return "", err
		}
		if isBinary([]byte(text[:min(len(text), binarySniff)])) {
			return "", fmt.Errorf("read %s: binary file (%d bytes); read shows text files only", p, len(text))
		}
		return numberLines(ctx, p, bufio.NewReader(strings.NewReader(text)), offset, limit)
	}
	f, fi, err := openRegular("read", p, "read only reads regular files")
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64*1024)
	if head, _ := r.Peek(binarySniff); isBinary(head) {
		return "", fmt.Errorf("read %s: binary file (%d bytes); read shows text files only", p, fi.Size())
	}
	return numberLines(ctx, p, r, offset, limit)
}

// numberLines returns the lines of r (the file p) from offset, numbered
// like cat -n, cut to limit lines and maxBytes with a note on how to go
// on. A line is held only up to maxLineLen, however long it is.
func numberLines(ctx context.Context, p string, r *bufio.Reader, offset, limit int) (string, error) {

	var b strings.Builder
	// A line is kept up to maxLineLen, plus room to end on a whole
	// character and for the '\n'.
	buf := make([]byte, 0, maxLineLen+utf8.UTFMax+1)
	total, last, cutBytes := 0, 0, false
	for {
		line, n, err := readLine(ctx, r, buf, cap(buf))
		if n > 0 {
			total++
			if total >= offset && total < offset+limit && !cutBytes {
				if line[len(line)-1] == '\n' { // the whole line is held
					line, n = line[:len(line)-1], n-1
				} else if err == nil {
					n-- // the '\n' was read but not kept
				}
				entry := fmt.Sprintf("%6d\t%s\n", total, cutHead(string(line), n, maxLineLen))
				if b.Len()+len(entry) > maxBytes {
					cutBytes = true
				} else {
					b.WriteString(entry)
					last = total
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", p, err)
		}
		if total%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", fmt.Errorf("read %s: %w", p, err)
			}
		}
	}
	switch {
	case total == 0:
		return fmt.Sprintf("(%s is empty)", p), nil
	case offset > total:
		return "", fmt.Errorf("read %s: offset %d is past the end of the file (%s)", p, offset, plural(total, "line"))
	}
	if last < total {
		reason := ""
		if cutBytes {
			reason = "Output cut at 50 KB. "
		}
		fmt.Fprintf(&b, "\n[%sShowing lines %d-%d of %d. Use offset=%d to read on.]\n", reason, offset, last, total, last+1)
	}
	return b.String(), nil
}

// write

var writeParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to write: relative to the project directory, or absolute. Missing parent directories are created."},
    "content": {"type": "string", "description": "The whole new content of the file. It replaces what the file held."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)

type writeInput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func writeTool(dir string, own ownDirs) sdk.Tool {
	return sdk.Tool{
		Name:        "write",
		Description: "Create a file or replace its whole content. Creates missing parent directories.",
		Parameters:  writeParams,
		Guidance: "Use write to create a new file or to rewrite one completely; to change part of an existing file use " +
			"edit, which is cheaper and cannot lose the rest of the file by mistake. Read a file before overwriting it. " +
			"The content is written as given: no line numbers, and end it with a newline as text files should.",
		Run: bindText(writeParams, func(ctx context.Context, in writeInput) (string, error) {
			if err := own.check("write", dir, in.Path); err != nil {
				return "", err
			}
			if err := checkSandboxWrite(callSandbox(ctx), "write", dir, in.Path); err != nil {
				return "", err
			}
			return writeFile(ctx, dir, in)
		}),
	}
}

// fileLocks serialises write and edit calls on one file: the model may
// send several in one reply, and panto runs a reply's calls in parallel.
var fileLocks sync.Map // absolute path -> *sync.Mutex

func lockFile(p string) func() {
	m, _ := fileLocks.LoadOrStore(p, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

func writeFile(ctx context.Context, dir string, in writeInput) (string, error) {
	p, err := resolvePath(dir, in.Path)
	if err != nil {
		return "", err
	}
	target, err := linkTarget(p)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", p, cause(err))
	}
	defer lockFile(target)()
	verb := "Created"
	old, err := os.Stat(target)
	switch {
	case err == nil && old.IsDir():
		return "", fmt.Errorf("write %s: is a directory", p)
	case err == nil && !old.Mode().IsRegular():
		return "", fmt.Errorf("write %s: is %s; write only writes regular files", p, kind(old.Mode()))
	case err == nil:
		verb = "Overwrote"
	case errors.Is(err, fs.ErrNotExist):
		old = nil
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return "", fmt.Errorf("write %s: %w", p, err)
		}
	default:
		return "", fmt.Errorf("write %s: %w", p, cause(err))
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("write %s: %w", p, errInterrupted)
	}
	if ok, err := writeWorkspace(ctx, "write", target, in.Content); ok {
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s%s: wrote %s (through the editor).", verb, p, through(p, target), plural(len(in.Content), "byte")), nil
	}
	before, diffable := oldText(target, old)
	if err := writeAtomic(ctx, target, old, in.Content); err != nil {
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	res := fmt.Sprintf("%s %s%s: wrote %s.%s%s", verb, p, through(p, target), plural(len(in.Content), "byte"), linksNote(old),
		lateCancel(ctx, target))
	if diffable {
		res += diffNote(before, in.Content)
	}
	return res, nil
}

// maxDiffSize is the largest old file write shows a diff of.
const maxDiffSize = 4 << 20

// oldText is the content of the file that a write replaces, when it is
// a text file small enough to diff; old is its FileInfo, nil for a new
// file (which has no diff: its content is the call's input).
func oldText(target string, old fs.FileInfo) (string, bool) {
	if old == nil || old.Size() > maxDiffSize {
		return "", false
	}
	data, err := os.ReadFile(target)
	if err != nil || len(data) > maxDiffSize || isBinary(data) {
		return "", false
	}
	return string(data), true
}

// diffNote is the change from before to after as a unified diff with
// three lines of context (see linediff), to follow a write's or an
// edit's result: the model reads the lines as they now are, with their
// numbers, and the UI draws it.
func diffNote(before, after string) string {
	d := linediff.Format(linediff.Diff(before, after, 3))
	switch {
	case d == "" && before == after:
		return "\n\n(The content is unchanged.)"
	case d == "":
		return "\n\n(Only the newline at the end of the file changed.)"
	}
	return "\n\n" + strings.TrimSuffix(d, "\n")
}

// lateCancel is the note of a write or edit whose call was cancelled
// after its commit: the change was made, and the result says so.
func lateCancel(ctx context.Context, target string) string {
	if ctx.Err() == nil {
		return ""
	}
	return " (Interrupted after the change was made: " + target + " was written.)"
}

// through says which file a write through symlink p replaced.
func through(p, target string) string {
	if p == target {
		return ""
	}
	return " (a symlink to " + target + ")"
}

// linksNote warns that a file with other hard links was replaced by a
// new one: those names keep the old content.
func linksNote(old fs.FileInfo) string {
	if old == nil {
		return ""
	}
	switch n := linkCount(old); {
	case n <= 1:
		return ""
	case n == 2:
		return " The file had 1 other hard link; that name keeps the old content."
	default:
		return fmt.Sprintf(" The file had %d other hard links; those names keep the old content.", n-1)
	}
}

// edit

var editParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to edit: relative to the project directory, or absolute."},
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "Replacements applied in order, each to the result of the one before. All apply or none does.",
      "items": {
        "type": "object",
        "properties": {
          "old_text": {"type": "string", "description": "Text to replace, copied exactly from the file (whitespace included, line numbers left out). It must occur exactly once."},
          "new_text": {"type": "string", "description": "The text to put in its place; empty deletes it."}
        },
        "required": ["old_text", "new_text"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`)

type editInput struct {
	Path  string     `json:"path"`
	Edits []editSpec `json:"edits"`
}

// editSpec is one replacement as the model sends it; nil means missing.
type editSpec struct {
	OldText *string `json:"old_text"`
	NewText *string `json:"new_text"`
}

// Edit is one exact replacement.
type Edit struct {
	Old, New string
}

func editTool(dir string, own ownDirs) sdk.Tool {
	return sdk.Tool{
		Name:        "edit",
		Description: "Change a file by exact text replacement: each edit's old_text must occur exactly once in the file. Several edits in one call apply in order, all or none.",
		Parameters:  editParams,
		Guidance: "Use edit for changes to an existing file; read it first. Copy old_text exactly from the file, " +
			"indentation and blank lines included, without the line-number prefix that read shows, and include " +
			"enough surrounding lines that it occurs only once. Put several changes to one file in one call, in " +
			"order; if any edit's old_text is missing or occurs more than once, the error names that edit and " +
			"nothing is written, so fix it and send the whole call again. The result shows the change as a unified " +
			"diff of the lines as they now are, with 3 lines of context: there is no need to read the file again to check it.",
		Run: bindText(editParams, func(ctx context.Context, in editInput) (string, error) {
			if err := own.check("edit", dir, in.Path); err != nil {
				return "", err
			}
			if err := checkSandboxWrite(callSandbox(ctx), "edit", dir, in.Path); err != nil {
				return "", err
			}
			return editFile(ctx, dir, in)
		}),
	}
}

func editFile(ctx context.Context, dir string, in editInput) (string, error) {
	if len(in.Edits) == 0 {
		return "", errors.New("invalid input: field \"edits\" must hold at least one edit")
	}
	edits := make([]Edit, len(in.Edits))
	for i, e := range in.Edits {
		switch {
		case e.OldText == nil:
			return "", fmt.Errorf("invalid input: edits[%d]: missing required field \"old_text\"", i)
		case e.NewText == nil:
			return "", fmt.Errorf("invalid input: edits[%d]: missing required field \"new_text\"", i)
		}
		edits[i] = Edit{Old: *e.OldText, New: *e.NewText}
	}
	p, err := resolvePath(dir, in.Path)
	if err != nil {
		return "", err
	}
	target, err := linkTarget(p)
	if err != nil {
		return "", fmt.Errorf("edit %s: %w", p, cause(err))
	}
	defer lockFile(target)()
	data, viaEditor, err := readWorkspace(ctx, "edit", target)
	var fi fs.FileInfo
	switch {
	case viaEditor && err != nil:
		return "", err
	case viaEditor && len(data) > maxEditSize:
		return "", fmt.Errorf("edit %s: the file is %s; edit changes files up to 64 MiB; use bash (sed) for larger ones", p, plural(len(data), "byte"))
	case !viaEditor:
		data, fi, err = readForEdit(p, target)
		if err != nil {
			return "", err
		}
	}
	if isBinary(data) {
		return "", fmt.Errorf("edit %s: binary file; edit changes text files only", p)
	}
	out, lines, err := applyEdits(data, edits)
	if err != nil {
		return "", fmt.Errorf("edit %s: %w; nothing was written", p, err)
	}
	if out == data {
		return "", fmt.Errorf("edit %s: the edits leave the file unchanged; nothing was written", p)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("edit %s: %w", p, errInterrupted)
	}
	at := make([]string, len(lines))
	for i, l := range lines {
		at[i] = fmt.Sprint(l)
	}
	if viaEditor {
		if _, err := writeWorkspace(ctx, "edit", target, out); err != nil {
			return "", err
		}
		return fmt.Sprintf("Edited %s%s: applied %s (at line %s), through the editor.", p, through(p, target), plural(len(edits), "edit"),
			strings.Join(at, ", ")) + diffNote(data, out), nil
	}
	if err := writeAtomic(ctx, target, fi, out); err != nil {
		return "", fmt.Errorf("edit %s: %w", target, err)
	}
	return fmt.Sprintf("Edited %s%s: applied %s (at line %s).%s%s", p, through(p, target), plural(len(edits), "edit"),
		strings.Join(at, ", "), linksNote(fi), lateCancel(ctx, target)) + diffNote(data, out), nil
}

// maxEditSize is the largest file edit changes: it holds the file and
// its new content in memory.
const maxEditSize = 64 << 20

// readForEdit reads target, the file that the edit of p changes, if it is
// a regular file of at most maxEditSize bytes (checked before reading).
func readForEdit(p, target string) (string, fs.FileInfo, error) {
	f, fi, err := openRegular("edit", target, "edit only changes regular files")
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	tooBig := func(size int64) error {
		return fmt.Errorf("edit %s: the file is %s; edit changes files up to 64 MiB; use bash (sed) for larger ones", p, plural(int(size), "byte"))
	}
	if fi.Size() > maxEditSize {
		return "", nil, tooBig(fi.Size())
	}
	// Read into a Builder sized to the file: its String is the one copy.
	var b strings.Builder
	b.Grow(int(fi.Size()) + 1)
	n, err := io.Copy(&b, io.LimitReader(f, maxEditSize+1))
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("edit %s: %w", p, cause(err))
	case n > maxEditSize: // it grew since
		return "", nil, tooBig(n)
	}
	return b.String(), fi, nil
}

// applyEdits applies edits to content in order, each to the result of the
// one before. Each Old must occur exactly once (overlapping occurrences
// count) at the time it is applied; otherwise it returns an error naming
// the edit, and no result. lines holds the 1-based line each edit starts
// at.
func applyEdits(content string, edits []Edit) (out string, lines []int, err error) {
	for i, e := range edits {
		name := fmt.Sprintf("edit %d of %d", i+1, len(edits))
		if e.Old == "" {
			return "", nil, fmt.Errorf("%s: old_text is empty", name)
		}
		switch n := countOverlapping(content, e.Old, 2); n {
		case 0:
			hint := ""
			if strings.Contains(content, "\r\n") && !strings.Contains(e.Old, "\r\n") && strings.Contains(e.Old, "\n") {
				hint = " (the file has CRLF line endings: use \\r\\n in old_text)"
			}
			if strings.ContainsRune(e.Old, utf8.RuneError) && !utf8.ValidString(content) {
				hint = " (the file is not valid UTF-8: read shows the bytes that are not as U+FFFD, which old_text cannot match; " +
					"choose old_text around them, or change them with bash)"
			}
			return "", nil, fmt.Errorf("%s: old_text not found%s: %q", name, hint, firstLine(e.Old))
		case 1:
		default:
			return "", nil, fmt.Errorf("%s: old_text occurs %d times; include more surrounding text so it occurs exactly once",
				name, countOverlapping(content, e.Old, -1))
		}
		idx := strings.Index(content, e.Old)
		lines = append(lines, 1+strings.Count(content[:idx], "\n"))
		content = content[:idx] + e.New + content[idx+len(e.Old):]
	}
	return content, lines, nil
}

// countOverlapping counts the occurrences of sub in s, overlapping ones
// included, stopping at stop (stop < 0: no limit). sub is not empty.
func countOverlapping(s, sub string, stop int) int {
	n := 0
	for stop < 0 || n < stop {
		i := strings.Index(s, sub)
		if i < 0 {
			break
		}
		n++
		s = s[i+1:]
	}
	return n
}

func firstLine(s string) string {
	l, _, more := strings.Cut(s, "\n")
	l = cutLine(l, 80)
	if more {
		l += "…"
	}
	return l
}
