package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/tui"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// fullScreen reports whether the interactive session runs the
// full-screen UI: stdin and stdout are terminals, TERM is not dumb and
// --plain was not given. Otherwise it is the line loop.
func fullScreen(e *env, o *options) bool {
	return e.terminal && e.ttyOut && !o.plain && e.getenv("TERM") != "dumb"
}

// runUI runs the interactive session full screen. What panto would say
// on stderr before the session starts (an untrusted extension skipped, an
// unreadable log skipped) is shown in the UI instead; the session opens
// in the background, so the first frame comes before the extensions
// have started.
func runUI(ctx context.Context, e *env, o *options) error {
	if err := checkPromptFlags(o); err != nil {
		return err
	}
	a, err := loadApp(e, o)
	if err != nil {
		return err
	}
	defer a.close()
	var said bytes.Buffer
	quiet := *e
	quiet.stderr = &said
	a.tell(&said)
	path, id, err := pickSession(a.dirs, o, nowFunc(), &said)
	if err != nil {
		return err
	}
	prov, err := a.newProvider(e)
	if err != nil {
		return err
	}
	specs, err := a.extensionSpecs(&quiet, o)
	if err != nil {
		return err
	}
	if err := checkFrom(o.from, path, id); err != nil {
		return err
	}
	open := func(ctx context.Context, l host.Log) (tui.Session, error) {
		cfg := a.hostConfig(e, o, l, specs, prov)
		cfg.Interactive = true
		s, err := host.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	prices := map[string]tui.Price{}
	for m, p := range a.cfg.Prices {
		prices[m] = tui.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	var notices []string
	for _, l := range strings.Split(strings.TrimSpace(said.String()), "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "panto: ")); l != "" {
			notices = append(notices, l)
		}
	}
	// The UI writes to the terminal itself, never through stdout's
	// sanitizer: its styling is the only escape output, and it makes the
	// text it draws safe itself (package tui, termtext).
	var out io.Writer
	if e.termOut != nil {
		out = e.termOut
	}
	var restore func()
	err = tui.Run(ctx, tui.Options{
		Output: out,
		Open: func(ctx context.Context) (tui.Session, error) {
			s, err := open(ctx, host.Log{Path: path, ID: id})
			if err != nil || o.from == "" {
				return s, err
			}
			// --from ID: continue from that entry, as a new branch.
			if _, err := s.MoveTo(ctx, o.from, host.MoveOptions{}); err != nil && !errors.Is(err, host.ErrAlreadyThere) {
				s.Close(ctx)
				return nil, fmt.Errorf("--from %s: %w", o.from, err)
			}
			return s, nil
		},
		Reopen: func(ctx context.Context, path string) (tui.Session, error) {
			if err := mustExist(path); err != nil {
				return nil, err
			}
			return open(ctx, host.Log{Path: path})
		},
		Fork: func(src, ref string) (string, error) {
			id := sessionlog.NewID()
			dst := newSessionPath(filepath.Dir(src), id, nowFunc())
			if _, err := host.Fork(src, ref, dst, id); err != nil {
				return "", err
			}
			return dst, nil
		},
		Sessions: func() ([]tui.SessionItem, error) {
			list, err := dirSessions(a.dirs, func(string) {})
			if err != nil {
				return nil, err
			}
			var out []tui.SessionItem
			for i, r := range summaries(list) {
				it := tui.SessionItem{Path: list[i].path, ID: list[i].id, Err: r.err}
				if r.err == nil {
					it.ID = r.sum.Header.ID
					it.Last = r.sum.LastTime.Local().Format("2006-01-02 15:04")
					it.Messages, it.Branches, it.Labels = r.sum.Messages, r.sum.Branches, len(r.sum.Labels)
					it.First = r.sum.FirstUserText
				}
				out = append(out, it)
			}
			return out, nil
		},
		BranchSummary: a.cfg.BranchSummary,
		CWD:           a.dirs.CWD,
		Home:          e.getenv("HOME"),
		Version:       version,
		Models:        a.cfg.Models,
		Prices:        prices,
		Theme:         a.cfg.Theme,
		NoColor:       e.getenv("NO_COLOR") != "",
		NoMouse:       !a.cfg.Mouse,
		HistoryFile:   history.Path(a.dirs.State, a.dirs.CWD),
		Notices:       notices,
		OnInterrupt:   func(f func()) { restore = e.sig.onInterrupt(f) },
	})
	if restore != nil {
		restore()
	}
	return err
}
