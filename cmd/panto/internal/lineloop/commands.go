package lineloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// builtinCommands are the slash commands of panto itself in the line
// front ends; /help lists them.
var builtinCommands = map[string]func(c *chat, ctx context.Context, args string, out io.Writer) error{
	"help":    (*chat).help,
	"prompt":  (*chat).showPrompt,
	"context": (*chat).showContext,
	"session": (*chat).showSession,
	"permissions": func(c *chat, _ context.Context, args string, out io.Writer) error {
		text, err := app.PermissionsCommand(c.sess, args)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, text)
		return nil
	},
	"compact": (*chat).compact,
	"model":   (*chat).model,
	"tree":    (*chat).tree,
	"label":   (*chat).label,
	"fork":    (*chat).fork,
	"resume":  (*chat).resume,
	"extensions": func(c *chat, _ context.Context, args string, out io.Writer) error {
		text, err := app.ExtensionsCommand(c.sess, args)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, text)
		return nil
	},
	"reload": (*chat).reload,
	"skills": func(c *chat, _ context.Context, _ string, out io.Writer) error {
		fmt.Fprintln(out, c.app.SkillsList())
		return nil
	},
}

// builtinNames are the names a template cannot take in the line front
// ends: the built-ins (builtinCommands' keys: a test holds them equal),
// /quit and /exit.
func builtinNames() []string {
	return []string{"quit", "exit", "help", "prompt", "context", "session", "permissions", "compact", "model",
		"tree", "label", "fork", "resume", "extensions", "reload", "skills"}
}

const interactiveHelp = `Type a message and press Enter to send it. Commands:
  /prompt    show the effective system prompt
  /context   where the next request's tokens go: each block, each extension's tools, the conversation, the window left
  /session   show the session log in use
  /permissions [mode MODE]  what the tool calls run under, or switch the mode
  /compact   summarise older messages to free context (the prompt stays)
  /model [NAME] [--force]  show the models to choose from, or switch to NAME (--force: one the provider does not list)
  /tree      show the session tree: short ids, labels, prompt changes
  /tree ID   continue from entry ID as a new branch (--summary, --no-summary)
  /label [ID] TEXT  label an entry (the current one without ID; empty TEXT removes it)
  /fork [ID]  copy the path up to ID (or here) to a new session, and switch to it
  /resume [N|ID]  list this directory's sessions, or switch to one
  /extensions [disable NAME]  the extensions and their state, or go on without NAME for this session
  /reload    restart every extension and read config and prompt files again (changes are recorded)
  /skills    the skills the model can read; /skill:NAME [args] loads one into your message
  /help      this help
  /quit      leave (or Ctrl-D)
Ctrl-C stops a reply that is streaming; Ctrl-C twice leaves.
An extension's question takes a line typed after it appeared; a confirm
takes the word yes.
`

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
	if ts, _ := c.app.OfferedTemplates(builtinNames(), c.sess); len(ts) > 0 {
		fmt.Fprintln(out, "Prompt templates:")
		for _, t := range ts {
			usage := "/" + t.Name
			if t.ArgumentHint != "" {
				usage += " " + t.ArgumentHint
			}
			fmt.Fprintf(out, "  %-24s %s (%s)\n", usage, t.Description, t.Source())
		}
	}
	return nil
}

func (c *chat) compact(ctx context.Context, _ string, out io.Writer) error {
	ctx, stop := c.o.Signals.Foreground(ctx)
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
	blocks := app.BlocksOf(c.sess.EffectiveSystem())
	fmt.Fprintf(out, "Effective system prompt: %d block(s)\n", len(blocks))
	app.WriteBlocks(out, blocks)
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

// model lists the models to choose from (the one in use marked): the
// configured ones and the provider's list; or switches to the one named,
// by name or by its number in the list, --force taking a name the
// provider does not list.
func (c *chat) model(ctx context.Context, args string, out io.Writer) error {
	info := c.sess.Info()
	name, force := app.ModelArgs(args)
	if name == "" && !force {
		list := c.sess.Models(ctx)
		for i, m := range list.Names() {
			mark := " "
			if m == info.Model {
				mark = "*"
			}
			fmt.Fprintf(out, "%s %d. %s\n", mark, i+1, m)
		}
		fmt.Fprintf(out, "provider %s; /model NAME (or a number) switches; /model NAME --force takes a name the provider does not list\n", info.Provider)
		return nil
	}
	if n, err := strconv.Atoi(name); err == nil {
		models := c.sess.Models(ctx).Names()
		if n < 1 || n > len(models) {
			return fmt.Errorf("/model %d: want 1 to %d", n, len(models))
		}
		name = models[n-1]
	}
	if err := app.SetModel(c.sess, name, force); err != nil {
		return fmt.Errorf("/model: %w", err)
	}
	fmt.Fprintf(out, "model %s (recorded; a resume goes on with it)\n", name)
	return nil
}

// The session tree in the line front ends: /tree, /label, /fork, and
// /resume to switch to another session.

// treeWidth is how wide the line views draw the tree.
const treeWidth = 100

// tree shows the session tree (/tree), or moves to an entry of it
// (/tree ID, with --summary or --no-summary).
func (c *chat) tree(ctx context.Context, args string, out io.Writer) error {
	a, err := treeview.ParseArgs(args, c.app.Config().BranchSummary)
	if err != nil {
		return err
	}
	ref, summarize, opt := a.Ref, a.Summarize, treeview.Options{Full: a.Full, Short: c.shortSource}
	t, err := c.sess.Tree()
	if err != nil {
		return fmt.Errorf("/tree: %w", err)
	}
	if ref == "" {
		rows, err := treeview.Build(t, opt)
		if err != nil {
			return fmt.Errorf("/tree: %w", err)
		}
		if err := treeview.Write(out, rows, treeWidth); err != nil {
			return err
		}
		fmt.Fprintln(out, "/tree ID continues from an entry (* marks the current path, ⚙ a change of the prompt)")
		return nil
	}
	// A reply's row holds its tool calls' results: continue after them.
	// Going back to a message of yours means asking it again: continue
	// from before it, and show what you typed in it.
	id, retype, err := app.Jump(t, ref)
	if err != nil {
		return fmt.Errorf("/tree %s: %w", ref, err)
	}
	ctx, stop := c.o.Signals.Foreground(ctx)
	defer stop()
	res, err := c.sess.MoveTo(ctx, id, host.MoveOptions{Summarize: summarize})
	if errors.Is(err, host.ErrAlreadyThere) {
		fmt.Fprintf(out, "already at %s\n", treeview.Short(id))
		return nil
	}
	if err != nil {
		return fmt.Errorf("/tree %s: %w", ref, err)
	}
	fmt.Fprintf(out, "moved to %s; the next message continues from there", treeview.Short(res.To))
	if res.Left > 0 {
		fmt.Fprintf(out, " (the branch left, %d message(s), stays in the log: /tree shows it)", res.Left)
	}
	fmt.Fprintln(out)
	if res.Summary != "" {
		fmt.Fprintf(out, "branch summary recorded: %s\n", termtext.OneLine(res.Summary, 200))
	}
	if retype != "" {
		fmt.Fprintf(out, "your message there was:\n  %s\n", strings.ReplaceAll(strings.TrimRight(retype, "\n"), "\n", "\n  "))
	}
	return nil
}

// label labels an entry (/label [ID] TEXT): the row of the current leaf
// without an ID. An empty TEXT removes the label.
func (c *chat) label(_ context.Context, args string, out io.Writer) error {
	t, err := c.sess.Tree()
	if err != nil {
		return fmt.Errorf("/label: %w", err)
	}
	ref, text := splitRef(t, args)
	if ref == "" {
		if ref, err = hereRow(t); err != nil {
			return fmt.Errorf("/label: %w", err)
		}
	}
	id, err := c.sess.Label(ref, text)
	if err != nil {
		return fmt.Errorf("/label: %w", err)
	}
	if text == "" {
		fmt.Fprintf(out, "removed the label of %s\n", treeview.Short(id))
		return nil
	}
	fmt.Fprintf(out, "labelled %s %q\n", treeview.Short(id), text)
	return nil
}

// splitRef splits "/label" arguments: a first word that names an entry
// is its ref, the rest the text.
func splitRef(t *sessionlog.Tree, args string) (ref, text string) {
	first, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	if first != "" && len(first) >= 4 {
		if _, err := t.Resolve(first); err == nil {
			return first, strings.TrimSpace(rest)
		}
	}
	return "", strings.TrimSpace(args)
}

// hereRow is the entry of the tree view's row of the current leaf: the
// message (or summary) the leaf is at, not a move or a label after it.
func hereRow(t *sessionlog.Tree) (string, error) {
	rows, err := treeview.Build(t, treeview.Options{})
	if err != nil {
		return "", err
	}
	for _, r := range rows {
		if r.Here {
			return r.ID, nil
		}
	}
	return "", errors.New("the session has no entries yet")
}

// fork copies the path up to an entry (the current leaf without one) to
// a new session, and switches to it (/fork [ID]).
func (c *chat) fork(ctx context.Context, args string, out io.Writer) error {
	info := c.sess.Info()
	f, err := c.app.Fork(ctx, c.sess, strings.TrimSpace(args))
	if err != nil {
		return fmt.Errorf("/fork: %w", err)
	}
	// The fork is a session of its own: open it in this one's place, as
	// a resume (the extensions see session_end, then session_start).
	if err := c.switchTo(ctx, f.Path); err != nil {
		return fmt.Errorf("/fork: the fork was written to %s, but opening it failed: %w (resume it with panto --session %s)", f.Path, err, f.Path)
	}
	fmt.Fprintf(out, "forked at %s into session %s\nlog %s\n(the session you left is %s: panto --resume %s)\n",
		treeview.Short(f.Header.ParentEntry), f.Header.ID, f.Path, info.ID, info.ID)
	return nil
}

// switchTo closes the session and opens the log at path in its place,
// with the same flags and extensions (app.Switch). When path cannot be
// opened, the session left is opened again, so the loop always has one.
func (c *chat) switchTo(ctx context.Context, path string) error {
	left := c.sess.Info().Path
	sw := app.Switch(ctx, c.sess, path, c.app.Reopen)
	if sw.Kept {
		return sw.Err
	}
	if sw.CloseErr != nil {
		fmt.Fprintf(c.o.Stderr, "panto: close session: %v\n", sw.CloseErr)
	}
	<-c.drained // what the session left said while it closed is shown
	if sw.Session != nil {
		c.attach(sw.Session)
		c.once.Do(c.follow)
	}
	if sw.BackErr != nil {
		return fmt.Errorf("%w; reopening %s failed too: %v", sw.Err, left, sw.BackErr)
	}
	return sw.Err
}

// resume lists this directory's sessions (/resume), or switches to one
// of them by its number in the list or its id (/resume N|ID).
func (c *chat) resume(ctx context.Context, args string, out io.Writer) error {
	list, err := c.app.Sessions()
	if err != nil {
		return fmt.Errorf("/resume: %w", err)
	}
	current := c.sess.Info().Path
	if args = strings.TrimSpace(args); args == "" {
		if len(list) == 0 {
			fmt.Fprintln(out, "no sessions here yet")
			return nil
		}
		for i, s := range list {
			mark := " "
			if s.Path == current {
				mark = "*"
			}
			if s.Err != nil {
				fmt.Fprintf(out, "%s %2d. %s  (unreadable: %s)\n", mark, i+1, s.ID, termtext.OneLine(s.Err.Error(), 80))
				continue
			}
			first := s.First
			if first == "" {
				first = "(no message yet)"
			}
			line := fmt.Sprintf("%s %2d. %s  %s  %d msgs", mark, i+1, treeview.Short(s.ID), s.Updated.Local().Format("2006-01-02 15:04"), s.Messages)
			if s.Branches > 1 {
				line += fmt.Sprintf(", %d branches", s.Branches)
			}
			fmt.Fprintf(out, "%s  %s\n", line, termtext.OneLine(first, 60))
		}
		fmt.Fprintln(out, "/resume N (or an id) switches to a session; * is this one")
		return nil
	}
	var path string
	if n, err := strconv.Atoi(args); err == nil {
		if n < 1 || n > len(list) {
			return fmt.Errorf("/resume %d: want 1 to %d (see /resume)", n, len(list))
		}
		path = list[n-1].Path
	} else if path, err = c.app.Store().Find(args); err != nil {
		return fmt.Errorf("/resume %w", err)
	}
	if path == current {
		fmt.Fprintln(out, "already in that session")
		return nil
	}
	if err := c.switchTo(ctx, path); err != nil {
		return fmt.Errorf("/resume: %w", err)
	}
	info := c.sess.Info()
	fmt.Fprintf(out, "resumed session %s (%d messages)\nlog %s\n", info.ID, c.sess.MessageCount(), info.Path)
	return nil
}

// shortSource shortens a prompt block's source in /tree's rows as the
// full-screen UI does (describe.ShortSource).
func (c *chat) shortSource(source string) string {
	home, _ := os.UserHomeDir() // "" without one: paths stay whole
	cwd := ""
	if c.app != nil {
		cwd = c.app.Dirs().CWD
	}
	return describe.ShortSource(source, cwd, home)
}

// reload restarts every extension and reads the config and prompt files
// again, without leaving the session (/reload): the session's log is
// opened again, as a resume, whose reconciliation records what changed.
func (c *chat) reload(ctx context.Context, _ string, out io.Writer) error {
	path, err := app.ReloadPath(c.sess)
	if err != nil {
		return err
	}
	before := app.BeforeReload(c.sess)
	if err := c.app.Reload(); err != nil {
		return err
	}
	if err := c.switchTo(ctx, path); err != nil {
		return fmt.Errorf("/reload: %w", err)
	}
	fmt.Fprintln(out, app.ReloadReport(before, c.sess))
	return nil
}
