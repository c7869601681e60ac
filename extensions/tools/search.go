package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/gitignore"
	"github.com/panto-dev/panto/sdk"
)

// The default and maximum numbers of results of ls, find and grep.
const (
	lsDefaultLimit   = 500
	findDefaultLimit = 1000
	grepDefaultLimit = 100
	maxResults       = 5000
)

// skipDir reports whether find and grep leave a directory out.
func skipDir(name string) bool { return name == ".git" || name == "node_modules" }

// ignoreFor is the .gitignore matcher a search under root honours: none
// when the call asks for ignored paths too, or when root is itself
// ignored or in an ignored directory (a path the model names there is
// searched whole), or outside a git work tree.
func ignoreFor(root string, includeIgnored bool) *gitignore.Matcher {
	if includeIgnored {
		return nil
	}
	m := gitignore.New(root)
	if m.Excluded(root, true) {
		return nil
	}
	return m
}

// ignoredNote is what a search that found nothing adds when it skipped
// ignored paths.
func ignoredNote(skipped int) string {
	if skipped == 0 {
		return ""
	}
	return " (paths that .gitignore ignores were skipped; include_ignored: true searches them too)"
}

// shown is how a found path is shown: under the path argument as the
// model gave it, so it can be passed back to read or edit as it is.
func shown(arg, rel string) string {
	if arg == "" || arg == "." {
		return rel
	}
	return filepath.ToSlash(filepath.Join(arg, rel))
}

// results collects lines of output up to a count and a byte limit.
type results struct {
	b     strings.Builder
	limit int
	n     int  // lines kept
	more  bool // a line was left out
}

// add keeps line unless a limit is reached; it returns false once full.
func (r *results) add(line string) bool {
	line = validText(line) // measured as shown
	if r.n >= r.limit || r.b.Len()+len(line)+1 > maxBytes {
		r.more = true
		return false
	}
	r.b.WriteString(line)
	r.b.WriteByte('\n')
	r.n++
	return true
}

// note returns the output with a note when something was left out.
func (r *results) note(what, how string) string {
	if !r.more {
		return r.b.String()
	}
	why := fmt.Sprintf("limit of %d", r.limit)
	if r.n < r.limit {
		why = "50 KB"
	}
	return r.b.String() + fmt.Sprintf("\n[%s: output cut at %s (%d shown); %s]\n", what, why, r.n, how)
}

// ls

var lsParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The directory to list: relative to the project directory, or absolute. Default \".\"."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "How many entries to show at most. Default 500."}
  },
  "additionalProperties": false
}`)

type lsInput struct {
	Path  string `json:"path"`
	Limit int    `json:"limit"`
}

func lsTool(dir string) sdk.Tool {
	return sdk.Tool{
		Name:        "ls",
		Description: "List a directory: one entry per line, sorted by name, directories with a trailing /, hidden entries included.",
		Parameters:  lsParams,
		Guidance: "Use ls to see what a directory holds, instead of ls in bash. It lists one level; to find files by " +
			"name across a tree use find, and to find text in files use grep.",
		Run: bindText(lsParams, func(_ context.Context, in lsInput) (string, error) { return listDir(dir, in) }),
	}
}

func listDir(dir string, in lsInput) (string, error) {
	limit, err := checkLimit("limit", in.Limit, lsDefaultLimit, maxResults)
	if err != nil {
		return "", err
	}
	if in.Path == "" {
		in.Path = "."
	}
	p, err := resolvePath(dir, in.Path)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(p) // sorted by name
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory") {
			return "", fmt.Errorf("ls %s: not a directory; read it with read", p)
		}
		return "", fmt.Errorf("ls %s: %w", p, cause(err))
	}
	if len(entries) == 0 {
		return fmt.Sprintf("(%s is empty)", p), nil
	}
	r := results{limit: limit}
	for _, e := range entries {
		name := e.Name()
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(p, name)); err == nil && fi.IsDir() {
				isDir = true
			}
		}
		if isDir {
			name += "/"
		}
		if !r.add(name) {
			break
		}
	}
	return r.note(fmt.Sprintf("%d entries", len(entries)), "raise limit to see more"), nil
}

// find

var findParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "A glob matched against paths relative to path, with / as separator: * and ? within a name, ** across directories, [abc] and {a,b}. A pattern without / matches the file name at any depth, e.g. *.go; one with / matches the whole relative path, e.g. cmd/**/*_test.go."},
    "path": {"type": "string", "description": "The directory to search: relative to the project directory, or absolute. Default \".\"."},
    "include_ignored": {"type": "boolean", "description": "Also find paths that .gitignore or .git/info/exclude ignores (build outputs, vendored files). Default false: they are skipped, unless path itself is in an ignored directory."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "How many paths to show at most. Default 1000."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)

type findInput struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path"`
	IncludeIgnored bool   `json:"include_ignored"`
	Limit          int    `json:"limit"`
}

func findTool(dir string) sdk.Tool {
	return sdk.Tool{
		Name:        "find",
		Description: "Find files and directories by glob pattern under a directory; skips .git, node_modules and what .gitignore ignores.",
		Parameters:  findParams,
		Guidance: "Use find to locate files by name, e.g. pattern *.go for every Go file at any depth, or " +
			"internal/**/*_test.go for a subtree. Paths come back as you can pass them to read, in walk order, " +
			"directories with a trailing /. Paths that .gitignore ignores are left out; set include_ignored, or give " +
			"a path inside the ignored directory, to search them. To search file contents use grep instead.",
		Run: bindText(findParams, func(ctx context.Context, in findInput) (string, error) { return findFiles(ctx, dir, in) }),
	}
}

func findFiles(ctx context.Context, dir string, in findInput) (string, error) {
	limit, err := checkLimit("limit", in.Limit, findDefaultLimit, maxResults)
	if err != nil {
		return "", err
	}
	g, err := compileGlob(in.Pattern)
	if err != nil {
		return "", fmt.Errorf("invalid input: field \"pattern\": %w", err)
	}
	root, _, err := searchRoot(dir, in.Path, true)
	if err != nil {
		return "", err
	}
	r := results{limit: limit}
	total, skipped := 0, 0
	ign := ignoreFor(root, in.IncludeIgnored)
	walk := walkRoot(root)
	err = filepath.WalkDir(walk, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == walk {
			return err
		}
		if err != nil {
			return skipOnError(d)
		}
		if d.IsDir() && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if ign.Ignored(p, d.IsDir()) {
			skipped++
			return skipOnError(d)
		}
		rel, _ := filepath.Rel(walk, p)
		rel = filepath.ToSlash(rel)
		if g.match(rel) {
			total++
			s := shown(in.Path, rel)
			if d.IsDir() {
				s += "/"
			}
			r.add(s)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("find in %s: %w", root, err)
	}
	if total == 0 {
		return fmt.Sprintf("No paths match %s under %s%s.", in.Pattern, root, ignoredNote(skipped)), nil
	}
	return r.note(fmt.Sprintf("%d matches", total), "narrow the pattern or path, or raise limit"), nil
}

// skipOnError skips what could not be read (a directory's contents or a
// file) and goes on with the walk.
func skipOnError(d fs.DirEntry) error {
	if d != nil && d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// searchRoot resolves the path argument of find and grep (default ".").
func searchRoot(dir, arg string, mustBeDir bool) (string, fs.FileInfo, error) {
	if arg == "" {
		arg = "."
	}
	root, err := resolvePath(dir, arg)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return "", nil, fmt.Errorf("search %s: %w", root, cause(err))
	}
	if mustBeDir && !fi.IsDir() {
		return "", nil, fmt.Errorf("search %s: not a directory", root)
	}
	return root, fi, nil
}

// walkRoot is what to walk for the directory root: a trailing separator
// makes the walk follow root when it is a symlink (WalkDir does not follow
// one), and only then.
func walkRoot(root string) string {
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return root + string(filepath.Separator)
	}
	return root
}

// grep

var grepParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "A Go (RE2) regular expression, matched against each line."},
    "path": {"type": "string", "description": "A file, or a directory to search recursively: relative to the project directory, or absolute. Default \".\"."},
    "glob": {"type": "string", "description": "Only search files whose path relative to path matches this glob (same rules as find), e.g. *.go."},
    "ignore_case": {"type": "boolean", "description": "Match without regard to case. Default false."},
    "include_ignored": {"type": "boolean", "description": "Also search files that .gitignore or .git/info/exclude ignores (build outputs, vendored files). Default false: they are skipped, unless path itself is an ignored file or in an ignored directory."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "How many matching lines to show at most. Default 100."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)

type grepInput struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path"`
	Glob           string `json:"glob"`
	IgnoreCase     bool   `json:"ignore_case"`
	IncludeIgnored bool   `json:"include_ignored"`
	Limit          int    `json:"limit"`
}

func grepTool(dir string) sdk.Tool {
	return sdk.Tool{
		Name:        "grep",
		Description: "Search file contents with a regular expression; prints file:line: text for each matching line. Skips binary files, .git, node_modules and what .gitignore ignores.",
		Parameters:  grepParams,
		Guidance: "Use grep to find where something is defined or used, instead of grep or rg in bash. The pattern is " +
			"Go RE2 syntax (no backreferences or lookaround); escape regexp metacharacters to match them literally. " +
			"Narrow a search with path and glob (e.g. glob *.go), then read the file around the line numbers " +
			"it reports. Lines longer than 500 bytes are cut. Files that .gitignore ignores are skipped; set " +
			"include_ignored, or give a path inside the ignored directory, to search them.",
		Run: bindText(grepParams, func(ctx context.Context, in grepInput) (string, error) { return grepFiles(ctx, dir, in) }),
	}
}

func grepFiles(ctx context.Context, dir string, in grepInput) (string, error) {
	limit, err := checkLimit("limit", in.Limit, grepDefaultLimit, maxResults)
	if err != nil {
		return "", err
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("invalid input: field \"pattern\": %w", err)
	}
	var g *glob
	if in.Glob != "" {
		if g, err = compileGlob(in.Glob); err != nil {
			return "", fmt.Errorf("invalid input: field \"glob\": %w", err)
		}
	}
	root, fi, err := searchRoot(dir, in.Path, false)
	if err != nil {
		return "", err
	}
	r := results{limit: limit}
	if !fi.IsDir() {
		f, _, err := openRegular("grep", root, "grep only searches regular files")
		if err != nil {
			return "", err
		}
		name := in.Path
		err = grepReader(ctx, f, name, re, &r, maxGrepLine)
		f.Close()
		if err != nil && !errors.Is(err, errFull) {
			return "", fmt.Errorf("grep %s: %w", root, err)
		}
		return grepNote(in.Pattern, root, &r, 0), nil
	}
	ign := ignoreFor(root, in.IncludeIgnored)
	skipped := 0
	walk := walkRoot(root)
	err = filepath.WalkDir(walk, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == walk {
				return err
			}
			return skipOnError(d)
		}
		if p != walk && ign.Ignored(p, d.IsDir()) {
			skipped++
			return skipOnError(d)
		}
		if d.IsDir() {
			if p != walk && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // FIFOs, devices, sockets and symlinks are skipped
		}
		rel, _ := filepath.Rel(walk, p)
		name := filepath.ToSlash(rel)
		if g != nil && !g.match(name) {
			return nil
		}
		return grepFile(ctx, p, shown(in.Path, name), re, &r, maxGrepLine)
	})
	if err != nil && !errors.Is(err, errFull) {
		return "", fmt.Errorf("grep in %s: %w", root, err)
	}
	return grepNote(in.Pattern, root, &r, skipped), nil
}

func grepNote(pattern, root string, r *results, skipped int) string {
	if r.n == 0 && !r.more {
		return fmt.Sprintf("No matches for %s in %s%s.", pattern, root, ignoredNote(skipped))
	}
	return r.note("matches", "narrow the pattern, path or glob, or raise limit")
}

// maxGrepLine is the longest line grep holds in memory to match it; a
// longer one is streamed through the regexp (slower, but it is found).
const maxGrepLine = 1 << 20

// errFull stops a search whose results are full.
var errFull = errors.New("results full")

// grepFile adds the lines of file p that match re to r, as
// "name:line: text"; it skips a file that is not a regular one, is
// binary or cannot be read. It returns errFull once r is full, or ctx's
// error.
func grepFile(ctx context.Context, p, name string, re *regexp.Regexp, r *results, maxLine int) error {
	f, _, err := openRegular("grep", p, "grep only searches regular files")
	if err != nil {
		return nil
	}
	defer f.Close()
	err = grepReader(ctx, f, name, re, r, maxLine)
	if err != nil && (errors.Is(err, errFull) || ctx.Err() != nil) {
		return err
	}
	return nil // a read error skips the rest of the file
}

// grepReader is grepFile on an open file. A line of up to maxLine bytes
// is held and matched whole; a longer one is matched as a stream, so
// memory stays bounded however long a line is.
func grepReader(ctx context.Context, f io.Reader, name string, re *regexp.Regexp, r *results, maxLine int) error {
	br := bufio.NewReaderSize(f, 64*1024)
	if head, _ := br.Peek(binarySniff); isBinary(head) {
		return nil
	}
	var buf []byte
	for n := 1; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(buf) < maxLine {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		var match bool
		total := 0
		if errors.Is(err, bufio.ErrBufferFull) {
			rest := &lineRest{ctx: ctx, br: br}
			match = matchStream(re, line, rest)
			if _, err := io.Copy(io.Discard, rest); err != nil {
				return err
			}
			total, err = len(line)+rest.n, nil
		} else {
			line = bytes.TrimRight(line, "\r\n")
			total = len(line)
			match = total > 0 && re.Match(line)
		}
		if match {
			head := string(line[:min(len(line), grepLineLen+utf8.UTFMax)])
			if !r.add(fmt.Sprintf("%s:%d: %s", name, n, cutHead(head, total, grepLineLen))) {
				return errFull
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// matchStream reports whether re matches the line that starts with head
// and goes on in rest, reading no more of rest than it needs. A literal
// pattern is searched for chunk by chunk; any other through
// Regexp.MatchReader.
func matchStream(re *regexp.Regexp, head []byte, rest io.Reader) bool {
	lit, complete := re.LiteralPrefix()
	if !complete {
		return re.MatchReader(bufio.NewReader(io.MultiReader(bytes.NewReader(head), rest)))
	}
	if bytes.Contains(head, []byte(lit)) {
		return true
	}
	// Keep the last len(lit)-1 bytes, which a match may start in.
	keep := len(lit) - 1
	window := make([]byte, 0, keep+64*1024)
	window = append(window, head[len(head)-min(len(head), keep):]...)
	chunk := make([]byte, 64*1024)
	for {
		k, err := rest.Read(chunk)
		window = append(window, chunk[:k]...)
		if bytes.Contains(window, []byte(lit)) {
			return true
		}
		if err != nil {
			return false
		}
		window = append(window[:0], window[len(window)-min(len(window), keep):]...)
	}
}
