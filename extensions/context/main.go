// Command context puts the project's instruction files into the system
// prompt: AGENTS.md (and CLAUDE.md beside it) from the user layer
// (${XDG_CONFIG_HOME:-$HOME/.config}/panto) and from every directory from
// the repository root down to the working directory, each as its own
// block headed "Instructions from <absolute path>:".
//
// Each file is a section of the prompt, set at every session start:
// panto records one only when its file changed, in place, and a file that
// is gone has its section removed.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/panto-dev/panto/sdk"
)

// maxFileBytes caps what one instruction file contributes.
const maxFileBytes = 64 * 1024

// fileNames are the instruction files of one directory, in order.
var fileNames = []string{"AGENTS.md", "CLAUDE.md"}

type ext struct {
	sdk.Base
	dir     string // the working directory
	userDir string // the user layer; empty: none
}

var (
	_ sdk.SessionStarter = (*ext)(nil)
	_ sdk.Describer      = (*ext)(nil)
)

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "context", Version: "1.0.0", Description: "AGENTS.md and CLAUDE.md instructions in the system prompt"}
}

// SessionStart sets one section per instruction file, and removes the
// sections of files that are gone. panto records nothing for a section
// whose file is unchanged, and updates a changed one in place.
func (e *ext) SessionStart(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	files, problems := collect(e.userDir, e.dir)
	for _, err := range problems {
		h.Logger().Warn("instruction file skipped", "error", err)
		var out *outsideError
		if errors.As(err, &out) {
			// The user should know why the file the project ships is not
			// read (and that it tried to reach outside).
			_ = h.Notify(ctx, "warning", err.Error())
		}
	}
	had, err := h.Sections(ctx)
	if err != nil {
		return sdk.SessionStartResponse{}, fmt.Errorf("context: %w", err)
	}
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.key()] = true
		// Instruction files are written for every agent, not as panto
		// templates: their "{{" (Helm, Go templates) is recorded as is.
		if err := h.SetSection(ctx, f.key(), sdk.Literal(f.block())); err != nil {
			return sdk.SessionStartResponse{}, fmt.Errorf("context: %s: %w", f.path, err)
		}
	}
	for _, sec := range had {
		if !keep[sec.Key] {
			if err := h.RemoveSection(ctx, sec.Key); err != nil {
				return sdk.SessionStartResponse{}, fmt.Errorf("context: remove %s: %w", sec.Key, err)
			}
		}
	}
	return sdk.SessionStartResponse{}, nil
}

// instruction is one instruction file's contribution.
type instruction struct {
	path string // absolute
	text string // trailing white space removed
	size int64  // of the whole file, when it was cut; else 0
}

func (f instruction) header() string { return "Instructions from " + f.path + ":" }

// key is the file's section key: its name, readable, and a hash of its
// path, so that two AGENTS.md are two sections and any path makes a valid
// key.
func (f instruction) key() string {
	sum := sha256.Sum256([]byte(f.path))
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, filepath.Base(f.path))
	return fmt.Sprintf("%s-%x", name, sum[:4])
}

func (f instruction) block() string {
	b := f.header() + "\n\n" + f.text
	if f.size > 0 {
		b += fmt.Sprintf("\n\n[Cut at 64 KB: the file is %d bytes; read it for the rest.]", f.size)
	}
	return b
}

// collect returns the instruction files for working directory cwd
// (absolute): those of userDir (skipped when empty), then those of each
// directory from the repository root (the nearest ancestor of cwd holding
// .git; cwd itself when there is none) down to cwd. In each directory
// AGENTS.md comes before CLAUDE.md. Missing and empty files are left out;
// files that cannot be read are left out and reported in problems, and
// so are the project's files that lead outside the project (an
// *outsideError): a cloned repository's AGENTS.md that is a symlink to
// ~/.aws/credentials or /proc/self/environ is not sent to the model.
func collect(userDir, cwd string) (files []instruction, problems []error) {
	type place struct{ dir, project string }
	var dirs []place
	if userDir != "" {
		dirs = append(dirs, place{filepath.Clean(userDir), ""})
	}
	project := projectDirs(filepath.Clean(cwd))
	for _, d := range project {
		dirs = append(dirs, place{d, project[0]})
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		for _, name := range fileNames {
			p := filepath.Join(d.dir, name)
			if seen[p] {
				continue
			}
			seen[p] = true
			if err := inside(p, d.project); err != nil {
				problems = append(problems, err)
				continue
			}
			f, ok, err := readInstruction(p)
			switch {
			case err != nil:
				problems = append(problems, err)
			case ok:
				files = append(files, f)
			}
		}
	}
	return files, problems
}

// outsideError is a project's instruction file that leads outside the
// project: it is skipped.
type outsideError struct {
	path, target, project string
}

func (e *outsideError) Error() string {
	return fmt.Sprintf("skipped %s: it leads to %s, outside the project %s; an instruction file the project holds must stay in it", e.path, e.target, e.project)
}

// inside checks that p, with every symlink resolved, lies in project
// (resolved too); an empty project (the user layer) allows anything. A
// missing file, or one that cannot be resolved, passes: readInstruction
// says what is wrong with it.
func inside(p, project string) error {
	if project == "" {
		return nil
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil
	}
	root, err := filepath.EvalSymlinks(project)
	if err != nil {
		root = project
	}
	if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return &outsideError{path: p, target: target, project: root}
	}
	return nil
}

// projectDirs returns the directories from the repository root down to
// cwd, root first.
func projectDirs(cwd string) []string {
	var up []string
	for d := cwd; ; {
		up = append(up, d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(d)
		if parent == d { // no repository: just cwd
			return []string{cwd}
		}
		d = parent
	}
	for i, j := 0, len(up)-1; i < j; i, j = i+1, j-1 {
		up[i], up[j] = up[j], up[i]
	}
	return up
}

// readInstruction reads one instruction file, cut to maxFileBytes. ok is
// false for a missing, empty or all-blank file.
func readInstruction(p string) (f instruction, ok bool, err error) {
	// Look before opening: opening a FIFO blocks until a writer comes.
	if fi, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return instruction{}, false, nil
	} else if err != nil {
		return instruction{}, false, err
	} else if !fi.Mode().IsRegular() {
		return instruction{}, false, fmt.Errorf("%s: not a regular file (%s); skipped", p, fi.Mode().Type())
	}
	file, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return instruction{}, false, nil
	}
	if err != nil {
		return instruction{}, false, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return instruction{}, false, err
	}
	if !fi.Mode().IsRegular() { // swapped for something else meanwhile
		return instruction{}, false, fmt.Errorf("%s: not a regular file (%s); skipped", p, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(file, maxFileBytes+1))
	if err != nil {
		return instruction{}, false, fmt.Errorf("read %s: %w", p, err)
	}
	f = instruction{path: p}
	if len(data) > maxFileBytes {
		data = cut(data, maxFileBytes)
		f.size = max(fi.Size(), maxFileBytes+1)
	}
	// Bytes become text here: what is not UTF-8 shows as U+FFFD, as
	// panto records it, so an unchanged file matches its recorded block.
	f.text = strings.ToValidUTF8(strings.TrimRight(string(data), " \t\r\n"), "\uFFFD")
	if strings.TrimSpace(f.text) == "" {
		return instruction{}, false, nil
	}
	return f, true, nil
}

// cut shortens data (longer than n) to at most n bytes: after the last
// newline when there is one in the second half, else at a rune boundary.
func cut(data []byte, n int) []byte {
	if i := bytes.LastIndexByte(data[:n], '\n'); i >= n/2 {
		return data[:i+1]
	}
	for n > 0 && !utf8.RuneStart(data[n]) {
		n--
	}
	return data[:n]
}

// userLayer is ${XDG_CONFIG_HOME:-$HOME/.config}/panto, or "" when
// neither variable is set.
func userLayer(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "panto")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "panto")
	}
	return ""
}

func main() {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "context: cannot determine the working directory:", err)
		os.Exit(1)
	}
	if err := sdk.Serve(&ext{dir: dir, userDir: userLayer(os.Getenv)}); err != nil {
		log.Fatal(err)
	}
}
