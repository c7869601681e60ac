package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// For tests only: these variables let a test stop a write or edit at a
// chosen point and interrupt it there, instead of racing a wall clock.
// panto never sets them; a user has no reason to.
const (
	// testHookEnv names a folder. At each point of a write or edit (see
	// testHook), the tools extension creates a file there named after the
	// point, holding its pid, and waits until that file is removed; while
	// it waits, once the call's context ends, it creates POINT.cancelled.
	testHookEnv = "PANTO_TOOLS_TEST_HOOK"
	// testNoTmpfileEnv, set to 1, makes write and edit use a named
	// temporary file even where O_TMPFILE works (tests of the fallback).
	testNoTmpfileEnv = "PANTO_TOOLS_TEST_NO_TMPFILE"
)

// hookDir is testHookEnv's folder; "" (always, outside tests): no hooks.
var hookDir string

// The points of a write or edit a test can stop at.
const (
	// hookWrite: the temporary file exists; nothing is written in it yet.
	hookWrite = "write"
	// hookCommit: the new content is written and synced; the last
	// cancellation check and the rename come next.
	hookCommit = "commit"
	// hookCommitted: the rename is done; the result is made next.
	hookCommitted = "committed"
)

// testHook waits at point while hookDir holds the point's file (at most a
// minute), telling the test when ctx ends; without hookDir it does
// nothing.
func testHook(ctx context.Context, point string) {
	if hookDir == "" {
		return
	}
	p := filepath.Join(hookDir, point)
	if err := os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return
	}
	told := false
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return
		}
		if !told && ctx.Err() != nil {
			_ = os.WriteFile(p+".cancelled", nil, 0o644)
			told = true
		}
	}
}
