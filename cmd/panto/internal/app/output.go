package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// Where panto session export -o and session fork -o may write
// (docs/cli.md, "The session tree"). Both write through a temporary file
// in the target's directory (package atomicfile): an export is renamed
// over the target, a fork linked to a name nothing holds. Neither ever
// opens the target itself, so a FIFO there is never waited on.

// OutputPath checks the -o target of cmd ("session export" or "session
// fork") and returns the path to write: dst itself, or for a symlink to
// a regular file the file it names. dst is absolute. replace says whether
// a plain regular file there may be replaced (export: yes; fork: no
// file at all may be there). What is refused whatever the flag:
//   - a directory that does not exist (it is not made: a typo would put
//     the file somewhere unexpected), as --session refuses it;
//   - anything not a regular file: a FIFO, a device, a socket, a
//     directory, a symlink to one or to nothing;
//   - the session log being exported, any file that looks like a session
//     log (a header of any version, a torn one), a lock file (*.lock:
//     a running session's), and for an export, any file in panto's
//     sessions folder (a fork's new log may go there: it is a session's).
func OutputPath(cmd, dst, src string, dirs layers.Dirs, replace bool) (string, error) {
	flag := cmd + ": -o " + dst
	dir := filepath.Dir(dst)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: directory %s does not exist", flag, dir)
	case err != nil:
		return "", fmt.Errorf("%s: %w", flag, err)
	case !st.IsDir():
		return "", fmt.Errorf("%s: %s is not a directory", flag, dir)
	}
	target := dst
	st, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A new file.
	case err != nil:
		return "", fmt.Errorf("%s: %w", flag, err)
	case !replace:
		what := "a file"
		if !st.Mode().IsRegular() {
			what = layers.Kind(st.Mode())
		}
		return "", fmt.Errorf("%s: %s is already there; a fork is a new file: name one that does not exist", flag, what)
	case st.Mode()&fs.ModeSymlink != 0:
		resolved, rerr := filepath.EvalSymlinks(dst)
		if rerr != nil {
			return "", fmt.Errorf("%s is a symbolic link to nothing that can be written (%v): name a regular file or a new one", flag, rerr)
		}
		if st, err = os.Stat(resolved); err != nil {
			return "", fmt.Errorf("%s: %w", flag, err)
		}
		target = resolved
		fallthrough
	default:
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("%s is %s: write the export to a regular file", flag, layers.Kind(st.Mode()))
		}
		if si, serr := os.Stat(src); serr == nil && os.SameFile(st, si) {
			return "", fmt.Errorf("%s is the session log being exported: write the export elsewhere", flag)
		}
		if strings.HasSuffix(target, ".lock") {
			return "", fmt.Errorf("%s is a lock file (a running session's, perhaps): write the export elsewhere", flag)
		}
		looks, lerr := sessionlog.LooksLikeLog(target)
		if lerr != nil {
			return "", fmt.Errorf("%s: %w", flag, lerr)
		}
		if looks {
			return "", fmt.Errorf("%s is a session log: write the export elsewhere", flag)
		}
	}
	if replace && inSessions(target, dirs) {
		return "", fmt.Errorf("%s is in panto's sessions folder %s: write the export elsewhere", flag, dirs.Sessions)
	}
	return target, nil
}

// inSessions reports whether path (or, for a new file, its directory)
// lies in the sessions folder, symlinks resolved.
func inSessions(path string, dirs layers.Dirs) bool {
	root, err := filepath.EvalSymlinks(dirs.Sessions)
	if err != nil {
		return false // no sessions folder yet: nothing in it
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		if p, err = filepath.EvalSymlinks(filepath.Dir(path)); err != nil {
			return false
		}
		p = filepath.Join(p, filepath.Base(path))
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// WriteExport writes an export to dst whole or not at all: rendered into
// a temporary file beside it, renamed over it. A signal that stops panto
// (ctx ends) removes the temporary file at once and stops the render at
// its next write. Temporary files an earlier export killed outright left
// in that directory are removed first (atomicfile.RemoveStale).
func WriteExport(ctx context.Context, dst string, render func(io.Writer) error) error {
	_, _ = atomicfile.RemoveStale(filepath.Dir(dst))
	tmp, err := atomicfile.Create(ctx, dst)
	if err != nil {
		return fmt.Errorf("session export: %w", err)
	}
	defer tmp.Abort()
	if err := render(tmp); err != nil {
		return err
	}
	if err := tmp.File().Chmod(0o644); err != nil {
		return fmt.Errorf("session export: %w", err)
	}
	if err := tmp.Commit(true); err != nil {
		return fmt.Errorf("session export: %w", err)
	}
	return nil
}

// LabelLog gives the entry ref (an id or a unique prefix) of the log at
// path the label text ("" removes it) by appending a label entry: it
// takes the log's writer, so it fails (sessionlog.ErrLocked) while a
// session runs on it (panto session label; /label labels through the
// session). It returns the entry's full id.
func LabelLog(path, ref, text string) (string, error) {
	text = strings.TrimSpace(conversation.ValidText(text))
	if strings.ContainsAny(text, "\r\n") {
		return "", errors.New("session label: a label is one line")
	}
	w, log, err := sessionlog.Open(path)
	if err != nil {
		return "", fmt.Errorf("session label: %w", err)
	}
	defer w.Close()
	id, err := log.Tree().Resolve(strings.TrimSpace(ref))
	if err != nil {
		return "", fmt.Errorf("session label %s: %w", path, err)
	}
	if _, err := w.Append(sessionlog.LabelEntry(id, text)); err != nil {
		return "", fmt.Errorf("session label: %w", err)
	}
	return id, w.Close()
}
