package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The model's write and edit never change panto's own configuration and
// data: one write of extension_api_keys or disabled_extensions into the
// user's config.toml would hand the next session's bash the API key, or
// turn a safeguard off. panto names its folders in OwnDirsEnv for every
// extension; without it (an older panto) the tools compute them as panto
// does. This is a rule of the two file tools, not a boundary: bash can
// still write anywhere the user can (issue 19's sandbox is the boundary).

// OwnDirsEnv is the variable panto sets for every extension: its own
// folders, separated by the system's list separator (':' or ';') — the
// user layer, the base layer, the sessions and the state folder.
const OwnDirsEnv = "PANTO_OWN_DIRS"

// ownDirs are panto's own folders, as given and with their symlinks
// resolved; a path in any of them is refused.
type ownDirs []string

// findOwnDirs reads OwnDirsEnv, or, when it is not set, computes the
// folders from HOME, the XDG variables and PANTO_HOME as panto does
// (cmd/panto/internal/layers).
func findOwnDirs(getenv func(string) string) ownDirs {
	var dirs []string
	if v := getenv(OwnDirsEnv); v != "" {
		dirs = filepath.SplitList(v)
	} else {
		dirs = defaultOwnDirs(getenv)
	}
	var out ownDirs
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		out = append(out, filepath.Clean(d))
		if r, err := physical(d); err == nil && r != filepath.Clean(d) {
			out = append(out, r)
		}
	}
	return out
}

// defaultOwnDirs are panto's folders by its defaults: the user layer
// ${XDG_CONFIG_HOME:-~/.config}/panto, PANTO_HOME
// (${XDG_DATA_HOME:-~/.local/share}/panto)'s agent/ (the base layer) and
// sessions/, and ${XDG_STATE_HOME:-~/.local/state}/panto.
func defaultOwnDirs(getenv func(string) string) []string {
	home := getenv("HOME")
	under := func(xdg, fallback string) string {
		if v := getenv(xdg); v != "" && filepath.IsAbs(v) {
			return v
		}
		if home == "" {
			return ""
		}
		return filepath.Join(home, fallback)
	}
	var out []string
	add := func(parts ...string) {
		if parts[0] != "" {
			out = append(out, filepath.Join(parts...))
		}
	}
	data := getenv("PANTO_HOME")
	if data != "" {
		if abs, err := filepath.Abs(data); err == nil {
			data = abs
		}
	} else if d := under("XDG_DATA_HOME", ".local/share"); d != "" {
		data = filepath.Join(d, "panto")
	}
	add(under("XDG_CONFIG_HOME", ".config"), "panto")
	add(data, "agent")
	add(data, "sessions")
	add(under("XDG_STATE_HOME", ".local/state"), "panto")
	return out
}

// check refuses op on path (as the model gave it, from dir) when the
// file it would change — symlinks followed, the last one as write
// follows it, and the folders on the way — lies in one of panto's own
// folders.
func (o ownDirs) check(op, dir, path string) error {
	if len(o) == 0 {
		return nil
	}
	p, err := resolvePath(dir, path)
	if err != nil {
		return err
	}
	target, err := linkTarget(p)
	if err != nil {
		return nil // the tool itself says what is wrong with it
	}
	where := []string{p, target}
	if r, err := physical(target); err == nil {
		where = append(where, r)
	}
	for _, w := range where {
		for _, d := range o {
			if within(d, w) {
				shown := p
				if w != p {
					shown = p + " (" + w + ")"
				}
				return fmt.Errorf("%s %s: refused: it is in %s, panto's own configuration: the model does not write it; edit it yourself", op, shown, d)
			}
		}
	}
	return nil
}

// within reports whether path is dir or lies under it; on macOS and
// Windows, whose file systems usually ignore case, case is ignored.
func within(dir, path string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		dir, path = strings.ToLower(dir), strings.ToLower(path)
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// physical is the path the system reaches for p (absolute and clean),
// every symlink on the way resolved, as the kernel resolves them; the
// part of it that does not exist yet is kept as given.
func physical(p string) (string, error) {
	rest := strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
	vol := filepath.VolumeName(p)
	cur := vol + string(filepath.Separator)
	if vol != "" {
		rest = rest[1:]
	}
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		to, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(to) {
			v := filepath.VolumeName(to)
			cur = v + string(filepath.Separator)
			to = to[len(v):]
		}
		rest = append(strings.Split(filepath.ToSlash(to), "/"), rest...)
	}
	return cur, nil
}
