// Package sysprompt resolves the system prompt a session starts from: the
// seed (the highest layer's SYSTEM.md, a --system-prompt flag, or the
// built-in default) and the appended blocks (every layer's
// APPEND_SYSTEM.md and the --append-system-prompt flags), in the order the
// spec fixes (system-prompt-design.md §2.2–2.3).
//
// It only reads files; recording the blocks and reconciling them with a
// resumed session is the host's job.
package sysprompt

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/rules"
)

// Default is the built-in seed, used when no layer has a SYSTEM.md and no
// --system-prompt flag is given.
//
//go:embed default.md
var Default string

// The files looked for in each layer.
const (
	SystemFile = "SYSTEM.md"
	AppendFile = "APPEND_SYSTEM.md"
)

// Block is one resolved system block and where it came from.
type Block struct {
	Text string
	// Source says where Text came from, for people: "project
	// /p/.panto/SYSTEM.md", "--append-system-prompt", "built-in default".
	Source string
	// project marks a project layer's file: rendered without
	// {{env.NAME}}.
	project bool
}

// Flags are the command-line overrides; each value is text or the path of
// a file holding it (see Value).
type Flags struct {
	System  string
	Appends []string
	// Given is a prompt a front end was handed as text — never read as a
	// path, never rendered — such as an ACP client's _meta.systemPrompt;
	// nil when none.
	Given *Given
	// Vars are the {{name}} variables; nil renders nothing (text is kept
	// as written).
	Vars rules.Vars
}

// Given is a system prompt given as text by a front end's peer.
type Given struct {
	Text string
	// Source says who gave it, for people ("ACP client").
	Source string
	// Replace makes it the seed, over --system-prompt and SYSTEM.md, as
	// --system-prompt is over SYSTEM.md; otherwise it is appended right
	// after the --append-system-prompt blocks.
	Replace bool
}

// Resolve returns the system blocks of a fresh session: the seed first,
// then the appends — flag appends in the order given, then the layers'
// APPEND_SYSTEM.md files project → user → base. A file holding only white
// space counts as absent.
func Resolve(d layers.Dirs, f Flags) ([]Block, error) {
	seed := Block{Text: Default, Source: "built-in default"}
	if f.System != "" {
		text, src, err := flagValue("--system-prompt", f.System)
		if err != nil {
			return nil, err
		}
		seed = Block{Text: text, Source: "--system-prompt" + src}
	} else {
		files, err := d.Find(SystemFile)
		if err != nil {
			return nil, err
		}
		for i := len(files) - 1; i >= 0; i-- { // highest layer present wins
			text, err := readLayerFile(d, files[i])
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(text) != "" {
				seed = Block{Text: text, Source: string(files[i].Layer) + " " + files[i].Path, project: files[i].Layer == layers.Project}
				break
			}
		}
	}
	out := []Block{seed}
	if err := f.render(&out[0]); err != nil {
		return nil, err
	}
	if g := f.Given; g != nil && g.Replace {
		out[0] = Block{Text: g.Text, Source: g.Source}
	}
	for _, v := range f.Appends {
		text, src, err := flagValue("--append-system-prompt", v)
		if err != nil {
			return nil, err
		}
		b := Block{Text: text, Source: "--append-system-prompt" + src}
		if err := f.render(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if g := f.Given; g != nil && !g.Replace && strings.TrimSpace(g.Text) != "" {
		out = append(out, Block{Text: g.Text, Source: g.Source})
	}
	files, err := d.Find(AppendFile)
	if err != nil {
		return nil, err
	}
	for i := len(files) - 1; i >= 0; i-- { // collected base → user → project, emitted reversed
		text, err := readLayerFile(d, files[i])
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(text) != "" {
			b := Block{Text: text, Source: string(files[i].Layer) + " " + files[i].Path, project: files[i].Layer == layers.Project}
			if err := f.render(&b); err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// render expands b's variables; errors name the file (or flag) and line.
func (f Flags) render(b *Block) error {
	if f.Vars == nil {
		return nil
	}
	source := b.Source
	if _, path, ok := strings.Cut(b.Source, " "); ok && !strings.HasPrefix(b.Source, "--") {
		source = path
	}
	vars := f.Vars
	if b.project {
		vars = noEnv{vars}
	}
	text, err := rules.Render(b.Text, source, vars)
	if err != nil {
		return projectEnvError(err, b.project)
	}
	b.Text = text
	return nil
}

// projectEnvError says why {{env.NAME}} is unknown in a project's file.
func projectEnvError(err error, project bool) error {
	var re *rules.Error
	if project && errors.As(err, &re) && strings.HasPrefix(re.Name, "env.") {
		re.Problem = "a project's prompt files cannot read your environment (only your own layers' files can):"
	}
	return err
}

// noEnv is the variables a project's files may use: all but {{env.NAME}}.
// A cloned repository's prompt never reads the user's environment (a
// token there would go to the provider and the log).
type noEnv struct{ rules.Vars }

func (v noEnv) Lookup(name string) (string, bool) {
	if strings.HasPrefix(name, "env.") {
		return "", false
	}
	return v.Vars.Lookup(name)
}

// readLayerFile reads a prompt file found in a layer. A project's file
// must stay in the project: one that is (or lies beneath) a link to a
// place outside the working directory is refused, so a cloned repository
// cannot put the user's files (a key, /proc/self/environ) into the
// prompt.
func readLayerFile(d layers.Dirs, f layers.File) (string, error) {
	if f.Layer == layers.Project {
		if err := inside(f.Path, d.CWD); err != nil {
			return "", err
		}
	}
	return readFile(f.Path)
}

// inside refuses path when, all links followed, it is not beneath root.
func inside(path, root string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("read prompt file: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("read prompt file %s: %w", path, err)
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("read prompt file %s: it is a link to %s, outside the project %s: a project's prompt files must be in the project", path, real, root)
	}
	return nil
}

// UserPromptFile is prepended to every user message, from every layer.
const UserPromptFile = "USER_PROMPT.md"

// UserPrompt returns the layers' USER_PROMPT.md texts, project → user →
// base (the order of the appends), rendered with vars, each with its
// source ("project /p/.panto/USER_PROMPT.md").
func UserPrompt(d layers.Dirs, vars rules.Vars) ([]Block, error) {
	files, err := d.Find(UserPromptFile)
	if err != nil {
		return nil, err
	}
	var out []Block
	for i := len(files) - 1; i >= 0; i-- {
		text, err := readLayerFile(d, files[i])
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		if vars != nil {
			v := vars
			if files[i].Layer == layers.Project {
				v = noEnv{vars}
			}
			if text, err = rules.Render(text, files[i].Path, v); err != nil {
				return nil, projectEnvError(err, files[i].Layer == layers.Project)
			}
		}
		out = append(out, Block{Text: text, Source: string(files[i].Layer) + " " + files[i].Path})
	}
	return out, nil
}

// Texts returns the text of each block, in order.
func Texts(blocks []Block) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.Text
	}
	return out
}

// FileError is returned by Value, Check and Resolve for a flag value that
// looks like a path (LooksLikePath) or names a directory, but names no
// file: the user meant a file that is not there. It is a command-line
// mistake; the message names the flag and the path, so the user can fix it.
type FileError struct {
	// Flag is "--system-prompt" or "--append-system-prompt"; empty from
	// Value.
	Flag string
	// Path is the value as given.
	Path string
	// Problem says what is wrong: "no such file", "a directory, want a
	// file", ...
	Problem string
}

func (e *FileError) Error() string {
	if e.Flag == "" {
		return e.Path + ": " + e.Problem
	}
	return e.Flag + " " + e.Path + ": " + e.Problem
}

// Value reads a TEXT|FILE flag value: if v names a file, or v + ".md"
// does, the file's contents; if v looks like a path (LooksLikePath) or
// names a directory, a *FileError; otherwise v itself. src describes the
// choice for people (" (file /p/x.md)" or "").
//
// A file is read as a prompt file is (at most layers.MaxFileSize, UTF-8);
// it may also be a pipe (<(cmd), /dev/stdin, a FIFO), read once per run
// (see readPipe), but not a device (a *FileError).
func Value(v string) (text, src string, err error) {
	for _, p := range []string{v, v + ".md"} {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		text, err := readFlagFile(p, st.Mode())
		if err != nil {
			return "", "", err
		}
		return text, " (file " + p + ")", nil
	}
	if off, line, bad := invalidUTF8(v); bad {
		return "", "", &valueError{problem: fmt.Sprintf("the text is not valid UTF-8 at byte %d (line %d): pass UTF-8 text", off, line)}
	}
	if !oneToken(v) {
		return v, "", nil
	}
	st, err := os.Stat(v)
	switch {
	case err == nil && st.IsDir():
		return "", "", &FileError{Path: v, Problem: "a directory, want a file"}
	case !LooksLikePath(v):
		return v, "", nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", "", &FileError{Path: v, Problem: err.Error()}
	case strings.HasSuffix(strings.ToLower(v), ".md"):
		return "", "", &FileError{Path: v, Problem: "no such file"}
	}
	return "", "", &FileError{Path: v, Problem: "no such file (nor " + v + ".md)"}
}

// valueError is what is wrong with a flag's file (path set) or text.
type valueError struct {
	path, problem string
}

func (e *valueError) Error() string {
	if e.path == "" {
		return e.problem
	}
	return e.path + ": " + e.problem
}

// readFlagFile reads the file p a flag names; mode is its type.
func readFlagFile(p string, mode fs.FileMode) (string, error) {
	if !mode.IsRegular() {
		if mode&fs.ModeNamedPipe == 0 {
			return "", &FileError{Path: p, Problem: layers.Kind(mode) + ", want a file or a pipe"}
		}
		return readPipe(p)
	}
	return readFlagPath(p)
}

func readFlagPath(p string) (string, error) {
	b, err := layers.ReadFile(p, layers.MaxFileSize, layers.PipesToo)
	switch {
	case errors.Is(err, layers.ErrNotRegular): // replaced since the Stat
		return "", &FileError{Path: p, Problem: err.Error()}
	case err != nil && (errors.Is(err, layers.ErrTooLarge) || errors.Is(err, os.ErrNotExist)):
		return "", &valueError{path: p, problem: err.Error()}
	case err != nil:
		return "", err
	}
	text := string(b)
	if err := checkUTF8(p, text); err != nil {
		return "", err
	}
	return text, nil
}

// pipes holds what was read from each pipe a flag named. A run reads the
// flags twice — Check, before anything starts, then Resolve — but a pipe
// gives its contents only once: the second read takes them from here. This
// is the package's one piece of state, and it mirrors the process's own
// (what was read from its pipes).
var pipes struct {
	sync.Mutex
	read map[string]pipeRead
}

type pipeRead struct {
	text string
	err  error
}

// readPipe reads the pipe p, bounded, once per process.
func readPipe(p string) (string, error) {
	pipes.Lock()
	defer pipes.Unlock()
	if r, ok := pipes.read[p]; ok {
		return r.text, r.err
	}
	text, err := readFlagPath(p)
	if pipes.read == nil {
		pipes.read = map[string]pipeRead{}
	}
	pipes.read[p] = pipeRead{text, err}
	return text, err
}

// flagValue is Value for the flag named flag; errors name the flag.
func flagValue(flag, v string) (text, src string, err error) {
	text, src, err = Value(v)
	var fe *FileError
	var ve *valueError
	switch {
	case errors.As(err, &fe):
		fe.Flag = flag
		return "", "", fe
	case errors.As(err, &ve) && ve.path == "":
		return "", "", fmt.Errorf("%s: %s", flag, ve.problem)
	case errors.As(err, &ve):
		return "", "", fmt.Errorf("%s %s: %s", flag, ve.path, ve.problem)
	case err != nil:
		return "", "", fmt.Errorf("%s: %w", flag, err)
	}
	return text, src, nil
}

// LooksLikePath reports whether a TEXT|FILE value is meant as a file: one
// word (no white space) holding a path separator or ending in .md or
// .txt. Such a value that names no file is a mistake, not text.
func LooksLikePath(v string) bool {
	if !oneToken(v) {
		return false
	}
	lower := strings.ToLower(v)
	return strings.ContainsRune(v, '/') || strings.ContainsRune(v, filepath.Separator) ||
		strings.HasSuffix(lower, ".md") || strings.HasSuffix(lower, ".txt")
}

func oneToken(v string) bool {
	return v != "" && strings.IndexFunc(v, unicode.IsSpace) < 0
}

// Check reads the flags' values as Resolve will, so that a mistake (a
// *FileError) shows before anything is started or written.
func (f Flags) Check() error {
	if f.System != "" {
		if _, _, err := flagValue("--system-prompt", f.System); err != nil {
			return err
		}
	}
	for _, v := range f.Appends {
		if _, _, err := flagValue("--append-system-prompt", v); err != nil {
			return err
		}
	}
	return nil
}

// readFile reads a prompt file found in a layer: a regular file of at most
// layers.MaxFileSize bytes, in UTF-8. Errors name the file.
func readFile(p string) (string, error) {
	b, err := layers.ReadFile(p, layers.MaxFileSize, layers.RegularOnly)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("read prompt file %s: it vanished while being read", p)
		}
		if errors.Is(err, layers.ErrNotRegular) || errors.Is(err, layers.ErrTooLarge) {
			return "", fmt.Errorf("read prompt file %s: %w", p, err)
		}
		return "", fmt.Errorf("read prompt file: %w", err) // an *fs.PathError names it
	}
	text := string(b)
	if err := checkUTF8(p, text); err != nil {
		return "", err
	}
	return text, nil
}

// checkUTF8 refuses text that is not UTF-8. Such text could never be
// recorded as it is (the log is JSON, which keeps U+FFFD in its place), so
// it would never match the log again and every resume would re-seed. The
// error names the file and the first bad byte, counted from 1.
func checkUTF8(path, text string) error {
	if off, line, bad := invalidUTF8(text); bad {
		return &valueError{path: path, problem: fmt.Sprintf("not valid UTF-8 at byte %d (line %d): save it as UTF-8", off, line)}
	}
	return nil
}

// invalidUTF8 finds the first byte of s that is not part of valid UTF-8:
// its offset and line, both counted from 1.
func invalidUTF8(s string) (off, line int, bad bool) {
	if utf8.ValidString(s) {
		return 0, 0, false
	}
	line = 1
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i + 1, line, true
			}
		}
		if r == '\n' {
			line++
		}
	}
	return 0, 0, false
}
