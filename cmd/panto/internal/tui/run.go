package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// Run runs the UI until the user quits, then ends what runs and closes
// the session. It returns why the session could not open, if it could
// not, or why the terminal failed.
func Run(ctx context.Context, o Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, o)
	// A signal (ctx done) quits the UI as Ctrl-D does, so that it leaves
	// the terminal as it found it, the conversation in the scrollback; a
	// program that does not quit within a second is stopped.
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	p := tea.NewProgram(m, ProgramOptions(pctx, o)...)
	if o.OnInterrupt != nil {
		o.OnInterrupt(func() { p.Send(interruptMsg{}) })
	}
	ran := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			p.Send(quitMsg{})
			select {
			case <-time.After(time.Second):
				stop()
			case <-ran:
			}
		case <-ran:
		}
	}()
	_, err := p.Run()
	close(ran)
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // a signal ended panto: the caller knows
	}
	// What the conversation left in the frame goes into the scrollback
	// with the rest, and a line says how to come back to it.
	if m.openErr == nil {
		out := o.Output
		if out == nil {
			out = os.Stdout
		}
		_, _ = io.WriteString(out, m.farewell())
	}
	if cerr := m.Shutdown(ctx); err == nil {
		err = cerr
	}
	return err
}

// ProgramOptions are the options Run starts bubbletea with: panto's own
// signal handling, a frame rate that makes the first frame come sooner
// (it waits for the first tick), no colour for NO_COLOR, the terminal
// read through the paste guard.
func ProgramOptions(ctx context.Context, o Options) []tea.ProgramOption {
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler(), tea.WithFPS(120)}
	if o.NoColor {
		// colorprofile reads NO_COLOR as a boolean, so NO_COLOR=yes
		// would keep colour: no-color.org says any value turns it off.
		opts = append(opts, tea.WithColorProfile(colorprofile.ASCII))
	}
	// The terminal is read through pasteGuard: a paste's text never
	// ends the paste, so it never sends anything.
	input := o.Input
	if input == nil {
		input = os.Stdin
	}
	opts = append(opts, tea.WithInput(newPasteGuard(input)))
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	return opts
}

// Shutdown ends what the UI started, once the program has returned: the
// questions still up are dismissed, a running turn is interrupted, and
// the session is closed — the one in use, after a /resume or /fork too —
// which waits for the turn to record what it can before the log closes.
// No question shows from then on: one asked meanwhile (a session_end
// hook's) is dismissed as it comes, so closing never waits on a user.
// It returns the error that kept the session from opening.
func (m *Model) Shutdown(ctx context.Context) error {
	m.closing.Store(true)
	m.dismissAll()
	if m.cancel != nil {
		m.cancel()
	}
	if m.op == nil {
		return m.openErr
	}
	select {
	case <-m.op.done:
	default:
		m.op.cancel()
		<-m.op.done
	}
	if m.op.err != nil {
		return m.op.err
	}
	s := m.last
	if s == nil {
		s = m.op.sess // opened, never shown
	}
	if s == nil {
		return nil
	}
	// What the session says while it closes is read to its end (the
	// subscription ends after Close's last event), and every question in
	// it dismissed.
	evs := s.Subscribe(context.WithoutCancel(ctx))
	if m.unsubscribe != nil {
		m.unsubscribe()
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range evs {
			dismissIfClosing(&m.closing, ev)
		}
	}()
	// With ctx done (a signal) the extensions are stopped at once.
	err := s.Close(ctx)
	<-drained
	return err
}

// OpenErr is why the session did not open, once it was tried.
func (m *Model) OpenErr() error { return m.openErr }
