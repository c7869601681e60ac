package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/panto-dev/panto/sdk"
)

// The workspace: when the front end lends the user's (panto acp, for an
// editor that offers its file system and terminal), read, write and
// edit go through the editor — the model reads what its buffers hold,
// unsaved changes included, and what it writes lands in the editor — and
// bash runs in the editor's terminal, with the same limits and the same
// result as here. Without one (sdk.ErrUnavailable) the tools use the
// machine's files and processes.

type hostKey struct{}

// withHost is ctx carrying the Host of the call (bind sets it).
func withHost(ctx context.Context, h sdk.Host) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, hostKey{}, h)
}

// workspace is the Host of the call when it offers the workspace's
// files (files) or terminal; nil otherwise.
func workspace(ctx context.Context, files bool) sdk.Host {
	h, _ := ctx.Value(hostKey{}).(sdk.Host)
	if h == nil {
		return nil
	}
	ws := h.Info().Workspace
	if files && ws.Files || !files && ws.Terminal {
		return h
	}
	return nil
}

// readWorkspace reads p through the workspace; ok is false when it
// offers no files (read the machine's then).
func readWorkspace(ctx context.Context, op, p string) (text string, ok bool, err error) {
	h := workspace(ctx, true)
	if h == nil {
		return "", false, nil
	}
	text, err = h.ReadTextFile(ctx, p, 0, 0)
	if errors.Is(err, sdk.ErrUnavailable) {
		return "", false, nil
	}
	if err != nil {
		return "", true, fmt.Errorf("%s %s: %w", op, p, trimHost(err))
	}
	return text, true, nil
}

// writeWorkspace writes p through the workspace; ok is false when it
// offers no files.
func writeWorkspace(ctx context.Context, op, p, content string) (ok bool, err error) {
	h := workspace(ctx, true)
	if h == nil {
		return false, nil
	}
	err = h.WriteTextFile(ctx, p, content)
	if errors.Is(err, sdk.ErrUnavailable) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("%s %s: %w", op, p, trimHost(err))
	}
	return true, nil
}

// trimHost drops the SDK's "panto host: " from an error of the editor's.
func trimHost(err error) error {
	if s, ok := strings.CutPrefix(err.Error(), "panto host: "); ok {
		return errors.New(s)
	}
	return err
}

// runInTerminal runs command in the workspace's terminal; ok is false
// when it offers none (run it here then). The result is as runBash's.
func runInTerminal(ctx context.Context, dir, command string, timeout time.Duration) (res sdk.ToolResult, ok bool) {
	h := workspace(ctx, false)
	if h == nil {
		return sdk.ToolResult{}, false
	}
	r, err := h.RunInTerminal(ctx, sdk.TerminalCommand{Command: command, Dir: dir, Timeout: timeout, OutputLimit: maxBytes})
	if errors.Is(err, sdk.ErrUnavailable) {
		return sdk.ToolResult{}, false
	}
	if err != nil {
		return sdk.ToolResult{Content: "bash (in the editor's terminal): " + trimHost(err).Error(), IsError: true}, true
	}
	out := &tailBuffer{max: maxBytes}
	_, _ = out.Write([]byte(r.Output))
	var b strings.Builder
	if r.Truncated {
		b.WriteString("[the editor's terminal kept only the end of the output]\n")
	}
	b.WriteString(out.String())
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case r.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s: the command was killed]", timeout)
		return sdk.ToolResult{Content: b.String(), IsError: true}, true
	case ctx.Err() != nil:
		b.WriteString("[cancelled: the command was killed]")
		return sdk.ToolResult{Content: b.String(), IsError: true}, true
	case r.Signal != "":
		fmt.Fprintf(&b, "[killed by signal: %s]", r.Signal)
		return sdk.ToolResult{Content: b.String(), IsError: true}, true
	}
	fmt.Fprintf(&b, "[exit code %d]", r.ExitCode)
	return sdk.ToolResult{Content: b.String(), IsError: r.ExitCode != 0}, true
}
