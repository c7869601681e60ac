package lineloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/attach"
	"github.com/panto-dev/panto/cmd/panto/internal/signals"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// Options are what the line front ends write to and read from.
type Options struct {
	// Stdin is what the user types, in the line loop; print mode reads
	// nothing from it (package main read the piped prompt).
	Stdin io.Reader
	// Stdout and Stderr are panto's, sanitized at a terminal: the reply
	// and the commands' output on Stdout, notices and progress on Stderr
	// (progress on Stdout in the line loop).
	Stdout, Stderr io.Writer
	// JSON is where --mode json writes: stdout, made safe for a
	// terminal its own way (termtext.JSON).
	JSON io.Writer
	// Terminal is stdout without the sanitizer, for panto's own controls
	// (bracketed paste while a question is up); nil when stdout is not a
	// terminal.
	Terminal io.Writer
	// Signals routes Ctrl-C to the turn or the prompt.
	Signals *signals.Router
	// Version is panto's, for the line loop's banner.
	Version string
	// First is sent as the line loop's first message (panto "TEXT").
	First string
}

// Print runs print mode on the session the app readied (app.Prepare):
// one turn with text, or — when text is a slash command — that command,
// with no model call. Its events are shown as text (the reply on
// stdout, the rest on stderr), or with asJSON every event as a JSON line
// (docs/cli.md, "JSON output"). Nobody answers an extension's question.
func Print(ctx context.Context, a *app.App, o Options, text string, asJSON bool) error {
	var v view
	var jv *jsonView
	if asJSON {
		jv = newJSONView(o.JSON)
		v = jv
	} else {
		v = newTextView(o, false)
	}
	c, err := start(ctx, a, o, v)
	if err != nil {
		return err
	}
	defer c.close()
	if jv != nil {
		jv.session(c.sess.Info())
	}
	if cmd, ok := app.ParseCommand(text); ok {
		// What Open told first, then the command, in order.
		c.showStart()
		c.tellClashes()
		err := c.command(ctx, cmd.Name, cmd.Args)
		if err != nil && jv != nil {
			jv.show(host.Error{Err: err})
		}
		return err
	}
	return c.turn(ctx, text)
}

// Run runs the interactive line loop on the session the app readied
// (app.Prepare with interactive set), until the user leaves.
func Run(ctx context.Context, a *app.App, o Options) error {
	c, err := start(ctx, a, o, newTextView(o, true))
	if err != nil {
		return err
	}
	defer c.close()
	c.once.Do(c.follow)
	c.tellClashes()
	return c.loop(ctx)
}

// chat is a running session and the view that shows its events: print
// mode, the line loop, and --mode json are consumers of the session and
// nothing more.
type chat struct {
	// ctx is the run's root context: done when a signal ends panto.
	ctx  context.Context
	o    Options
	app  *app.App
	sess app.Session
	view view
	// in is what the user types, in the line loop; nil in print mode,
	// where nobody answers an extension's question.
	in *Input
	// leaving is set when the user left at a question (Ctrl-D, /quit):
	// the loop ends once the turn has.
	leaving bool
	// events is the session's subscription (attach), where every event
	// comes from; unsubscribe ends it. A turn reads it itself; between
	// turns follow's goroutine shows what comes, and hold is how a turn
	// borrows the events from it (nil until follow runs).
	events      <-chan host.Event
	unsubscribe context.CancelFunc
	hold        chan chan struct{}
	// moved is set when --from moved the leaf as the session opened: its
	// Moved event follows the start's.
	moved bool
	// drained is closed once the session's events are all shown (its
	// subscription has ended); once starts follow.
	drained chan struct{}
	once    *sync.Once
}

// view shows a session's events.
type view interface {
	// show shows one event; it may be called from two goroutines (a turn's
	// events, and the session's between turns).
	show(ev host.Event)
	// output shows what a command printed.
	output(command, text string)
}

// start opens the session the app readied, shown by v.
func start(ctx context.Context, a *app.App, o Options, v view) (*chat, error) {
	sess, moved, err := a.Open(ctx)
	if err != nil {
		return nil, err
	}
	c := &chat{ctx: ctx, o: o, app: a, view: v}
	c.attach(sess)
	c.moved = moved
	return c, nil
}

// attach makes sess the chat's session, its events read from now on
// (the first subscription: Open's come first).
func (c *chat) attach(sess app.Session) {
	if c.unsubscribe != nil {
		c.unsubscribe() // the session before, closed: its events have ended
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.sess, c.events, c.unsubscribe = sess, sess.Subscribe(ctx), cancel
	c.hold, c.drained, c.once, c.moved = nil, make(chan struct{}), new(sync.Once), false
}

// showStart shows the events of the session's start (and of a --from
// move): print mode shows them before a command's output.
func (c *chat) showStart() {
	opened := false
	for ev := range c.events {
		c.view.show(ev)
		switch ev.(type) {
		case host.Opened:
			opened = true
		case host.Moved:
			c.moved = false
		}
		if opened && !c.moved {
			return
		}
	}
}

// follow shows the session's events between turns from now on, until
// the session has closed; a turn borrows them (borrow). Print mode calls
// it after its turn, which shows what came before it.
func (c *chat) follow() {
	hold := make(chan chan struct{})
	c.hold = hold
	events, drained := c.events, c.drained
	go func() {
		defer close(drained)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					return
				}
				if o, ok := ev.(host.Overflow); ok {
					events = c.resubscribe(o)
					continue
				}
				if q, ok := ev.(host.Question); ok {
					// Between turns nobody is asked: the line loop
					// answers questions during a turn only.
					q.Dismiss()
					continue
				}
				c.view.show(ev)
			case back := <-hold:
				<-back            // a turn reads them until it gives them back
				events = c.events // a new subscription when it overflowed
			}
		}
	}()
}

// borrow takes the session's events from follow's goroutine, when it
// runs, for a turn to read; give them back when the turn has ended.
func (c *chat) borrow() (giveBack func()) {
	if c.hold == nil {
		return func() {}
	}
	back := make(chan struct{})
	select {
	case c.hold <- back:
		return func() { close(back) }
	case <-c.drained:
		return func() {}
	}
}

func (c *chat) close() {
	c.once.Do(c.follow) // the events of Close

	// With ctx done (a signal ends panto) there is no session_end, and the
	// extensions are stopped at once.
	if err := c.sess.Close(c.ctx); err != nil {
		fmt.Fprintf(c.o.Stderr, "panto: close session: %v\n", err)
	}
	<-c.drained
	c.unsubscribe()
}

// images are the blocks of the images text names with @path (relative
// to the working folder), each said on stderr by its name, size and
// dimensions; an error, and nothing sent, when one cannot be attached.
func (c *chat) images(text string) ([]conversation.Block, error) {
	dir := ""
	if c.app != nil {
		dir = c.app.Dirs().CWD
	}
	ims, err := attach.Mentions(text, dir)
	if err != nil {
		return nil, fmt.Errorf("not sent: %w", err)
	}
	var out []conversation.Block
	for _, im := range ims {
		fmt.Fprintf(c.o.Stderr, "panto: attached image %s\n", termtext.Line(im.Label()))
		out = append(out, im.Blocks()...)
	}
	return out, nil
}

// turn runs one turn, shown as it happens. In the line loop the
// extensions' questions are asked as they come (ask.go), while the
// turn's other events go on being shown.
func (c *chat) turn(ctx context.Context, text string) error {
	return c.turnWith(ctx, host.TurnInput{Text: text})
}

// turnWith runs one turn whose message panto added to (a template's
// expansion, a skill), shown as it happens.
func (c *chat) turnWith(ctx context.Context, in host.TurnInput) error {
	if in.Attached == nil {
		attached, err := c.images(in.Text)
		if err != nil {
			return err
		}
		in.Attached = attached
	}
	ctx, stop := c.o.Signals.Foreground(ctx)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ask := &asking{c: c, cancel: cancel}
	defer ask.done()
	giveBack := c.borrow()
	defer giveBack()
	start := func() error { return c.sess.Turn(ctx, in.Text) }
	if tw, ok := c.sess.(app.TurnWith); ok && (len(in.Added) > 0 || in.Model != "" || len(in.Attached) > 0) {
		start = func() error { return tw.TurnWith(ctx, in) }
	}
	if err := start(); err != nil {
		return err
	}
	var end *host.TurnEnd
	events, done := c.events, ctx.Done()
	for events != nil {
		var typed <-chan struct{}
		if ask.open() {
			typed = c.in.Ready()
		}
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			switch ev := ev.(type) {
			case host.Overflow:
				events = c.resubscribe(ev)
				if !c.sess.Busy() {
					// Its TurnEnd was among the events missed: what the
					// turn recorded is in the log all the same.
					return nil
				}
			case host.Question:
				ask.add(ev)
			case host.QuestionClosed:
				ask.withdrawn(ev)
			default:
				c.view.show(ev)
				if e, ok := ev.(host.TurnEnd); ok {
					end, events = &e, nil // the turn is over
				}
			}
		case <-typed:
			ask.lines()
		case <-ask.expiry():
			ask.expire()
		case <-done:
			done = nil
			ask.interrupted()
		}
	}
	if end == nil {
		return errors.New("the session's events ended before the turn did")
	}
	switch err := end.Err; {
	case err == nil:
		if end.StopReason == host.StopMaxTokens {
			fmt.Fprintln(c.o.Stderr, "panto: the reply was cut at max_tokens")
		}
		return nil
	case errors.Is(err, host.ErrMaxSteps):
		fmt.Fprintf(c.o.Stderr, "panto: %v; send a message to go on (config max_steps)\n", err)
		return nil
	default:
		if cause := context.Cause(ctx); errors.Is(cause, signals.ErrInterrupted) || errors.As(cause, new(*signals.Stopped)) {
			return fmt.Errorf("%w (no half reply was recorded; tool calls cut short have error results)", cause)
		}
		if errors.Is(err, host.ErrTruncated) {
			// The decoder's words ("decode stream: … unexpected EOF")
			// read like a bug of panto's: say what happened.
			return fmt.Errorf("the provider's stream ended before the reply did: the half reply was not recorded (the messages before it were); send a message to try again (%w)", err)
		}
		return err
	}
}

// resubscribe reads the session afresh after its subscription ended with
// Overflow (the display fell more than host.MaxPending events behind, a
// terminal stopped with Ctrl-S, a reader of --mode json that stopped
// reading): it says so, as a notice, and subscribes again. What came in
// between is not shown; the log has all of it.
func (c *chat) resubscribe(o host.Overflow) <-chan host.Event {
	c.unsubscribe()
	ctx, cancel := context.WithCancel(context.Background())
	c.events, c.unsubscribe = c.sess.Subscribe(ctx), cancel
	c.view.show(host.Notice{Level: host.NoticeWarning, Text: fmt.Sprintf(
		"the display fell behind the session by %d events: what came after them until now is not shown (the session log has it all)", o.Pending)})
	return c.events
}

// command runs a built-in or extension slash command, without the model.
func (c *chat) command(ctx context.Context, name, args string) error {
	var out strings.Builder
	var err error
	if f := builtinCommands[name]; f != nil {
		err = f(c, ctx, args, &out)
	} else {
		var output string
		output, err = c.sess.RunCommand(ctx, name, args)
		if output != "" {
			out.WriteString(strings.TrimRight(output, "\n") + "\n")
		}
		if errors.Is(err, host.ErrNoCommand) {
			// Not an extension's: a skill, a template, or nothing.
			in, ok, xerr := c.app.Expand(app.Command{Name: name, Args: args}, "/"+name+" "+args)
			switch {
			case xerr != nil:
				err = xerr
			case ok:
				return c.turnWith(ctx, in)
			default:
				err = fmt.Errorf("unknown command /%s (see /help)", name)
			}
		}
	}
	if out.Len() > 0 {
		c.view.output(name, out.String())
	}
	return err
}

// leaveWindow is how soon after a Ctrl-C a second one at the prompt
// leaves the line loop.
const leaveWindow = 3 * time.Second

// loop is the line-mode interactive session.
func (c *chat) loop(ctx context.Context) error {
	info := c.sess.Info()
	where := info.Path
	if where == "" {
		where = "not recorded (--no-session)"
	}
	out, errw := c.o.Stdout, c.o.Stderr
	fmt.Fprintf(out, "panto %s · %s/%s · session %s\n/help for commands, Ctrl-D to quit.\n",
		c.o.Version, info.Provider, info.Model, where)
	// A Ctrl-C at the prompt reminds how to leave, and a second one in a
	// row leaves; during a turn the turn's own handler takes it (a second
	// one there ends panto). SIGTERM and SIGHUP end the loop (ctx).
	intr := make(chan struct{}, 1)
	defer c.o.Signals.OnInterrupt(func() {
		select {
		case intr <- struct{}{}:
		default:
		}
	})()
	c.in = NewInput(c.o.Stdin)
	// A second Ctrl-C soon after the first — at the prompt, or the one
	// that stopped a turn — with no line typed between, leaves.
	var interrupted time.Time
	if first := strings.TrimSpace(c.o.First); first != "" {
		fmt.Fprintf(out, "> %s\n", first)
		if err := c.turn(ctx, first); err != nil {
			fmt.Fprintf(errw, "panto: %v\n", err)
		}
		if c.leaving {
			return nil
		}
	}
	for {
		fmt.Fprint(out, "> ")
		termtext.Flush(out, errw)
		typed, ok := c.in.Next()
		for !ok {
			if ended, err := c.in.Done(); ended {
				fmt.Fprintln(out)
				if u := (*UnsentError)(nil); errors.As(err, &u) {
					fmt.Fprintf(errw, "panto: %v\n", u)
					return nil
				}
				return err
			}
			select {
			case <-c.in.Ready():
			case <-intr:
				if !interrupted.IsZero() && time.Since(interrupted) < leaveWindow {
					fmt.Fprintln(out)
					return nil
				}
				interrupted = time.Now()
				fmt.Fprint(out, "\n(Ctrl-C again now, Ctrl-D or /quit to leave)\n> ")
				termtext.Flush(out)
			case <-ctx.Done():
				fmt.Fprintln(out)
				return context.Cause(ctx)
			}
			typed, ok = c.in.Next()
		}
		interrupted = time.Time{}
		line := conversation.ValidText(strings.TrimSpace(typed.Text))
		if line == "" {
			continue
		}
		if cmd, ok := app.ParseCommand(line); ok {
			if cmd.Name == "quit" || cmd.Name == "exit" {
				return nil
			}
			if err := c.command(ctx, cmd.Name, cmd.Args); err != nil {
				fmt.Fprintf(errw, "panto: %v\n", err)
			}
			continue
		}
		if err := c.turn(ctx, line); err != nil {
			fmt.Fprintf(errw, "panto: %v\n", err)
			if errors.Is(err, signals.ErrInterrupted) {
				interrupted = time.Now()
			}
		}
		if c.leaving {
			return nil
		}
	}
}

// tellClashes tells the templates a command's name takes (the command
// wins), on stderr.
func (c *chat) tellClashes() {
	_, notices := c.app.OfferedTemplates(builtinNames(), c.sess)
	for _, n := range notices {
		fmt.Fprintf(c.o.Stderr, "panto: %s\n", termtext.Line(n))
	}
}
