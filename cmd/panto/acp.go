package main

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/acp"
	"github.com/panto-dev/panto/cmd/panto/internal/app"
)

const acpLong = `Speak the Agent Client Protocol (ACP, version 1) on stdin and stdout, for
an editor (Zed, JetBrains IDEs, Neovim) or a headless client (acpx). The
editor starts panto as {"command": "panto", "args": ["acp"]}; each
session it opens is a panto session, recorded where panto -c finds it, and
session/load replays the active branch of one.

stdout carries JSON-RPC only, one message a line; warnings and notices go
to stderr and panto's log file. The root flags choose the provider,
model, extensions and prompt for every session. See docs/acp.md.`

func acpCommand(ctx context.Context, e *env, o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Run panto as an ACP agent for an editor, on stdin and stdout",
		Long:  acpLong,
		Example: `  panto acp                               what an editor runs
  panto acp --provider echo               offline: no key, no network
  acpx --agent "panto acp" exec "hello"    a headless client`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			f := o.appFlags()
			f.Log = app.Pick{}
			// The flags are checked once, before the client is served: a
			// mistake is a usage error on stderr, not an error per session.
			a, err := app.Load(e.appEnv(func(string) {}), f)
			if err != nil {
				return err
			}
			a.Close()
			return acp.Serve(ctx, e.stdin, e.jsonStdout(), acp.Options{
				Env:    e.appEnv(nil),
				Flags:  f,
				Stderr: e.stderr,
				Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.provider, "provider", "", "the provider, by `NAME`: anthropic, openai or echo (offline; needs no key)")
	fs.StringVar(&o.model, "model", "", "the model, by the provider's `NAME` for it")
	fs.StringVar(&o.baseURL, "base-url", "", "the API root `URL`: Anthropic's without /v1, OpenAI's with it")
	o.promptFlags(fs)
	o.extensionFlags(fs)
	o.permissionFlags(fs)
	fs.SortFlags = false
	completeWords(cmd, "provider", "anthropic", "openai", "echo")
	completeWords(cmd, "permission-mode", "default", "accept-edits", "plan", "bypass")
	return cmd
}
