package extension

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Bounds on an extension's output and on how long its process is waited
// for once it should be gone.
const (
	// forwardMax is the longest stderr line handed to go-plugin whole (it
	// re-logs a JSON line at its level); longer lines are cut to
	// logLineMax with a note of their length. No line limits what is read.
	forwardMax = 16 << 10
	// logLineMax is how much of a long line is logged.
	logLineMax = 4 << 10
	// tailLines and tailBytes bound the end of stderr kept for the message
	// of a failed start; tailLineMax bounds one line of it.
	tailLines   = 20
	tailBytes   = 4 << 10
	tailLineMax = 512
	// drainGrace is how long the pipes may stay open once the process
	// exited and its group was killed: a process that left the group (a
	// new session) may hold them. Then panto closes its ends, so nothing
	// waits for their EOF.
	drainGrace = 250 * time.Millisecond
	// killWait is how long a SIGKILLed process is waited for (one in
	// uninterruptible sleep may not die at once); then it is given up on.
	killWait = time.Second
)

// errStartAborted is returned when the start deadline passed before exec.
var errStartAborted = errors.New("the start deadline passed before the executable was started")

// errNotReaped is the Wait error of a process given up on.
var errNotReaped = errors.New("it did not die within 1s of SIGKILL; given up")

// process is one extension's OS process, owned by panto rather than by
// go-plugin. It leads its own process group (sysProcAttr), so
// killing it kills what it started too. panto holds the real stdout and
// stderr pipes and copies them with no line limit into pipes of its own
// that go-plugin reads: the handshake line (the first on stdout) reaches
// go-plugin whole, later stdout lines are logged, stderr lines are
// forwarded (go-plugin re-logs them) and the last ones kept for the
// message of a failed start. Once the process is gone panto closes
// go-plugin's pipes itself, so go-plugin never waits for an EOF that a
// child holding the real pipes would delay.
type process struct {
	cmd    *exec.Cmd
	logger hclog.Logger

	outR, errR *os.File // panto's ends of the extension's stdout and stderr
	outW, errW *os.File // the extension's ends: closed here once it runs
	// go-plugin reads the handshake from hsR and the stderr lines from
	// logR.
	hsR, logR *io.PipeReader
	hsW, logW *io.PipeWriter

	tail      tail
	handshake atomic.Bool // the first stdout line arrived

	mu       sync.Mutex
	pid      int
	started  bool
	killed   bool // kill was called: a start after it is refused
	reaped   bool // it was reaped: no more group kills
	leftover bool // its group still had processes once it exited
	held     bool // its pipes were still open drainGrace after it exited
	waitErr  error

	exitOnce sync.Once
	exited   chan struct{} // closed once it is reaped (or given up on)
	copiers  sync.WaitGroup
	drained  chan struct{} // closed when both copiers are done
	shut     sync.Once
	closed   chan struct{} // closed once go-plugin's pipes are closed
}

func newProcess(logger hclog.Logger, cmd *exec.Cmd) (*process, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	p := &process{
		cmd: cmd, logger: logger,
		outR: outR, outW: outW, errR: errR, errW: errW,
		exited: make(chan struct{}), drained: make(chan struct{}), closed: make(chan struct{}),
	}
	p.hsR, p.hsW = io.Pipe()
	p.logR, p.logW = io.Pipe()
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = outW, errW
	return p, nil
}

// start execs the process and starts copying its output.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := errStartAborted
	if !p.killed {
		err = p.cmd.Start()
	}
	p.outW.Close()
	p.errW.Close()
	if err != nil {
		p.waitErr = err
		p.exitOnce.Do(func() { close(p.exited) })
		close(p.drained)
		p.closePipes()
		return err
	}
	p.started = true
	p.pid = p.cmd.Process.Pid
	p.copiers.Add(2)
	go p.copyStdout()
	go p.copyStderr()
	go func() {
		p.copiers.Wait()
		close(p.drained)
	}()
	go p.reap()
	return nil
}

// reap waits for the process to exit, kills what is left of its group,
// reaps it, and closes go-plugin's pipes once they are drained (or
// drainGrace has passed).
func (p *process) reap() {
	err := p.cmd.Wait()
	p.mu.Lock()
	// What it started goes with it. Its pid, the group's id, is not
	// reused while the group has members; with none, nothing is hit.
	p.leftover = killGroup(p.cmd.Process)
	p.reaped = true
	p.waitErr = err
	p.mu.Unlock()
	p.exitOnce.Do(func() { close(p.exited) })
	select {
	case <-p.drained:
	case <-time.After(drainGrace):
		p.logger.Debug("the extension's stdout or stderr is still open after it exited (a process outside its group holds it); closing panto's ends")
		p.mu.Lock()
		p.held = true
		p.mu.Unlock()
	}
	p.closePipes()
}

// kill sends SIGKILL to the whole process group, at once; a process not
// yet started never will be.
func (p *process) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killed = true
	if p.started && !p.reaped {
		killGroup(p.cmd.Process)
	}
}

// ran reports whether the process was started (exec succeeded).
func (p *process) ran() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// stopped reports whether the process has exited (or never ran).
func (p *process) stopped() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// end kills the group and waits, bounded, until the process is gone and
// go-plugin's pipes are closed. It reports whether the process died.
func (p *process) end() bool {
	p.kill()
	died := true
	select {
	case <-p.exited:
	case <-time.After(killWait):
		died = false
		p.mu.Lock()
		p.waitErr = errNotReaped
		p.mu.Unlock()
		p.exitOnce.Do(func() { close(p.exited) })
		p.closePipes()
	}
	select {
	case <-p.closed:
	case <-time.After(drainGrace + killWait):
		p.closePipes() // not reached unless reap is stuck
	}
	return died
}

// exitErr is cmd.Wait's error, once exited is closed.
func (p *process) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// leftovers reports whether its group still had processes once it
// exited, and whether something outside the group held its pipes.
func (p *process) leftovers() (group, held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leftover, p.held
}

// closePipes closes panto's ends of the real pipes and go-plugin's pipes:
// go-plugin's readers see EOF whatever holds the real ones.
func (p *process) closePipes() {
	p.shut.Do(func() {
		p.outR.Close()
		p.errR.Close()
		p.hsW.Close()
		p.logW.Close()
		close(p.closed)
	})
}

// copyStdout hands the first line (the handshake) to go-plugin, then
// closes go-plugin's stdout, and logs every later line.
func (p *process) copyStdout() {
	defer p.copiers.Done()
	defer p.hsW.Close()
	first := true
	readLines(p.outR, forwardMax, func(head []byte, n int) {
		if first {
			first = false
			p.handshake.Store(true)
			line := head
			if n > len(head) {
				line = []byte(cut(head, n))
			}
			_, _ = p.hsW.Write(append(line, '\n'))
			_ = p.hsW.Close()
			return
		}
		p.logger.Debug("extension output", "stream", "stdout", "text", cut(head, n))
	})
}

// copyStderr keeps the last lines and forwards each to go-plugin, cut
// when long.
func (p *process) copyStderr() {
	defer p.copiers.Done()
	defer p.logW.Close()
	readLines(p.errR, forwardMax, func(head []byte, n int) {
		p.tail.add(head, n)
		line := head
		if n > len(head) {
			line = []byte(cut(head, n))
		}
		_, _ = p.logW.Write(append(line, '\n'))
	})
}

// readLines calls f for each line of r, however long, with up to keep
// bytes of it (no newline; f must not keep head) and its whole length.
func readLines(r io.Reader, keep int, f func(head []byte, n int)) {
	br := bufio.NewReaderSize(r, 4<<10)
	var head []byte // grows with the longest line, up to keep
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		end := err == nil
		if end {
			chunk = chunk[:len(chunk)-1]
		}
		n += len(chunk)
		if room := keep - len(head); room > 0 {
			head = append(head, chunk[:min(room, len(chunk))]...)
		}
		if end || (err != bufio.ErrBufferFull && n > 0) {
			f(head, n)
			head, n = head[:0], 0
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// cut returns a line of n bytes whose start is head as text, at most
// logLineMax of it, with a note of its length when cut.
func cut(head []byte, n int) string {
	if n <= logLineMax && n == len(head) {
		return string(head)
	}
	return fmt.Sprintf("%s… (a line of %d bytes, cut)", head[:min(len(head), logLineMax)], n)
}

// tail is the end of an extension's stderr: at most tailLines lines and
// tailBytes bytes.
type tail struct {
	mu      sync.Mutex
	lines   []string
	size    int
	dropped bool
}

func (t *tail) add(head []byte, n int) {
	line := string(head)
	if n > tailLineMax {
		line = fmt.Sprintf("%s… (%d bytes)", head[:min(len(head), tailLineMax)], n)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line)
	for len(t.lines) > tailLines || t.size > tailBytes {
		t.size -= len(t.lines[0])
		t.lines = t.lines[1:]
		t.dropped = true
	}
}

// String returns the kept lines, each on a line of its own after
// "  stderr: ", or "" when there are none.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	var b strings.Builder
	if t.dropped {
		b.WriteString("\n  stderr: […]")
	}
	for _, l := range t.lines {
		b.WriteString("\n  stderr: ")
		b.WriteString(l)
	}
	return b.String()
}
