package main

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// helperEnv makes the test binary a helper process instead of running
// tests: a write or edit that a test kills part-way.
const helperEnv = "PANTO_TOOLS_TEST_HELPER"

func TestMain(m *testing.M) {
	if what := os.Getenv(helperEnv); what != "" {
		os.Exit(runHelper(what, os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// runHelper writes or edits file p to its new content (see
// interruptContent), saying "ready" on stdout just before.
func runHelper(what, p string) int {
	_, newContent := interruptContent()
	fmt.Println("ready")
	var err error
	switch what {
	case "write":
		_, err = writeFile(".", writeInput{Path: p, Content: newContent})
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
