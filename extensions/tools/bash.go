package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/sdk"
)

const (
	bashDefaultTimeout = 120 // seconds
	bashMaxTimeout     = 600 // seconds
	// bashPipeGrace is how long bash's output is still read after bash
	// itself exits, for a background child that keeps the pipe open.
	bashPipeGrace = 250 * time.Millisecond
)

// reaperEnv, set to the tools process's pid, makes the tools binary the
// reaper of one bash call instead of the extension (see runReaper;
// Windows has none).
const reaperEnv = "PANTO_TOOLS_REAPER"

var bashParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command line, run with bash -c in the project directory."},
    "timeout": {"type": "integer", "minimum": 1, "maximum": 600, "description": "Seconds before the command and everything it started are killed. Default 120, maximum 600."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)

type bashInput struct {
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

func bashTool(dir string) sdk.Tool {
	return sdk.Tool{
		Name:        "bash",
		Description: "Run a command with bash -c in the project directory; returns its combined stdout and stderr (the last 2000 lines or 50 KB) and the exit code.",
		Parameters:  bashParams,
		Guidance: "Use bash to build, test, run programs, use git and anything else a shell does; prefer read, ls, find " +
			"and grep to look at files, and edit or write to change them. Each call is a fresh bash in the project " +
			"directory: cd and exported variables do not carry over, so chain with && instead. stdin is empty, so " +
			"avoid interactive commands and pagers. The command and everything it starts are killed after timeout " +
			"seconds (default 120, at most 600). Only the tail of long output is kept; redirect it to a file and " +
			"read or grep that when you need all of it.",
		Run: bind(bashParams, func(ctx context.Context, in bashInput) (sdk.ToolResult, error) {
			timeout, err := checkLimit("timeout", in.Timeout, bashDefaultTimeout, bashMaxTimeout)
			if err != nil {
				return sdk.ToolResult{}, err
			}
			return runBash(ctx, dir, in.Command, time.Duration(timeout)*time.Second, callSandbox(ctx)), nil
		}),
	}
}

// runBash runs command with bash -c in dir, under a reaper (see
// runReaper) that leads a process group of its own: the group is killed
// on timeout or when ctx ends, and dies with the tools process. The
// result holds the tail of the combined output and how the command
// ended; it is an error result unless the command exited 0. On Windows
// there is no reaper and no process group to kill: the call fails and
// says so (bash_windows.go). With a sandbox sb (nil: none), bash runs
// confined to it (see bashSandbox and runReaper).
func runBash(ctx context.Context, dir, command string, timeout time.Duration, sb *sdk.Sandbox) sdk.ToolResult {
	if strings.TrimSpace(command) == "" {
		return sdk.ToolResult{Content: "invalid input: field \"command\" is empty", IsError: true}
	}
	if i := strings.IndexByte(command, 0); i >= 0 {
		// The system passes a command line as a C string: it cannot hold
		// a NUL (exec would fail with "invalid argument").
		return sdk.ToolResult{Content: fmt.Sprintf("invalid input: field \"command\" holds a NUL byte (\\u0000) at byte offset %d; "+
			"a command line cannot contain NUL, so nothing was run. To pass a NUL byte to a program, write it as printf '\\0'.", i), IsError: true}
	}
	sb, refused := bashSandbox(sb)
	if refused != nil {
		return *refused
	}
	// An editor's terminal runs the command in the editor's process,
	// which this extension cannot confine: a sandboxed call runs here,
	// under the reaper, instead.
	if sb == nil {
		if res, ok := runInTerminal(ctx, dir, command, timeout); ok {
			return res
		}
	}
	return runUnderReaper(ctx, dir, command, timeout, sb)
}

// progressLines sends a command's output to panto as the call's progress
// (sdk.Progress) as it comes, whole lines at a time: the rest of a line
// waits for its newline, or until it is longer than maxProgressLine. It
// is one writer for stdout and stderr, which share a pipe, so the lines
// come in the order the result has them. It sends at most once every
// progressEvery and holds at most the last maxProgressHeld bytes in
// between, so a command that floods its output (yes) costs little more
// than one copy of it.
type progressLines struct {
	ctx context.Context

	mu    sync.Mutex
	held  []byte // not sent yet
	last  time.Time
	timer *time.Timer
}

const (
	// maxProgressLine is the longest unfinished line held back.
	maxProgressLine = 4 << 10
	progressEvery   = 50 * time.Millisecond
	maxProgressHeld = 64 << 10
)

func (p *progressLines) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = append(p.held, b...)
	if len(p.held) > 2*maxProgressHeld {
		cut := len(p.held) - maxProgressHeld
		for cut < len(p.held) && !utf8.RuneStart(p.held[cut]) {
			cut++
		}
		p.held = append(p.held[:0], p.held[cut:]...)
	}
	if p.timer != nil {
		return len(b), nil // the flush scheduled sends it
	}
	if wait := progressEvery - time.Since(p.last); wait > 0 {
		p.timer = time.AfterFunc(wait, p.flush)
		return len(b), nil
	}
	p.sendLocked()
	return len(b), nil
}

func (p *progressLines) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	p.sendLocked()
}

// sendLocked sends the whole lines held (the last maxProgressHeld bytes
// of them), and a line longer than maxProgressLine without its end.
func (p *progressLines) sendLocked() {
	send := len(p.held)
	if i := bytes.LastIndexByte(p.held, '\n'); i >= 0 {
		send = i + 1
	} else if len(p.held) <= maxProgressLine {
		return
	}
	// Never split a character: hold its start back for the next send.
	for send > 0 && send < len(p.held) && !utf8.RuneStart(p.held[send]) {
		send--
	}
	from := max(send-maxProgressHeld, 0)
	for from > 0 && from < send && !utf8.RuneStart(p.held[from]) {
		from++
	}
	if from < send {
		sdk.Progress(p.ctx, validText(string(p.held[from:send])))
		p.last = time.Now()
	}
	p.held = append(p.held[:0], p.held[send:]...)
}

// interruptedAfter is how runBash says the user stopped the command: by
// the time it had run, when panto cancelled the call (the user
// interrupted it); "cancelled" otherwise.
func interruptedAfter(ctx context.Context, start time.Time) string {
	if errors.Is(context.Cause(ctx), sdk.ErrCallCancelled) {
		return "interrupted by the user after " + roundElapsed(time.Since(start))
	}
	return "cancelled"
}

// roundElapsed is d as people read a command's time: 3.2s, 45ms, 2m5s.
func roundElapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// tailBuffer keeps the last output of a command: at most max bytes and
// maxLines lines, counting what it dropped. It is safe for concurrent
// writes (stdout and stderr are the same writer, but exec copies each in
// its own goroutine when they are not files).
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int // bytes written in all
	lines int // newlines written in all
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += len(p)
	t.lines += bytes.Count(p, []byte{'\n'})
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		// Keep one byte more than shown, to tell whether the shown
		// part starts a line.
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max-1:]...)
	}
	return len(p), nil
}

// String returns the kept tail, with a note first when anything was cut.
// The tail is valid UTF-8 (bytes that are not read as U+FFFD) and at most
// max bytes as shown; a cut never splits a character.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	raw, cut := t.buf, t.total > len(t.buf)
	atLineStart := true
	if cut {
		// Write keeps one byte more than max: the one before the tail.
		atLineStart, raw = raw[0] == '\n', raw[1:]
	}
	if cut {
		// Write's cut may have split a character: drop its rest.
		for i := 0; i < utf8.UTFMax-1 && len(raw) > 0 && !utf8.RuneStart(raw[0]); i++ {
			raw, atLineStart = raw[1:], false
		}
	}
	tail := validText(string(raw))
	if len(tail) > t.max {
		start := len(tail) - t.max
		atLineStart = tail[start-1] == '\n'
		for !utf8.RuneStart(tail[start]) { // tail is valid: at most 3 steps
			start++
		}
		tail, cut = tail[start:], true
	}
	// Start at a whole line when the cut fell inside one.
	if i := strings.IndexByte(tail, '\n'); cut && !atLineStart && i >= 0 && i+1 < len(tail) {
		tail = tail[i+1:]
	}
	// At most maxLines lines: drop whole lines from the front.
	if body := strings.TrimSuffix(tail, "\n"); strings.Count(body, "\n") >= maxLines {
		i := len(body)
		for range maxLines {
			i = strings.LastIndexByte(body[:i], '\n')
		}
		tail, cut = tail[i+1:], true
	}
	if !cut {
		return tail
	}
	return fmt.Sprintf("[output cut: showing the last %s (%s) of %s (%s); redirect the output to a file and read or grep it to see the rest]\n%s",
		plural(strings.Count(tail, "\n"), "line"), plural(len(tail), "byte"),
		plural(t.lines, "line"), plural(t.total, "byte"), tail)
}
