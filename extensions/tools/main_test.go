package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary a helper process instead of running
// tests: a write or edit that a test kills part-way.
const helperEnv = "PANTO_TOOLS_TEST_HELPER"

func TestMain(m *testing.M) {
	// runBash re-executes this binary as its reaper, as the tools
	// binary does itself.
	if os.Getenv(reaperEnv) != "" {
		os.Exit(runReaper())
	}
	if what := os.Getenv(helperEnv); what != "" {
		setupTemps(os.Getenv) // as the tools binary does
		os.Exit(runHelper(what, os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// runHelper writes or edits file p (arg) to its new content (see
// interruptContent), saying "ready" on stdout just before; runs bash
// command arg; or dials arg (dial: "unix:/path" or "tcp:host:port").
func runHelper(what, arg string) int {
	p := arg
	_, newContent := interruptContent()
	if what != "bash" && what != "dial" {
		fmt.Println("ready")
	}
	var err error
	switch what {
	case "write":
		_, err = writeFile(context.Background(), ".", writeInput{Path: p, Content: newContent})
	case "bash":
		// Like the tools process under panto: run one bash call, say
		// "done" and wait to be killed.
		res := runBash(context.Background(), ".", arg, time.Minute, nil)
		fmt.Println("done:", res.Content)
		select {}
	case "dial":
		// Connect to network:address (a sandbox test's escape attempt).
		network, address, _ := strings.Cut(arg, ":")
		c, err := net.Dial(network, address)
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		c.Close()
		fmt.Println("connected")
		return 0
	case "edit":
		old, repl := "HEAD old", "HEAD new"
		_, err = editFile(context.Background(), ".", editInput{Path: p, Edits: []editSpec{{OldText: &old, NewText: &repl}}})
	default:
		err = fmt.Errorf("unknown helper %q", what)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done")
	return 0
}
