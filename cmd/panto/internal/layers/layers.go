// Package layers resolves panto's three configuration layers — base, user
// and project — and finds the files each one holds.
//
// The directories are computed from the environment the same way on every
// operating system (the spec's table), so a macOS user finds them where the
// docs say; that is why this does not use a library that maps XDG paths to
// platform-native folders. The environment is passed in as a value, so
// nothing here reads process state and tests need no t.Setenv.
package layers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Name identifies a layer.
type Name string

// The layers, lowest precedence first.
const (
	Base    Name = "base"
	User    Name = "user"
	Project Name = "project"
)

// Layer is one configuration directory.
type Layer struct {
	Name Name
	Dir  string
}

// Dirs are the directories panto uses, resolved from the environment.
type Dirs struct {
	// Home is PANTO_HOME: ${XDG_DATA_HOME:-$HOME/.local/share}/panto.
	Home string
	// Layers are base ($PANTO_HOME/agent), user
	// (${XDG_CONFIG_HOME:-$HOME/.config}/panto) and project (./.panto), in
	// that order: lowest precedence first.
	Layers [3]Layer
	// Sessions is where session logs live: $PANTO_HOME/sessions.
	Sessions string
	// State is where panto's own log file goes:
	// ${XDG_STATE_HOME:-$HOME/.local/state}/panto.
	State string
	// CWD is the working directory the project layer hangs off.
	CWD string
}

// Getenv looks up an environment variable; os.Getenv fits.
type Getenv func(string) string

// ErrNoHome is returned when neither the specific variables nor HOME say
// where panto's directories are. Set HOME (or PANTO_HOME and the XDG
// variables).
var ErrNoHome = errors.New("cannot place panto's directories: HOME is not set")

// Resolve computes the directories for a process whose working directory is
// cwd (made absolute) and whose environment is getenv.
func Resolve(getenv Getenv, cwd string) (Dirs, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return Dirs{}, fmt.Errorf("resolve working directory %s: %w", cwd, err)
	}
	home := getenv("HOME")
	under := func(xdgVar, fallback string) (string, error) {
		if v := getenv(xdgVar); v != "" && filepath.IsAbs(v) {
			return v, nil // the XDG spec ignores relative values
		}
		if home == "" {
			return "", fmt.Errorf("%w (and %s is not set)", ErrNoHome, xdgVar)
		}
		return filepath.Join(home, fallback), nil
	}
	var d Dirs
	d.CWD = abs
	if v := getenv("PANTO_HOME"); v != "" {
		if d.Home, err = filepath.Abs(v); err != nil {
			return Dirs{}, fmt.Errorf("resolve PANTO_HOME %s: %w", v, err)
		}
	} else {
		data, err := under("XDG_DATA_HOME", ".local/share")
		if err != nil {
			return Dirs{}, err
		}
		d.Home = filepath.Join(data, "panto")
	}
	config, err := under("XDG_CONFIG_HOME", ".config")
	if err != nil {
		return Dirs{}, err
	}
	state, err := under("XDG_STATE_HOME", ".local/state")
	if err != nil {
		return Dirs{}, err
	}
	d.Layers = [3]Layer{
		{Base, filepath.Join(d.Home, "agent")},
		{User, filepath.Join(config, "panto")},
		{Project, filepath.Join(abs, ".panto")},
	}
	d.Sessions = filepath.Join(d.Home, "sessions")
	d.State = filepath.Join(state, "panto")
	return d, nil
}

// Layer returns the directory of the named layer.
func (d Dirs) Layer(n Name) string {
	for _, l := range d.Layers {
		if l.Name == n {
			return l.Dir
		}
	}
	return ""
}

// File is a file found in a layer.
type File struct {
	Layer Name
	Path  string
}

// Find returns name as found in each layer that has it, lowest precedence
// first. A directory of that name, or an unreadable entry, is an error: a
// user who put a file there meant it to count.
func (d Dirs) Find(name string) ([]File, error) {
	var out []File
	for _, l := range d.Layers {
		p := filepath.Join(l.Dir, name)
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look for %s in the %s layer: %w", p, l.Name, err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("look for %s in the %s layer: it is a directory, want a file", p, l.Name)
		}
		out = append(out, File{Layer: l.Name, Path: p})
	}
	return out, nil
}

// SessionDir returns the folder holding the session logs of the working
// directory: $PANTO_HOME/sessions/<cwd, encoded>.
func (d Dirs) SessionDir() string {
	return filepath.Join(d.Sessions, EncodePath(d.CWD))
}

// EncodePath turns an absolute path into one file-name-safe folder name:
// "/home/ann/my proj" becomes "-home-ann-my proj-". Separators and the few
// characters that file systems reject become '-'. Distinct paths can meet
// in one name (a/b-c and a/b/c); each log's header records its exact cwd,
// which is what listing compares.
func EncodePath(p string) string {
	b := []byte(filepath.ToSlash(p))
	for i, c := range b {
		switch c {
		case '/', '\\', ':', '*', '?', '"', '<', '>', '|':
			b[i] = '-'
		}
	}
	return "-" + string(trimDashes(b)) + "-"
}

func trimDashes(b []byte) []byte {
	for len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	return b
}
