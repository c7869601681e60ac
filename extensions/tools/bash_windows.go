package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/panto-dev/panto/sdk"
)

// runUnderReaper fails on Windows, naming what is missing: the bash tool
// runs a command under a reaper that leads a Unix process group, so that
// a timeout or a cancel kills the command and everything it started, and
// Windows has neither process groups nor the reaper's file descriptor 3.
// Running bash without them would leave what a command started running
// after a timeout, so it is not done.
func runUnderReaper(context.Context, string, string, time.Duration, *sdk.Sandbox) sdk.ToolResult {
	return sdk.ToolResult{
		Content: "bash: not available on Windows: the bash tool runs each command in a Unix process group under a reaper, " +
			"so that a timeout or a cancel kills it and everything it started, and Windows has no process groups; nothing was run",
		IsError: true,
	}
}

// runReaper is never reached on Windows (nothing sets reaperEnv).
func runReaper() int {
	fmt.Fprintln(os.Stderr, "panto-tools-reaper: there is no reaper on Windows")
	return 2
}
