// Command tools is panto's first-party coding toolset: read, write, edit,
// bash, ls, find and grep, offered to the model through sdk.ToolProvider.
//
// A call may carry a sandbox (sdk.ToolCall.Sandbox): bash then runs
// confined to it and write and edit keep to its writable roots
// (sandbox.go).
//
// It is an extension like any other, built on the sdk alone. Relative
// paths are resolved against the directory panto started it in (the
// project directory); absolute paths and ~ are allowed too, so the tools
// reach whatever the user's account can, like a shell — except that write
// and edit refuse panto's own configuration and data (own.go). A
// ToolCallWatcher extension can block calls; docs/tools.md says how.
//
// Each tool's logic is a small function of its decoded input so that it
// can be tested without a host; what does not belong here is policy about
// which calls are allowed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/panto-dev/panto/sdk"
)

// ext is the extension: the tools, bound to the project directory.
type ext struct {
	sdk.Base
	// dir is the project directory relative paths are resolved against.
	dir string
	// own are panto's own folders, which write and edit refuse (own.go).
	own ownDirs
}

var (
	_ sdk.ToolProvider = (*ext)(nil)
	_ sdk.Describer    = (*ext)(nil)
)

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "tools", Version: "1.0.0", Description: "read, write, edit, bash, ls, find and grep"}
}

// Tools returns every tool, in a stable order.
func (e *ext) Tools() []sdk.Tool {
	return []sdk.Tool{
		readTool(e.dir),
		writeTool(e.dir, e.own),
		editTool(e.dir, e.own),
		bashTool(e.dir),
		lsTool(e.dir),
		findTool(e.dir),
		grepTool(e.dir),
	}
}

// runFunc is the shape of every tool's logic: decoded input in, result out.
type runFunc[T any] func(ctx context.Context, in T) (sdk.ToolResult, error)

// bind turns a tool's logic into an sdk Run function that decodes and
// checks the model's JSON input first. It is the one place every result
// is made: an error becomes an error result, and the text is made valid
// UTF-8 (invalid bytes read as U+FFFD), since file contents, file names
// and command output may hold any bytes and a proto3 string must not.
func bind[T any](params json.RawMessage, fn runFunc[T]) func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
	return func(ctx context.Context, h sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
		var in T
		err := decodeInput(call.Input, params, &in)
		var res sdk.ToolResult
		if err == nil {
			res, err = fn(withSandbox(withHost(ctx, h), call.Sandbox), in)
		}
		if err != nil {
			res = sdk.ToolResult{Content: err.Error(), IsError: true}
			var be *blockedError
			if errors.As(err, &be) {
				res.SandboxBlocked = be.blocked
			}
		}
		res.Content = validText(res.Content)
		return res, nil
	}
}

// bindText is bind for a tool whose result is the text fn returns.
func bindText[T any](params json.RawMessage, fn func(context.Context, T) (string, error)) func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
	return bind(params, func(ctx context.Context, in T) (sdk.ToolResult, error) {
		out, err := fn(ctx, in)
		return sdk.ToolResult{Content: out}, err
	})
}

func main() {
	if os.Getenv(reaperEnv) != "" {
		os.Exit(runReaper())
	}
	dir, err := os.Getwd()
	if err != nil {
		// stderr, never stdout: stdout is the plugin handshake.
		fmt.Fprintln(os.Stderr, "tools: cannot determine the working directory:", err)
		os.Exit(1)
	}
	setupTemps(os.Getenv)
	// grep and find compute: every core, not the SDK's default of one P.
	err = sdk.Serve(&ext{dir: dir, own: findOwnDirs(os.Getenv)}, sdk.MaxProcs(0))
	temps.shutdown() // the session is over; calls still running end with the process
	if err != nil {
		fmt.Fprintln(os.Stderr, "tools:", err)
		os.Exit(1)
	}
}

// setupTemps prepares the temporary files of write and edit (see
// tempfile.go): the test hooks, the journal folder, swept first of what
// a tools process killed by SIGKILL left, and the signals that end the
// process.
func setupTemps(getenv func(string) string) {
	hookDir, noTmpfile = getenv(testHookEnv), getenv(testNoTmpfileEnv) == "1"
	if d := stateDir(getenv); d != "" {
		journals := filepath.Join(d, "tmp")
		sweep(journals)
		temps.setJournalDir(journals)
	}
	// A SIGTERM or SIGHUP ends the process, as by default, but first
	// removes every named temporary file. (go-plugin ignores SIGINT: the
	// calls go on. SIGKILL leaves only unnamed files, which the system
	// frees, and journalled ones, which the next start sweeps.)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		temps.shutdown()
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
}
