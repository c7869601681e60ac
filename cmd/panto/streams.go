package main

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// The process's stdout and stderr, decided in one place: at a terminal,
// every byte panto writes goes through termtext, so text from outside —
// model text, tool output, file names, prompt files, extension texts,
// session logs, error messages that quote them — shows its escape
// sequences and controls instead of the terminal obeying them. To a pipe
// or a file the bytes pass unchanged, so `panto -p … > out.txt` and
// `panto prompt | diff` stay exact.
//
// Two writers skip the generic sanitizer: the full-screen UI, whose
// styling is its own escapes and which sanitizes the text it draws (it
// takes the terminal itself, env.termOut), and --mode json and the other
// JSON outputs, which termtext.JSON makes safe without changing what they
// decode to (env.jsonStdout).

// streams are what main hands to env.
type streams struct {
	// stdout and stderr are what everything writes to: sanitized at a
	// terminal.
	stdout, stderr io.Writer
	// rawStdout is stdout without the sanitizer (still outliving its
	// reader): nil when stdout is not a terminal, where stdout is raw.
	rawStdout io.Writer
	// termOut is stdout when it is a terminal, nil otherwise.
	termOut *os.File
}

// newStreams wraps the process's stdout and stderr.
func newStreams(stdout, stderr *os.File) streams {
	raw := &stdoutWriter{w: stdout}
	s := streams{stdout: raw, stderr: stderr}
	if isTerminal(stdout) {
		s.stdout, s.rawStdout, s.termOut = termtext.NewWriter(raw), raw, stdout
	}
	if isTerminal(stderr) {
		s.stderr = termtext.NewWriter(stderr)
	}
	return s
}

// flush writes what the streams' sanitizers hold back (a trailing CR, a
// UTF-8 sequence cut short), as before panto exits.
func (s streams) flush() { flush(s.stdout, s.stderr) }

// flush flushes each writer that holds text back (a termtext.Writer, a
// jsonTerm): called at the end of each piece of output that must appear
// now — a reply's end, a prompt, a question.
func flush(ws ...io.Writer) {
	for _, w := range ws {
		if f, ok := w.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
	}
}

// jsonStdout is where JSON output goes: stdout, raw, when it is not a
// terminal; at a terminal the raw stream through termtext.JSON, which
// escapes what encoding/json leaves raw (DEL, C1 and bidi controls) as
// \uXXXX, so a reader decodes the same values.
func (e *env) jsonStdout() io.Writer {
	if e.rawStdout == nil {
		return e.stdout
	}
	return &jsonTerm{w: e.rawStdout}
}

// jsonTerm writes JSON text through termtext.JSON a line at a time, so a
// rune cut between two writes is judged whole: encoding/json ends every
// value with a newline, and the text of a line is valid UTF-8.
type jsonTerm struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

func (j *jsonTerm) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.held = append(j.held, p...)
	i := bytes.LastIndexByte(j.held, '\n')
	if i < 0 {
		return len(p), nil
	}
	if _, err := j.w.Write(termtext.JSON(j.held[:i+1])); err != nil {
		return 0, err
	}
	j.held = append(j.held[:0], j.held[i+1:]...)
	return len(p), nil
}

// Flush writes a last line that did not end with a newline.
func (j *jsonTerm) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.held) == 0 {
		return nil
	}
	_, err := j.w.Write(termtext.JSON(j.held))
	j.held = j.held[:0]
	return err
}
