package main

import "os/exec"

// serverCommand runs a stdio server directly: Windows has no process
// groups to reap; the server ends when its stdin closes.
func serverCommand(name string, args []string) (*exec.Cmd, error) {
	return exec.Command(name, args...), nil
}

// reaperEnv is never set on Windows.
const reaperEnv = "PANTO_MCP_REAPER"

func runReaper() int { return 2 }
