package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/export"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// New opens a new session in the working directory, with the flags and
// extensions of the session Prepare readied: /new. With --no-session
// it is not recorded either. Switch to it with Switch, whose open is
// New for the path "".
func (a *App) New(ctx context.Context) (Session, error) {
	if a.flags.Log.NoSession {
		return a.open(ctx, host.Log{})
	}
	path, id := NewPath(a.dirs.SessionDir(), time.Now())
	return a.open(ctx, host.Log{Path: path, ID: id})
}

// ExportPath is where /export writes a session's HTML export without a
// PATH: panto-<short id>.html in the working directory.
func (a *App) ExportPath(id string) string {
	return filepath.Join(a.dirs.CWD, "panto-"+treeview.Short(id)+".html")
}

// Export writes the HTML export of the current branch of s's log (as
// panto session export writes it) to dst, relative to the working
// directory ("" is ExportPath), whole or not at all, under the rules of
// OutputPath; it returns the path written (/export).
func (a *App) Export(ctx context.Context, s Session, dst string) (string, error) {
	info := s.Info()
	if info.Path == "" {
		return "", host.ErrNotRecorded
	}
	if dst == "" {
		dst = a.ExportPath(info.ID)
	}
	target, err := OutputPath("export", inDir(a.dirs.CWD, dst), info.Path, a.dirs, true)
	if err != nil {
		return "", err
	}
	log, err := sessionlog.Read(info.Path)
	if err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	err = WriteExport(ctx, target, func(w io.Writer) error { return export.HTML(w, log, export.Options{Prices: a.Prices()}) })
	return target, err
}
