package extension

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// go-plugin makes a folder for each extension's unix sockets (the
// extension's own and the Host service's); by itself in the system's
// temporary folder, as /tmp/plugin-dirN, removed when the extension is
// stopped — but never when panto is SIGKILLed. So panto gives go-plugin
// a folder of its own for them (Options.SocketDir): one per panto run,
// named by its pid, under one of SocketRoots. Each run removes, as it opens its
// folder, the folders of the runs whose process is gone.

// SocketRoots are the folders every panto's socket folders go in, the
// first that works: $XDG_RUNTIME_DIR/panto (the user's own runtime
// folder, 0700 by the XDG spec), then panto-UID in the system's
// temporary folder (TMPDIR, /tmp), which OpenSocketDir creates 0700 and
// uses only when it is the user's own. Socket paths must stay short
// (about 100 bytes), so neither lives under panto's state folder.
func SocketRoots(getenv func(string) string) []string {
	var out []string
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		out = append(out, filepath.Join(d, "panto"))
	}
	return append(out, filepath.Join(tempDir(getenv), rootName()))
}

// tempDir is os.TempDir, read from getenv.
func tempDir(getenv func(string) string) string {
	for _, v := range tempVars {
		if d := getenv(v); d != "" && filepath.IsAbs(d) {
			return d
		}
	}
	return os.TempDir()
}

// OpenSocketDir creates this run's socket folder (0700), named by this
// process's pid, in the first of roots (SocketRoots) that works, once it
// removed from that root the folders of pantos that are gone; remove
// deletes the folder and what is left in it. It gives the number of
// leftovers it removed, and, when no root works, why the last failed.
func OpenSocketDir(roots []string) (dir string, removed int, remove func(), err error) {
	err = errors.New("no folder for the extension sockets")
	for _, root := range roots {
		if err = ownFolder(root); err != nil {
			continue
		}
		removed = sweepSockets(root)
		dir, err = os.MkdirTemp(root, strconv.Itoa(os.Getpid())+"-")
		if err != nil {
			err = fmt.Errorf("create the extension socket folder in %s: %w", root, err)
			continue
		}
		return dir, removed, func() { _ = os.RemoveAll(dir) }, nil
	}
	return "", removed, nil, err
}

// sweepSockets removes every PID-… folder in root whose process is not
// running, and reports how many it removed. A pid that was reused keeps
// its folder until that process ends too.
func sweepSockets(root string) int {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		head, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(head)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || running(pid) {
			continue
		}
		if os.RemoveAll(filepath.Join(root, e.Name())) == nil {
			n++
		}
	}
	return n
}

// ownFolder makes root a folder of the user's own, 0700: created if
// missing (its parent must exist), refused if it is a symlink, not a
// folder, or (where the system says) another user's.
func ownFolder(root string) error {
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create the extension socket folder %s: %w", root, err)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return fmt.Errorf("extension socket folder %s: %w", root, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("extension socket folder %s: not a folder (%s); remove it", root, fi.Mode().Type())
	}
	if err := checkOwner(root, fi); err != nil {
		return fmt.Errorf("extension socket folder %s: %w", root, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(root, 0o700); err != nil {
			return fmt.Errorf("extension socket folder %s: make it 0700: %w", root, err)
		}
	}
	return nil
}
