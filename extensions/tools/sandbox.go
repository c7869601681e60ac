package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sandbox"
)

// The sandbox of a call (sdk.ToolCall.Sandbox, nil when off): bash runs
// under it (the reaper applies it, see runReaper), and write and edit
// refuse a path outside its writable roots. read, ls, find and grep are
// Go code in the tools process and start no program; they only read,
// which the sandbox does not restrict.

// sandboxEnv carries the call's sandbox, as JSON, from the tools process
// to the reaper, which applies it before it starts bash (and unsets it).
const sandboxEnv = "PANTO_TOOLS_SANDBOX"

type sandboxKey struct{}

// withSandbox is ctx carrying the call's sandbox (bind sets it).
func withSandbox(ctx context.Context, sb *sdk.Sandbox) context.Context {
	if sb == nil {
		return ctx
	}
	return context.WithValue(ctx, sandboxKey{}, sb)
}

// callSandbox is the sandbox of the call, nil when it is off.
func callSandbox(ctx context.Context) *sdk.Sandbox {
	sb, _ := ctx.Value(sandboxKey{}).(*sdk.Sandbox)
	return sb
}

// blockedError is an error of a call the sandbox refused: bind makes it
// an error result with SandboxBlocked set to blocked.
type blockedError struct {
	msg, blocked string
}

func (e *blockedError) Error() string { return e.msg }

// bashSandbox is the sandbox bash runs under for sb: nil when sb is nil,
// or when this machine cannot sandbox and sb does not require it (the
// host tells the user so, once). The result is not nil, and nothing may
// run, when sb requires a sandbox this machine cannot give or its
// temporary folder cannot be made.
func bashSandbox(sb *sdk.Sandbox) (_ *sdk.Sandbox, refused *sdk.ToolResult) {
	if sb == nil {
		return nil, nil
	}
	if s := sandbox.Probe(); !s.OK() {
		if !sb.Required {
			return nil, nil
		}
		return nil, &sdk.ToolResult{
			Content: "bash refused: the sandbox is required (sandbox.required = true) but this kernel cannot sandbox: " + s.Reason +
				"; nothing was run",
			IsError:        true,
			SandboxBlocked: "the sandbox is required (sandbox.required = true) but this kernel cannot sandbox: " + s.Reason,
		}
	}
	if sb.TmpDir != "" {
		if err := os.MkdirAll(sb.TmpDir, 0o700); err != nil {
			return nil, &sdk.ToolResult{Content: "bash: the sandbox's temporary folder: " + err.Error() + "; nothing was run", IsError: true}
		}
	}
	return sb, nil
}

// checkSandboxWrite refuses op on path (as the model gave it, from dir)
// when sb is on and the file it would change — every symlink on the way
// resolved, the last one too, as the kernel does — lies outside sb's
// writable roots.
func checkSandboxWrite(sb *sdk.Sandbox, op, dir, path string) error {
	if sb == nil {
		return nil
	}
	p, err := resolvePath(dir, path)
	if err != nil {
		return err
	}
	where := []string{p}
	if target, err := linkTarget(p); err == nil {
		where = append(where, target)
	}
	roots := sandbox.Roots(*sb)
	var real []string // the roots with their own symlinks resolved
	for _, r := range roots {
		real = append(real, r)
		if rr, err := physical(r); err == nil && rr != r {
			real = append(real, rr)
		}
	}
	for _, w := range where {
		phys, err := physical(w)
		if err != nil {
			phys = w
		}
		ok := false
		for _, r := range real {
			ok = ok || within(r, phys)
		}
		if ok {
			continue
		}
		shown := p
		if phys != p {
			shown = p + " (" + phys + ")"
		}
		blocked, why := sandbox.WriteBlocked, "sandbox.mode = \"workspace-write\": "+strings.Join(roots, ", ")+"; add the path to sandbox.writable_roots"
		if sb.Mode != sdk.SandboxWorkspaceWrite {
			blocked, why = sandbox.ReadOnlyBlocked, "sandbox.mode = \"read-only\": nothing is writable"
			if sb.TmpDir != "" {
				why = "sandbox.mode = \"read-only\": only " + sb.TmpDir + " is writable"
			}
		}
		return &blockedError{msg: fmt.Sprintf("%s %s: blocked by the sandbox: %s is outside the writable roots (%s); nothing was written",
			op, path, shown, why), blocked: blocked}
	}
	return nil
}
