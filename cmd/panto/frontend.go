package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/cmd/panto/internal/tui"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/history"
	"github.com/panto-dev/panto/conversation"
)

// Choosing the front end: print mode (-p, or a prompt piped on stdin;
// text or --mode json), the full-screen UI (stdin and stdout terminals),
// or the line loop. Each is a thin client of the app layer: package main
// loads it (app.Load) and readies the session (App.Prepare), and the
// front end opens and drives it.

func runChat(ctx context.Context, e *env, o *options) error {
	// Print mode: -p, or a prompt piped on stdin.
	printMode := o.printSet || !e.terminal
	switch {
	case o.mode != "text" && o.mode != "json":
		return usageErrorf("--mode %q: want text or json", o.mode)
	case o.mode == "json" && !printMode:
		return usageErrorf("--mode json needs -p TEXT or a prompt on stdin")
	}
	if o.first != "" {
		if o.printSet {
			return usageErrorf("the prompt is given twice: as -p TEXT and as an argument (%q); give one", o.first)
		}
		// Without a terminal, panto "TEXT" is panto -p "TEXT".
		o.print = o.first
	}
	var text string
	if printMode {
		text = o.print
		if !e.terminal {
			piped, err := io.ReadAll(e.stdin)
			if err != nil {
				return fmt.Errorf("read stdin: %w", err)
			}
			if s := strings.TrimRight(string(piped), "\n"); s != "" {
				if text != "" {
					text += "\n\n"
				}
				text += s
			}
		}
		if strings.TrimSpace(text) == "" {
			return usageErrorf("nothing to send: give -p TEXT or pipe a prompt on stdin")
		}
		// Bytes become text here: what is not UTF-8 shows as U+FFFD.
		text = conversation.ValidText(text)
	}
	if !printMode {
		// Before anything reads the project's settings, and before the
		// full-screen UI takes the terminal.
		if err := askProjectTrust(ctx, e); err != nil {
			return err
		}
	}
	if !printMode && fullScreen(e, o) {
		return runUI(ctx, e, o)
	}
	a, err := app.Load(e.appEnv(e.tell), o.appFlags())
	if err != nil {
		return err
	}
	defer a.Close()
	// The line loop asks the user what extensions ask; print mode
	// cannot.
	if err := a.Prepare(!printMode); err != nil {
		return err
	}
	if printMode {
		return lineloop.Print(ctx, a, e.lineOptions(), text, o.mode == "json")
	}
	lo := e.lineOptions()
	lo.First = conversation.ValidText(o.first)
	return lineloop.Run(ctx, a, lo)
}

// fullScreen reports whether the interactive session runs the
// full-screen UI: stdin and stdout are terminals, TERM is not dumb and
// --plain was not given. Otherwise it is the line loop.
func fullScreen(e *env, o *options) bool {
	return e.terminal && e.ttyOut && !o.plain && e.getenv("TERM") != "dumb"
}

// runUI runs the interactive session full screen. What panto would say
// on stderr before the session starts (an untrusted extension skipped, an
// unreadable log skipped) is shown in the UI instead — on stderr when the
// UI does not start; the session opens in the background, so the first
// frame comes before the extensions have started.
func runUI(ctx context.Context, e *env, o *options) error {
	var mu sync.Mutex
	var notices []string
	started := false
	notify := func(n string) {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			notices = append(notices, n)
		}
	}
	said := func() []string {
		mu.Lock()
		defer mu.Unlock()
		started = true
		return notices
	}
	a, err := app.Load(e.appEnv(notify), o.appFlags())
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Prepare(true); err != nil {
		for _, n := range said() {
			e.tell(n)
		}
		return err
	}
	cfg := a.Config()
	// The UI writes to the terminal itself, never through stdout's
	// sanitizer: its styling is the only escape output, and it makes the
	// text it draws safe itself (package tui, termtext).
	var out io.Writer
	if e.termOut != nil {
		out = e.termOut
	}
	var restore func()
	err = tui.Run(ctx, tui.Options{
		Output:        out,
		App:           a,
		BranchSummary: cfg.BranchSummary,
		CWD:           a.Dirs().CWD,
		Home:          e.getenv("HOME"),
		Version:       version,
		Models:        append([]string{cfg.Model}, cfg.Models...),
		Prices:        a.Prices(),
		Theme:         cfg.Theme,
		NoColor:       e.getenv("NO_COLOR") != "",
		AltScreen:     cfg.Screen == config.ScreenAlt,
		NoMouse:       !cfg.MouseTaken(),
		HistoryFile:   history.Path(a.Dirs().State, a.Dirs().CWD),
		Notices:       said(),
		First:         conversation.ValidText(o.first),
		Keys:          cfg.Keys,
		OnInterrupt:   func(f func()) { restore = e.sig.OnInterrupt(f) },
	})
	if restore != nil {
		restore()
	}
	return err
}
