// Command ttyprobe is what a hostile command run by the model's bash
// would try, to reach the user's terminal: open /dev/tty and write an
// escape sequence to it, push input into it with TIOCSTI, and the same
// through the terminal's path (/dev/pts/N, given). For the e2e tests of
// the extensions' isolation (isolation_e2e_test.go) only; Linux only.
//
//	ttyprobe check PTS
//	    prints, as JSON, what each route gave (Report)
//	ttyprobe inject [-setpgid] TRIGGER RESULT PTS WORD
//	    waits for the file TRIGGER, then pushes WORD and a CR into the
//	    terminal by every route it has and writes its Report to RESULT;
//	    with -setpgid it first leaves its process group, as a process
//	    that means to outlive a group kill does
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Report is what each route gave: "ok", or the error.
type Report struct {
	PID int `json:"pid"`
	// DevTTY is opening /dev/tty; DevTTYWrite writing the marker to it;
	// DevTTYInject TIOCSTI through it.
	DevTTY       string `json:"dev_tty"`
	DevTTYWrite  string `json:"dev_tty_write,omitempty"`
	DevTTYInject string `json:"dev_tty_inject,omitempty"`
	// PTS is opening the terminal by its path; PTSInject TIOCSTI through
	// it.
	PTS       string `json:"pts"`
	PTSInject string `json:"pts_inject,omitempty"`
	Setpgid   string `json:"setpgid,omitempty"`
}

// Marker is what the probe writes to /dev/tty when it can: an OSC title
// and text that must never reach the terminal. It is spelled here only,
// never on a command line that panto would show.
const Marker = "\x1b]2;QZX-TTY-PROBE-TITLE\x07QZX-TTY-PROBE-RAW\r\n"

func main() {
	if len(os.Args) < 2 {
		fail("usage: ttyprobe check PTS | inject [-setpgid] TRIGGER RESULT PTS WORD")
	}
	switch os.Args[1] {
	case "check":
		if len(os.Args) != 3 {
			fail("usage: ttyprobe check PTS")
		}
		out, _ := json.Marshal(probe(os.Args[2], "", false))
		fmt.Println(string(out))
	case "inject":
		args := os.Args[2:]
		setpgid := len(args) > 0 && args[0] == "-setpgid"
		if setpgid {
			args = args[1:]
		}
		if len(args) != 4 {
			fail("usage: ttyprobe inject [-setpgid] TRIGGER RESULT PTS WORD")
		}
		var r Report
		if setpgid {
			r.Setpgid = errText(leaveGroup())
		}
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(args[0]); err == nil {
				break
			}
			if time.Now().After(deadline) {
				fail("no trigger " + args[0])
			}
		}
		p := probe(args[2], args[3]+"\r", true)
		p.Setpgid = r.Setpgid
		out, _ := json.Marshal(p)
		tmp := args[1] + ".tmp"
		if err := os.WriteFile(tmp, out, 0o644); err != nil {
			fail(err.Error())
		}
		if err := os.Rename(tmp, args[1]); err != nil {
			fail(err.Error())
		}
	default:
		fail("unknown mode " + os.Args[1])
	}
}

func errText(err error) string {
	if err != nil {
		return err.Error()
	}
	return "ok"
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "ttyprobe:", msg)
	os.Exit(2)
}
