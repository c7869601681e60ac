package main

import (
	"bytes"
	"context"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/tui"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
	"github.com/panto-dev/panto/host"
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
	cfg := a.hostConfig(e, o, host.Log{Path: path, ID: id}, specs, prov)
	cfg.Interactive = true
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
	var restore func()
	err = tui.Run(ctx, tui.Options{
		Open: func(ctx context.Context) (tui.Session, error) {
			s, err := host.Open(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		CWD:         a.dirs.CWD,
		Home:        e.getenv("HOME"),
		Version:     version,
		Models:      a.cfg.Models,
		Prices:      prices,
		Theme:       a.cfg.Theme,
		NoColor:     e.getenv("NO_COLOR") != "",
		NoMouse:     !a.cfg.Mouse,
		HistoryFile: history.Path(a.dirs.State, a.dirs.CWD),
		Notices:     notices,
		OnInterrupt: func(f func()) { restore = e.sig.onInterrupt(f) },
	})
	if restore != nil {
		restore()
	}
	return err
}
