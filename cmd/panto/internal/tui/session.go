package tui

import (
	"context"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
)

// Session is what the UI needs of a running session: the one every front
// end drives (app.Session). *host.Session is one, and tests use a fake.
type Session = app.Session

// SessionItem is a session /resume offers (app.Store.List).
type SessionItem = app.SessionItem

// App is the app layer as the UI sees it: what opens the session, lists
// the directory's other sessions, opens one in the place of the one in
// use, and forks. *app.App is one; the tests fake it. Nothing else of
// the app reaches the UI: its rules (app.ParseCommand, app.Jump,
// app.Switch) are functions it calls.
type App interface {
	// Open opens the session, once, in the background, so the first
	// frame never waits for the extensions to start. (moved: a --from
	// move, whose Moved event comes on the subscription like any other.)
	Open(ctx context.Context) (s Session, moved bool, err error)
	// Sessions lists this directory's sessions for /resume, newest first;
	// AllSessions every directory's (Ctrl-A in the picker).
	Sessions() ([]SessionItem, error)
	AllSessions() ([]SessionItem, error)
	// Reopen opens the log at path as a resume, with the same flags and
	// extensions: /resume and /fork switch to it (app.Switch).
	Reopen(ctx context.Context, path string) (Session, error)
	// Fork copies the path of s's log up to the entry ref names ("" the
	// leaf) into a new session's log (/fork).
	Fork(ctx context.Context, s Session, ref string) (app.Forked, error)
	// New opens a new session in this directory, with the same flags
	// and extensions (/new).
	New(ctx context.Context) (Session, error)
	// Export writes the HTML export of s's log to path ("" the default
	// place) and returns the path written (/export).
	Export(ctx context.Context, s Session, path string) (string, error)
}

var _ App = (*app.App)(nil)
