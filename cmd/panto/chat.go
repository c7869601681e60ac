package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/sysprompt"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/provider"
	"github.com/panto-dev/panto/host/render"
	"github.com/panto-dev/panto/sdk/pb"
	"github.com/panto-dev/panto/serializers"
)

// chat is a running conversation with a model, in print or interactive
// mode.
type chat struct {
	// ctx is the run's root context.
	ctx  context.Context
	e    *env
	app  *app
	sess *host.Session
	exts *extension.Manager // nil: none loaded
	prov provider.Provider
	req  serializers.Request
	// userPrompt are the USER_PROMPT.md texts put before every user
	// message, as blocks of it.
	userPrompt []string
	// interactive is set in interactive mode; print mode keeps stdout for
	// the reply alone.
	interactive bool
}

func runChat(ctx context.Context, e *env, o *options) error {
	// Print mode: -p, or a prompt piped on stdin.
	printMode := o.printSet || !e.terminal
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

	c, err := startChat(ctx, e, o)
	if err != nil {
		return err
	}
	defer c.close()
	if printMode {
		return c.printTurn(ctx, text)
	}
	c.interactive = true
	return c.loop(ctx)
}

func startChat(ctx context.Context, e *env, o *options) (*chat, error) {
	if err := checkPromptFlags(o); err != nil {
		return nil, err // before a session log is created
	}
	a, err := loadApp(e, o)
	if err != nil {
		return nil, err
	}
	c := &chat{e: e, app: a, ctx: ctx}
	ok := false
	defer func() {
		if !ok {
			c.close()
		}
	}()
	path, id, err := pickSession(a.dirs, o, time.Now(), e.stderr)
	if err != nil {
		return nil, err
	}
	if c.prov, err = a.newProvider(e); err != nil {
		return nil, err
	}
	if c.sess, err = host.OpenSession(path, a.dirs.CWD, id); err != nil {
		return nil, err
	}
	for _, w := range c.sess.Warnings {
		a.logger.Warn(w)
		fmt.Fprintf(e.stderr, "panto: warning: %s\n", w)
	}
	var names []string
	extVars := map[string]string{}
	if !o.noExtensions {
		cands, err := discover(a.dirs, o.extensions)
		if err != nil {
			return nil, err
		}
		specs := a.withEnviron(e, withoutDisabled(runnable(cands, e.stderr), a.cfg.DisabledExtensions))
		if len(specs) > 0 {
			if e.maxProcs != nil && e.getenv("GOMAXPROCS") == "" {
				// The log is read (on every core); from here panto mostly
				// waits on the model, the user and its extensions. With one
				// P the runtime stops spinning a second thread at each
				// hand-off inside an extension call, CPU the extensions
				// need: a hook round trip takes about half the time.
				// GOMAXPROCS in the environment wins.
				e.maxProcs(1)
			}
			c.exts = extension.Start(ctx, specs, c.sess, a.extOptions(e, c.sess.ID()))
			if err := ctx.Err(); err != nil {
				return nil, context.Cause(ctx) // a signal during the start
			}
			c.exts.Disable(a.cfg.DisabledExtensions)
			names = c.exts.Names()
			extVars = c.exts.Variables()
			c.sess.OnSystemChange(c.exts.SystemChanged)
			c.sess.SetHooks(c.exts)
		}
	}
	vars := a.vars(e, extVars)
	c.sess.SetRenderer(func(text, source string) (string, error) { return render.Render(text, source, vars) })
	blocks, err := sysprompt.Resolve(a.dirs, sysprompt.Flags{System: o.systemPrompt, Appends: o.appendSystem, Vars: vars})
	if err != nil {
		return nil, err
	}
	if c.userPrompt, err = sysprompt.UserPrompt(a.dirs, vars); err != nil {
		return nil, err
	}
	res, err := c.sess.Seed(sysprompt.Texts(blocks), names)
	if err != nil {
		return nil, err
	}
	c.sess.SetMaxSteps(a.cfg.MaxSteps)
	window := a.cfg.ContextWindow
	if window == 0 {
		window = config.DefaultContextWindow(a.cfg.Provider)
	}
	c.sess.SetCompaction(host.Compaction{
		Model: a.cfg.CompactionModel, Window: window,
		Threshold: a.cfg.CompactionThreshold, KeepTokens: a.cfg.CompactionKeepTokens,
	})
	if c.exts != nil {
		c.sess.SetTools(c.exts)
		c.exts.RecordGuidance(c.sess)
		c.exts.SessionStart(ctx, &pb.SessionStart{
			Resumed: !res.Fresh, Reseeded: res.Reseeded, SessionId: c.sess.ID(), SessionPath: c.sess.Path(),
		})
	}
	a.logger.Info("session ready", "path", path, "resumed", !res.Fresh, "reseeded", res.Reseeded,
		"provider", a.cfg.Provider, "model", a.cfg.Model)
	c.req = serializers.Request{
		Model:          a.cfg.Model,
		MaxTokens:      a.cfg.MaxTokens,
		ThinkingBudget: a.cfg.ThinkingBudget,
		Temperature:    a.cfg.Temperature,
		Stream:         a.cfg.Stream,
	}
	ok = true
	return c, nil
}

func (c *chat) close() {
	if c.exts != nil {
		// ctx is done when a signal ends panto: no session_end then, and
		// each extension is stopped at once.
		c.exts.Close(c.ctx)
	}
	if c.sess != nil {
		if err := c.sess.Close(); err != nil {
			fmt.Fprintf(c.e.stderr, "panto: close session: %v\n", err)
		}
	}
	if c.app != nil {
		c.app.close()
	}
}

// turn sends one user message and streams the reply's text to out.
func (c *chat) turn(ctx context.Context, text string, out io.Writer) error {
	ctx, stop := c.e.sig.foreground(ctx)
	defer stop()
	// Tool calls show as they happen: on stderr in print mode (stdout
	// carries only the reply), inline in interactive mode.
	progress := c.e.stderr
	if c.interactive {
		progress = out
	}
	c.sess.SetToolObserver(&toolPrinter{w: progress})
	wroteNL := true
	user := conversation.Message{Role: conversation.RoleUser}
	for _, up := range c.userPrompt {
		user.Content = append(user.Content, conversation.Text(up))
	}
	user.Content = append(user.Content, conversation.Text(text))
	reply, err := c.sess.Turn(ctx, c.prov, c.req, user, func(d serializers.Delta) {
		if d.Kind == serializers.DeltaText && d.Text != "" {
			io.WriteString(out, d.Text)
			wroteNL = strings.HasSuffix(d.Text, "\n")
		}
	})
	if err == nil && !c.req.Stream {
		text := reply.Message.Text()
		io.WriteString(out, text)
		wroteNL = text == "" || strings.HasSuffix(text, "\n")
	}
	if !wroteNL {
		io.WriteString(out, "\n")
	}
	if errors.Is(err, host.ErrMaxSteps) {
		fmt.Fprintf(c.e.stderr, "panto: %v; send a message to go on (config max_steps)\n", err)
		return nil
	}
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errInterrupted) || errors.As(cause, new(*stopSignal)) {
			return fmt.Errorf("%w (no half reply was recorded; tool calls cut short have error results)", cause)
		}
		return err
	}
	if reply.StopReason == serializers.StopMaxTokens {
		fmt.Fprintln(c.e.stderr, "panto: the reply was cut at max_tokens")
	}
	return nil
}

func (c *chat) printTurn(ctx context.Context, text string) error {
	if name, args, ok := slashCommand(text); ok {
		return c.command(ctx, name, args, c.e.stdout)
	}
	return c.turn(ctx, text, c.e.stdout)
}

// command runs a built-in or extension slash command, without the model.
func (c *chat) command(ctx context.Context, name, args string, out io.Writer) error {
	if f := builtinCommands[name]; f != nil {
		return f(c, ctx, out)
	}
	if c.exts == nil {
		return fmt.Errorf("unknown command /%s (see /help)", name)
	}
	output, err := c.exts.RunCommand(ctx, name, args)
	if output != "" {
		io.WriteString(out, strings.TrimRight(output, "\n")+"\n")
	}
	if errors.Is(err, extension.ErrNoCommand) {
		return fmt.Errorf("unknown command /%s (see /help)", name)
	}
	return err
}

// builtin slash commands of interactive mode; /help lists them.
var builtinCommands = map[string]func(*chat, context.Context, io.Writer) error{
	"help":    (*chat).help,
	"prompt":  (*chat).showPrompt,
	"session": (*chat).showSession,
	"compact": (*chat).compact,
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
  /help      this help
  /quit      leave (or Ctrl-D)
Ctrl-C stops a reply that is streaming.
`

func (c *chat) loop(ctx context.Context) error {
	where := c.sess.Path()
	if where == "" {
		where = "not recorded (--no-session)"
	}
	fmt.Fprintf(c.e.stdout, "panto %s · %s/%s · session %s\n/help for commands, Ctrl-D to quit.\n",
		version, c.app.cfg.Provider, c.app.cfg.Model, where)
	// A Ctrl-C at the prompt only reminds how to leave; during a turn the
	// turn's own handler takes it. SIGTERM and SIGHUP end the loop (ctx).
	intr := make(chan struct{}, 1)
	defer c.e.sig.onInterrupt(func() {
		select {
		case intr <- struct{}{}:
		default:
		}
	})()
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(c.e.stdin)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		readErr <- sc.Err()
	}()
	for {
		fmt.Fprint(c.e.stdout, "> ")
		var line string
		select {
		case line = <-lines:
		case err := <-readErr:
			fmt.Fprintln(c.e.stdout)
			return err
		case <-intr:
			fmt.Fprintln(c.e.stdout, "\n(Ctrl-D or /quit to leave)")
			continue
		case <-ctx.Done():
			fmt.Fprintln(c.e.stdout)
			return context.Cause(ctx)
		}
		line = conversation.ValidText(strings.TrimSpace(line))
		if line == "" {
			continue
		}
		if name, args, ok := slashCommand(line); ok {
			switch name {
			case "quit", "exit":
				return nil
			}
			if err := c.command(ctx, name, args, c.e.stdout); err != nil {
				fmt.Fprintf(c.e.stderr, "panto: %v\n", err)
			}
			continue
		}
		if err := c.turn(ctx, line, c.e.stdout); err != nil {
			fmt.Fprintf(c.e.stderr, "panto: %v\n", err)
		}
	}
}

func (c *chat) help(_ context.Context, out io.Writer) error {
	fmt.Fprint(out, interactiveHelp)
	if c.exts == nil {
		return nil
	}
	cmds := c.exts.Commands()
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

func (c *chat) compact(ctx context.Context, out io.Writer) error {
	ctx, stop := c.e.sig.foreground(ctx)
	defer stop()
	before := len(c.sess.RequestMessages())
	if err := c.sess.Compact(ctx, c.prov, c.req); err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted: the next request sends %d messages instead of %d; the system prompt is unchanged\n",
		len(c.sess.RequestMessages()), before)
	return nil
}

func (c *chat) showPrompt(_ context.Context, out io.Writer) error {
	blocks := c.sess.EffectiveSystem()
	fmt.Fprintf(out, "Effective system prompt: %d block(s)\n", len(blocks))
	for i, b := range blocks {
		fmt.Fprintf(out, "\n--- block %d (message %d) ---\n%s\n", i+1, b.Index+1, strings.TrimRight(b.Text, "\n"))
	}
	return nil
}

func (c *chat) showSession(_ context.Context, out io.Writer) error {
	if c.sess.Path() == "" {
		fmt.Fprintf(out, "session %s is not recorded (--no-session)\n", c.sess.ID())
		return nil
	}
	fmt.Fprintf(out, "session %s\nlog %s\nmessages %d\n", c.sess.ID(), c.sess.Path(), len(c.sess.Messages()))
	return nil
}

// toolPrinter shows each tool call and a one-line result as it happens.
type toolPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *toolPrinter) ToolStarted(call conversation.Block) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "→ %s %s\n", call.Name, oneLine(string(call.Input), 100))
}

func (p *toolPrinter) ToolDone(call, result conversation.Block) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text := result.ResultText()
	mark := "←"
	if result.IsError {
		mark = "✗"
	}
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	summary := oneLine(text, 80)
	if lines > 1 {
		summary = fmt.Sprintf("%s (%d lines)", summary, lines)
	}
	fmt.Fprintf(p.w, "%s %s: %s\n", mark, call.Name, summary)
}
