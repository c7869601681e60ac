package tui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"
)

// chunks is a terminal's input: one chunk per Read, as its reads come;
// Pending says the next chunk is of the same burst (already waiting).
type chunks struct {
	c    [][]byte
	same []bool // same[i]: chunk i+1 is waiting when chunk i is read
	next bool
}

func (r *chunks) Read(p []byte) (int, error) {
	if len(r.c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.c[0])
	if n < len(r.c[0]) {
		r.c[0] = r.c[0][n:]
		r.next = true
		return n, nil
	}
	r.c = r.c[1:]
	r.next = r.same[0]
	r.same = r.same[1:]
	return n, nil
}

func (r *chunks) Pending() bool { return r.next }

// input makes a terminal's input of bursts, each of reads split at "|".
func input(bursts ...string) *chunks {
	r := &chunks{}
	for _, b := range bursts {
		reads := strings.Split(b, "|")
		for i, rd := range reads {
			r.c = append(r.c, []byte(rd))
			r.same = append(r.same, i < len(reads)-1)
		}
	}
	return r
}

// guarded is what the guard passes on, one string per Read.
func guarded(bursts ...string) []string {
	g := newPasteGuard(input(bursts...))
	var out []string
	buf := make([]byte, 4096)
	for {
		n, err := g.Read(buf)
		if n > 0 {
			out = append(out, string(buf[:n]))
		}
		if err != nil {
			return out
		}
	}
}

const (
	ps = "\x1b[200~"
	pe = "\x1b[201~"
)

// Bytes that come with a paste's end marker are the paste's: a paste
// holding "\e[201~\r" keeps it as text and ends with its burst; keys
// typed after a paste, in bursts of their own, are keys.
func TestPasteGuardJudgesMarkersByTheBurst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []string // bursts; "|" splits a burst's reads
		want []string // one per Read
	}{
		{"a plain paste", []string{ps + "abc" + pe}, []string{ps + "abc" + pe}},
		{"keys after, in their own burst", []string{ps + "abc" + pe, "\r"}, []string{ps + "abc" + pe, "\r"}},
		{"the end marker in the text", []string{ps + "x" + pe + "\rrm -rf ~\r" + pe}, []string{ps + "x␛[201~\rrm -rf ~\r" + pe}},
		{"bytes after the last marker", []string{ps + "x" + pe + "\r"}, []string{ps + "x␛[201~\r" + pe}},
		{"a start marker in the text", []string{ps + "a" + ps + "b" + pe}, []string{ps + "a␛[200~b" + pe}},
		{"a burst of reads", []string{ps + "one" + pe + "\r|two\r|" + pe}, []string{ps + "one␛[201~\r", "two\r", pe}},
		{"a burst ending after an end in its text", []string{ps + "one" + pe + "|\rtwo\r", "\r"}, []string{ps + "one␛[201~", "\rtwo\r" + pe, "\r"}},
		{"a marker cut by a read, more waiting", []string{ps + "x\x1b[20|1~\rrm\r" + pe}, []string{ps + "x", "␛[201~\rrm\r" + pe}},
		{"a long paste over bursts", []string{ps + "one\r", "two\r" + pe, "\r"}, []string{ps + "one\r", "two\r" + pe, "\r"}},
		{"an end cut between bursts, more after", []string{ps + "x\x1b[20", "1~\rrm\r"}, []string{ps + "x\x1b[20", "1~" + ps + "\rrm\r" + pe}},
		{"an end cut between bursts, nothing after", []string{ps + "x\x1b[2", "01~", "\r"}, []string{ps + "x\x1b[2", "01~", "\r"}},
		{"a start cut between bursts", []string{"\x1b[2", "00~a" + pe + "\r"}, []string{"\x1b[2", "00~a␛[201~\r" + pe}},
		{"an end with no paste open", []string{"abc\r" + pe + "x"}, []string{ps + "abc\r␛[201~x" + pe}},
		{"no markers", []string{"hello\r", "\x1b[A"}, []string{"hello\r", "\x1b[A"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, guarded(tc.in...))
		})
	}
}

// Under bubbletea, a paste whose text holds its end marker and CRs,
// written in one write, sends nothing: it is all in the editor.
func TestPasteWithItsEndMarkerSendsNothing(t *testing.T) {
	t.Parallel()
	f := newFake()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := Options{App: &fakeApp{open: func(context.Context) (Session, error) { return f, nil }}, CWD: t.TempDir(),
		Input: pr, Output: io.Discard, Theme: "dark"}
	pb := probe{New(ctx, o)}
	p := tea.NewProgram(pb, ProgramOptions(ctx, o)...)
	done := make(chan struct{})
	go func() { defer close(done); p.Run() }()
	ask := func() (string, bool) {
		got := make(chan probed, 1)
		p.Send(probeMsg{got})
		r := <-got
		return r.editor, r.open
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, open := ask(); !open; _, open = ask() {
		require.True(t, time.Now().Before(deadline), "the session never opened")
		time.Sleep(10 * time.Millisecond)
	}
	_, err := pw.Write([]byte(ps + "first" + pe + "\rsecond\r" + pe))
	require.NoError(t, err)
	for text, _ := ask(); !strings.Contains(text, "second"); text, _ = ask() {
		require.True(t, time.Now().Before(deadline), "the paste never came: %q", text)
		time.Sleep(10 * time.Millisecond)
	}
	text, _ := ask()
	require.Equal(t, "first␛[201~\nsecond\n", text, "the paste, whole, in the editor")
	require.Empty(t, f.sentTexts(), "nothing was sent")
	p.Quit()
	pw.Close()
	<-done
}

// probe runs a Model under bubbletea and answers what the test asks of
// it from Update, where the model is the program's.
type probe struct{ m *Model }

type probeMsg struct{ got chan<- probed }

type probed struct {
	editor string
	open   bool
}

func (p probe) Init() tea.Cmd { return p.m.Init() }
func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if q, ok := msg.(probeMsg); ok {
		q.got <- probed{p.m.ed.message(), p.m.sess != nil}
		return p, nil
	}
	_, cmd := p.m.Update(msg)
	return p, cmd
}
func (p probe) View() tea.View { return p.m.View() }

// The guard never passes on more than the reader asked for, and a paste
// it saw end in a read ends with that read: nothing after it is a key.
func FuzzPasteGuard(f *testing.F) {
	f.Add(ps+"a"+pe+"\rb\r"+pe, 3)
	f.Add("\x1b[20"+ps+"\x1b[201"+pe+"~\r", 5)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		cut = max(1, cut%64)
		// Reads of cut bytes; a burst ends after every third read.
		r := &chunks{}
		for i, k := 0, 0; i < len(s); i, k = i+cut, k+1 {
			r.c = append(r.c, []byte(s[i:min(len(s), i+cut)]))
			r.same = append(r.same, k%3 != 2 && i+cut < len(s))
		}
		bursts := map[int]bool{} // where in the input a burst ends
		for i, n := 0, 0; i < len(r.c); i++ {
			n += len(r.c[i])
			if !r.same[i] {
				bursts[n] = true
			}
		}
		g := newPasteGuard(r)
		var out [][]byte
		var outBurst []bool
		buf := make([]byte, 64+cut*2+32)
		for {
			n, err := g.Read(buf)
			if n > len(buf) {
				t.Fatalf("read %d into %d", n, len(buf))
			}
			if n > 0 {
				out = append(out, append([]byte(nil), buf[:n]...))
				outBurst = append(outBurst, !r.next)
			}
			if err != nil {
				break
			}
		}
		// A decoder's view: a paste closed in a burst ends the burst (or
		// a paste of its own follows at once).
		var stream []byte
		ends := map[int]bool{}
		for i, c := range out {
			stream = append(stream, c...)
			if outBurst[i] {
				ends[len(stream)] = true
			}
		}
		isEnd := func(i int) bool { return ends[i] || i == len(stream) }
		inP := false
		for i := 0; i < len(stream); {
			switch {
			case bytes.HasPrefix(stream[i:], []byte(ps)):
				inP = true
				i += len(ps)
			case bytes.HasPrefix(stream[i:], []byte(pe)):
				j := i + len(pe)
				if inP && !isEnd(j) && !bytes.HasPrefix(stream[j:], []byte(ps)) {
					t.Fatalf("a paste ends mid-burst at %d: %q (reads %q)", i, stream, out)
				}
				inP = false
				i = j
			default:
				i++
			}
		}
	})
}
