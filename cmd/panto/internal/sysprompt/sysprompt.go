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
	"os"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
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
}

// Flags are the command-line overrides; each value is text or the path of
// a file holding it (see Value).
type Flags struct {
	System  string
	Appends []string
}

// Resolve returns the system blocks of a fresh session: the seed first,
// then the appends — flag appends in the order given, then the layers'
// APPEND_SYSTEM.md files project → user → base. A file holding only white
// space counts as absent.
func Resolve(d layers.Dirs, f Flags) ([]Block, error) {
	seed := Block{Text: Default, Source: "built-in default"}
	if f.System != "" {
		text, src, err := Value(f.System)
		if err != nil {
			return nil, fmt.Errorf("--system-prompt: %w", err)
		}
		seed = Block{Text: text, Source: "--system-prompt" + src}
	} else {
		files, err := d.Find(SystemFile)
		if err != nil {
			return nil, err
		}
		for i := len(files) - 1; i >= 0; i-- { // highest layer present wins
			text, err := readFile(files[i].Path)
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(text) != "" {
				seed = Block{Text: text, Source: string(files[i].Layer) + " " + files[i].Path}
				break
			}
		}
	}
	out := []Block{seed}
	for _, v := range f.Appends {
		text, src, err := Value(v)
		if err != nil {
			return nil, fmt.Errorf("--append-system-prompt: %w", err)
		}
		out = append(out, Block{Text: text, Source: "--append-system-prompt" + src})
	}
	files, err := d.Find(AppendFile)
	if err != nil {
		return nil, err
	}
	for i := len(files) - 1; i >= 0; i-- { // collected base → user → project, emitted reversed
		text, err := readFile(files[i].Path)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(text) != "" {
			out = append(out, Block{Text: text, Source: string(files[i].Layer) + " " + files[i].Path})
		}
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

// Value reads a TEXT|FILE flag value: if v names an existing file, or v +
// ".md" does, the file's contents; otherwise v itself. src describes the
// choice for people (" (file /p/x.md)" or "").
func Value(v string) (text, src string, err error) {
	for _, p := range []string{v, v + ".md"} {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		text, err := readFile(p)
		if err != nil {
			return "", "", err
		}
		return text, " (file " + p + ")", nil
	}
	return v, "", nil
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("read system prompt file %s: it vanished while being read", p)
		}
		return "", fmt.Errorf("read system prompt file %s: %w", p, err)
	}
	return string(b), nil
}
