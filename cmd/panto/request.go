package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/provider"
)

const requestLong = `Print the request body that produced a reply, as the provider got it:
model, settings, tools and their schemas, system prompt, messages and
cache marks, rebuilt from the session log alone (no extension starts,
nothing is sent). --at names the reply: its entry id, a unique prefix,
or the current branch's Nth message (panto session tree shows ids).

panto records what shapes a request besides the conversation (the wire
and its options, the model, max tokens, thinking, temperature, stream,
and the tools offered with their owners) as a request_settings entry
whenever it changes, so the body is the one sent, byte for byte. A log
written before panto recorded these says so instead of guessing.

--next prints what would be sent if the session continued from --at (or
from its last entry) now: today's configuration, extensions and tools,
the conversation up to there (the next user message would follow it).

The echo provider sends no body; --wire anthropic or --wire openai
shows what that wire would carry for the same request.`

func requestCommand(ctx context.Context, e *env, root *options) *cobra.Command {
	var o options
	var at, wire string
	next := false
	cmd := &cobra.Command{
		Use:   "request --at ID [flags]",
		Short: "Print the exact request body behind a reply",
		Long:  requestLong,
		Example: `  panto request -c --at 3fa2c1d0          the body of the request that produced that reply
  panto request --session s.jsonl --at 12  the reply that is the branch's 12th message
  panto request -c --at 3fa2c1d0 --next    what continuing from there would send now
  panto request -c --at 3fa2 | jq .system`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.logLevel = root.logLevel
			at = strings.TrimSpace(at)
			if at == "" && !next {
				return usageErrorf("name the reply: --at ID (panto session tree shows the ids), or --next for the next request")
			}
			if strings.HasPrefix(at, "-") {
				return usageErrorf("--at %s: want an entry ID or a message number", at)
			}
			switch wire {
			case "", provider.Anthropic, provider.OpenAI:
			default:
				return usageErrorf("--wire %s: want anthropic or openai", wire)
			}
			if o.session == "" && !o.continueLast && o.resume == "" {
				return usageErrorf("name the session: --session FILE, -c or --resume ID")
			}
			if next {
				return runNextRequest(ctx, e, &o, at, wire)
			}
			return runRequest(e, &o, at, wire)
		},
	}
	f := cmd.Flags()
	o.sessionFlags(f)
	f.StringVar(&at, "at", "", "the reply: its entry `ID` (or a unique prefix), or the current branch's Nth message")
	f.BoolVar(&next, "next", false, "print what would be sent if the session continued from --at (or its end) now")
	f.StringVar(&wire, "wire", "", "encode for `WIRE` (anthropic or openai) instead of the provider's own; for echo sessions")
	o.extensionFlags(f)
	return cmd
}

func runRequest(e *env, o *options, at, wire string) error {
	a, path, err := promptApp(e, o, at)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := app.RequestAt(path, at)
	if errors.Is(err, host.ErrNoRequestSettings) {
		return fmt.Errorf("--at %s: session log %s: %w", at, path, err)
	}
	if err != nil {
		return err
	}
	if wire != "" {
		r.Settings.Wire, r.Settings.Options = wire, nil
	}
	return writeBody(e, r.Settings.Wire, r.Settings.Options, r)
}

func runNextRequest(ctx context.Context, e *env, o *options, at, wire string) error {
	a, path, err := promptApp(e, o, at)
	if err != nil {
		return err
	}
	defer a.Close()
	var r host.Replay
	if at == "" {
		err = inMemory(ctx, e, a, path, func(sess *host.Session) error {
			r.Request = sess.NextRequest(ctx)
			return nil
		})
	} else {
		r, err = nextFrom(ctx, e, a, path, at)
	}
	if err != nil {
		return err
	}
	w, opts := a.Wire()
	if wire != "" {
		w, opts = wire, nil
	}
	return writeBody(e, w, opts, r)
}

// nextFrom is the request a continuation from the entry at names would
// send now: the session moves there, as a continuation does, on a copy of
// its log (the move and what it re-derives are recorded, and thrown away
// with the copy; the log is only read).
func nextFrom(ctx context.Context, e *env, a *app.App, path, at string) (host.Replay, error) {
	id, err := app.ResolveAt(path, at)
	if err != nil {
		return host.Replay{}, fmt.Errorf("--at %s --next: %w", at, err)
	}
	sess, done, err := a.OpenCopy(ctx, path)
	if err != nil {
		return host.Replay{}, err
	}
	defer done()
	events := sess.Subscribe(context.WithoutCancel(ctx))
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		lineloop.ShowNotices(e.stderr, events)
	}()
	var r host.Replay
	if id != "" {
		if _, err = sess.MoveTo(ctx, id, host.MoveOptions{}); errors.Is(err, host.ErrAlreadyThere) {
			err = nil
		}
	}
	if err == nil {
		r.Request = sess.NextRequest(ctx)
	} else {
		err = fmt.Errorf("--at %s --next: %w", at, err)
	}
	if cerr := sess.Close(ctx); err == nil && cerr != nil {
		err = cerr
	}
	<-shown
	return r, err
}

// writeBody writes r's body on wire: raw to a pipe or file, byte for
// byte; at a terminal with the controls escaped (JSON-equal).
func writeBody(e *env, wire string, opts map[string]string, r host.Replay) error {
	if wire == provider.Echo {
		return errors.New("the session's provider is echo, which sends no request body: --wire anthropic or --wire openai shows what that wire would carry")
	}
	body, err := provider.Encode(wire, opts, r.Request)
	if err != nil {
		return err
	}
	out := e.jsonStdout()
	if _, err := out.Write(append(body, '\n')); err != nil {
		return err
	}
	return nil
}
