package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// chat is a running session and the view that shows its events: print
// mode, the line loop, and --mode json are consumers of host.Session and
// nothing more.
type chat struct {
	// ctx is the run's root context: done when a signal ends panto.
	ctx  context.Context
	e    *env
	app  *app
	sess *host.Session
	view view
	// in is what the user types, in the line loop; nil in print mode,
	// where nobody answers an extension's question.
	in *lineloop.Input
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
	// reopen opens the session of another log in this one's place, with
	// the same flags and extensions (/fork switches to the fork).
	reopen func(ctx context.Context, path string) (*host.Session, error)
}

// view shows a session's events.
type view interface {
	// show shows one event; it may be called from two goroutines (a turn's
	// events, and the session's between turns).
	show(ev host.Event)
	// output shows what a command printed.
	output(command, text string)
}

func runChat(ctx context.Context, e *env, o *options) error {
	// Print mode: -p, or a prompt piped on stdin.
	printMode := o.printSet || !e.terminal
	switch {
	case o.mode != "text" && o.mode != "json":
		return usageErrorf("--mode %q: want text or json", o.mode)
	case o.mode == "json" && !printMode:
		return usageErrorf("--mode json needs -p TEXT or a prompt on stdin")
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
	var v view
	if o.mode == "json" {
		v = newJSONView(e.jsonStdout())
	} else {
		v = newTextView(e, !printMode)
	}
	c, err := startChat(ctx, e, o, v, !printMode)
	if err != nil {
		return err
	}
	defer c.close()
	if printMode {
		if name, args, ok := slashCommand(text); ok {
			// What Open told first, then the command, in order.
			c.showStart()
			err := c.command(ctx, name, args)
			if err != nil {
				if jv, ok := c.view.(*jsonView); ok {
					jv.show(host.Error{Err: err})
				}
			}
			return err
		}
		return c.turn(ctx, text)
	}
	c.once.Do(c.follow)
	return c.loop(ctx)
}

// startChat opens the session the flags and config say, shown by v.
func startChat(ctx context.Context, e *env, o *options, v view, interactive bool) (*chat, error) {
	if err := checkPromptFlags(o); err != nil {
		return nil, err // before a session log is created
	}
	a, err := loadApp(e, o)
	if err != nil {
		return nil, err
	}
	a.tell(e.stderr)
	c := &chat{ctx: ctx, e: e, app: a, view: v}
	path, id, err := pickSession(a.dirs, o, nowFunc(), e.stderr)
	if err != nil {
		a.close()
		return nil, err
	}
	if err := checkFrom(o.from, path, id); err != nil {
		a.close()
		return nil, err
	}
	prov, err := a.newProvider(e)
	if err != nil {
		a.close()
		return nil, err
	}
	specs, err := a.extensionSpecs(e, o)
	if err != nil {
		a.close()
		return nil, err
	}
	open := func(ctx context.Context, l host.Log) (*host.Session, error) {
		cfg := a.hostConfig(e, o, l, specs, prov)
		// The line loop asks the user what extensions ask; print mode
		// cannot.
		cfg.Interactive = interactive
		return host.Open(ctx, cfg)
	}
	c.reopen = func(ctx context.Context, path string) (*host.Session, error) {
		if err := mustExist(path); err != nil {
			return nil, err
		}
		return open(ctx, host.Log{Path: path})
	}
	sess, err := open(ctx, host.Log{Path: path, ID: id})
	if err != nil {
		a.close()
		return nil, err
	}
	c.attach(sess)
	if o.from != "" {
		// -p TEXT --from ID: continue from that entry, as a new branch.
		// Print mode never writes a branch summary.
		_, err := c.sess.MoveTo(ctx, o.from, host.MoveOptions{})
		if err != nil && !errors.Is(err, host.ErrAlreadyThere) {
			c.close()
			return nil, fmt.Errorf("--from %s: %w", o.from, err)
		}
		c.moved = err == nil
	}
	if jv, ok := v.(*jsonView); ok {
		jv.session(c.sess.Info())
	}
	return c, nil
}

// attach makes sess the chat's session, its events read from now on
// (the first subscription: Open's come first).
func (c *chat) attach(sess *host.Session) {
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
				if q, ok := ev.(host.Question); ok {
					// Between turns nobody is asked: the line loop
					// answers questions during a turn only.
					q.Dismiss()
					continue
				}
				c.view.show(ev)
			case back := <-hold:
				<-back // a turn reads them until it gives them back
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
		fmt.Fprintf(c.e.stderr, "panto: close session: %v\n", err)
	}
	<-c.drained
	c.unsubscribe()
	c.app.close()
}

// turn runs one turn, shown as it happens. In the line loop the
// extensions' questions are asked as they come (linequestion.go), while
// the turn's other events go on being shown.
func (c *chat) turn(ctx context.Context, text string) error {
	ctx, stop := c.e.sig.foreground(ctx)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ask := &asking{c: c, cancel: cancel}
	defer ask.done()
	giveBack := c.borrow()
	defer giveBack()
	if err := c.sess.Turn(ctx, text); err != nil {
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
		return errors.New("the session's events ended before the turn did (the display fell too far behind)")
	}
	switch err := end.Err; {
	case err == nil:
		if end.StopReason == host.StopMaxTokens {
			fmt.Fprintln(c.e.stderr, "panto: the reply was cut at max_tokens")
		}
		return nil
	case errors.Is(err, host.ErrMaxSteps):
		fmt.Fprintf(c.e.stderr, "panto: %v; send a message to go on (config max_steps)\n", err)
		return nil
	default:
		if cause := context.Cause(ctx); errors.Is(cause, errInterrupted) || errors.As(cause, new(*stopSignal)) {
			return fmt.Errorf("%w (no half reply was recorded; tool calls cut short have error results)", cause)
		}
		return err
	}
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
			err = fmt.Errorf("unknown command /%s (see /help)", name)
		}
	}
	if out.Len() > 0 {
		c.view.output(name, out.String())
	}
	return err
}

// builtinCommands are the slash commands of panto itself; /help lists
// them.
var builtinCommands = map[string]func(c *chat, ctx context.Context, args string, out io.Writer) error{
	"help":    (*chat).help,
	"prompt":  (*chat).showPrompt,
	"session": (*chat).showSession,
	"compact": (*chat).compact,
	"model":   (*chat).model,
	"tree":    (*chat).tree,
	"label":   (*chat).label,
	"fork":    (*chat).fork,
	"resume":  (*chat).resume,
}

// slashCommand splits "/name args". A first word with another slash in it
// ("/usr/bin is ...") is text, not a command.
func slashCommand(line string) (name, args string, ok bool) {
	if !strings.HasPrefix(line, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(strings.TrimSpace(line[1:]), " ")
	return name, strings.TrimSpace(args), name != "" && !strings.Contains(name, "/")
}

const interactiveHelp = `Type a message and press Enter to send it. Commands:
  /prompt    show the effective system prompt
  /session   show the session log in use
  /compact   summarise older messages to free context (the prompt stays)
  /model [NAME]  show the models to choose from, or switch to NAME
  /tree      show the session tree: short ids, labels, prompt changes
  /tree ID   continue from entry ID as a new branch (--summary, --no-summary)
  /label [ID] TEXT  label an entry (the current one without ID; empty TEXT removes it)
  /fork [ID]  copy the path up to ID (or here) to a new session, and switch to it
  /resume [N|ID]  list this directory's sessions, or switch to one
  /help      this help
  /quit      leave (or Ctrl-D)
Ctrl-C stops a reply that is streaming; Ctrl-C twice leaves.
An extension's question takes a line typed after it appeared; a confirm
takes the word yes.
`

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
	fmt.Fprintf(c.e.stdout, "panto %s · %s/%s · session %s\n/help for commands, Ctrl-D to quit.\n",
		version, info.Provider, info.Model, where)
	// A Ctrl-C at the prompt reminds how to leave, and a second one in a
	// row leaves; during a turn the turn's own handler takes it (a second
	// one there ends panto). SIGTERM and SIGHUP end the loop (ctx).
	intr := make(chan struct{}, 1)
	defer c.e.sig.onInterrupt(func() {
		select {
		case intr <- struct{}{}:
		default:
		}
	})()
	c.in = lineloop.NewInput(c.e.stdin)
	// A second Ctrl-C soon after the first — at the prompt, or the one
	// that stopped a turn — with no line typed between, leaves.
	var interrupted time.Time
	for {
		fmt.Fprint(c.e.stdout, "> ")
		flush(c.e.stdout, c.e.stderr)
		typed, ok := c.in.Next()
		for !ok {
			if ended, err := c.in.Done(); ended {
				fmt.Fprintln(c.e.stdout)
				if u := (*lineloop.UnsentError)(nil); errors.As(err, &u) {
					fmt.Fprintf(c.e.stderr, "panto: %v\n", u)
					return nil
				}
				return err
			}
			select {
			case <-c.in.Ready():
			case <-intr:
				if !interrupted.IsZero() && time.Since(interrupted) < leaveWindow {
					fmt.Fprintln(c.e.stdout)
					return nil
				}
				interrupted = time.Now()
				fmt.Fprint(c.e.stdout, "\n(Ctrl-C again now, Ctrl-D or /quit to leave)\n> ")
				flush(c.e.stdout)
			case <-ctx.Done():
				fmt.Fprintln(c.e.stdout)
				return context.Cause(ctx)
			}
			typed, ok = c.in.Next()
		}
		interrupted = time.Time{}
		line := typed.Text
		line = conversation.ValidText(strings.TrimSpace(line))
		if line == "" {
			continue
		}
		if name, args, ok := slashCommand(line); ok {
			if name == "quit" || name == "exit" {
				return nil
			}
			if err := c.command(ctx, name, args); err != nil {
				fmt.Fprintf(c.e.stderr, "panto: %v\n", err)
			}
			continue
		}
		if err := c.turn(ctx, line); err != nil {
			fmt.Fprintf(c.e.stderr, "panto: %v\n", err)
			if errors.Is(err, errInterrupted) {
				interrupted = time.Now()
			}
		}
		if c.leaving {
			return nil
		}
	}
}

func (c *chat) help(_ context.Context, _ string, out io.Writer) error {
	fmt.Fprint(out, interactiveHelp)
	cmds := c.sess.Commands()
	if len(cmds) > 0 {
		fmt.Fprintln(out, "Extension commands:")
	}
	for _, cmd := range cmds {
		usage := "/" + cmd.Name
		if cmd.Usage != "" {
			usage += " " + cmd.Usage
		}
		fmt.Fprintf(out, "  %-24s %s (%s)\n", usage, cmd.Description, cmd.Extension)
	}
	return nil
}

func (c *chat) compact(ctx context.Context, _ string, out io.Writer) error {
	ctx, stop := c.e.sig.foreground(ctx)
	defer stop()
	res, err := c.sess.Compact(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted: the next request sends %d messages instead of %d; the system prompt is unchanged\n",
		res.MessagesAfter, res.MessagesBefore)
	return nil
}

func (c *chat) showPrompt(_ context.Context, _ string, out io.Writer) error {
	blocks := blocksOf(c.sess.EffectiveSystem())
	fmt.Fprintf(out, "Effective system prompt: %d block(s)\n", len(blocks))
	writeBlocks(out, blocks)
	return nil
}

func (c *chat) showSession(_ context.Context, _ string, out io.Writer) error {
	info := c.sess.Info()
	if info.Path == "" {
		fmt.Fprintf(out, "session %s is not recorded (--no-session)\n", info.ID)
		return nil
	}
	fmt.Fprintf(out, "session %s\nlog %s\nmessages %d\n", info.ID, info.Path, c.sess.MessageCount())
	return nil
}

// model lists the models to choose from (the one in use marked), or
// switches to the one named: by name, or by its number in the list.
func (c *chat) model(_ context.Context, args string, out io.Writer) error {
	info := c.sess.Info()
	models := c.models(info.Model)
	if args == "" {
		for i, m := range models {
			mark := " "
			if m == info.Model {
				mark = "*"
			}
			fmt.Fprintf(out, "%s %d. %s\n", mark, i+1, m)
		}
		fmt.Fprintf(out, "provider %s; /model NAME (or a number) switches; config models = [...] lists more\n", info.Provider)
		return nil
	}
	name := args
	if n, err := strconv.Atoi(args); err == nil {
		if n < 1 || n > len(models) {
			return fmt.Errorf("/model %d: want 1 to %d", n, len(models))
		}
		name = models[n-1]
	}
	if err := c.sess.SetModel(name); err != nil {
		return fmt.Errorf("/model: %w", err)
	}
	fmt.Fprintf(out, "model %s (recorded; a resume goes on with it)\n", name)
	return nil
}

// models are the models /model offers: the one in use, then the
// configured list.
func (c *chat) models(current string) []string {
	out := []string{current}
	for _, m := range c.app.cfg.Models {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// checkFrom checks --from against the log it names an entry of, before
// the session opens: a move that would fail records nothing (no
// lifecycle entry, no re-seed, no new log).
func checkFrom(from, path, id string) error {
	if from == "" {
		return nil
	}
	if path == "" || id != "" {
		return usageErrorf("--from %s: name the session to continue (--session FILE, -c or --resume ID)", from)
	}
	tree, err := sessionlog.Scan(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--from %s: %s does not exist: --from continues a recorded session", from, path)
	}
	if err != nil {
		return fmt.Errorf("--from %s: %w", from, err)
	}
	if _, err := host.CheckMove(tree, from); err != nil {
		return fmt.Errorf("--from %s: %w", from, err)
	}
	return nil
}

// mustExist refuses to switch to a log that is gone (moved or deleted
// since it was listed): opening it would start a new session there.
func mustExist(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the session log %s no longer exists", path)
	} else if err != nil {
		return err
	}
	return nil
}
