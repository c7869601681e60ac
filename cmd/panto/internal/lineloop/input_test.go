package lineloop

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chunks reads data in pieces of n bytes.
type chunks struct {
	data string
	n    int
}

func (c *chunks) Read(p []byte) (int, error) {
	if c.data == "" {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

// all takes every line of in until the input ends.
func all(t testing.TB, in *Input) ([]string, error) {
	var lines []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		if l, ok := in.Next(); ok {
			lines = append(lines, l.Text)
			continue
		}
		if done, err := in.Done(); done {
			return lines, err
		}
		select {
		case <-in.Ready():
		case <-time.After(time.Until(deadline)):
			t.Fatalf("the input did not end; lines so far: %q", lines)
		}
	}
}

func TestInputLines(t *testing.T) {
	t.Parallel()
	lines, err := all(t, NewInput(strings.NewReader("a\nb\r\n\nhalf")))
	require.Equal(t, []string{"a", "b", ""}, lines)
	var u *UnsentError
	require.True(t, errors.As(err, &u))
	require.Equal(t, "half", u.Text)
	require.Contains(t, u.Error(), `not sent: "half"`)

	lines, err = all(t, NewInput(strings.NewReader("a\n")))
	require.Equal(t, []string{"a"}, lines)
	require.NoError(t, err)
}

// Each line is stamped with the read that ended it: lines typed ahead
// carry an earlier time than one typed later.
func TestInputStampsLinesByTheirRead(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	in := NewInput(r)
	io.WriteString(w, "one\ntwo\nthr")
	<-in.Ready()
	one, _ := in.Next()
	two, _ := in.Next()
	require.Equal(t, one.At, two.At)
	mark := time.Now()
	io.WriteString(w, "ee\n")
	<-in.Ready()
	three, ok := in.Next()
	require.True(t, ok)
	require.Equal(t, "three", three.Text)
	require.False(t, three.At.Before(mark), "a line ends when its newline is read")
	w.Close()
}

func TestInputDiscard(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	in := NewInput(r)
	io.WriteString(w, "typed\nahead\n")
	<-in.Ready()
	for {
		in.mu.Lock()
		n := len(in.queue)
		in.mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	dropped := in.Discard()
	require.Len(t, dropped, 2)
	_, ok := in.Next()
	require.False(t, ok)
	io.WriteString(w, "after\n")
	<-in.Ready()
	l, ok := in.Next()
	require.True(t, ok)
	require.Equal(t, "after", l.Text)
	w.Close()
}

// The read-ahead is bounded: what is not taken waits in the input.
func TestInputBounded(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("x\n", 3*maxQueued)
	in := NewInput(strings.NewReader(text))
	time.Sleep(50 * time.Millisecond)
	in.mu.Lock()
	require.LessOrEqual(t, len(in.queue), maxQueued)
	in.mu.Unlock()
	lines, err := all(t, in)
	require.NoError(t, err)
	require.Len(t, lines, 3*maxQueued)
}

func TestInputLongLine(t *testing.T) {
	t.Parallel()
	_, err := all(t, NewInput(&chunks{strings.Repeat("x", MaxLine+1), 1 << 20}))
	require.ErrorContains(t, err, "a line longer than 16 MiB")
}

// FuzzInput: whatever the bytes and however the reads cut them, the
// lines are the text's lines, and what follows the last newline is
// reported unsent.
func FuzzInput(f *testing.F) {
	f.Add("a\nb\r\nc", 1)
	f.Add("\r\n\n\r", 2)
	f.Add("yes\n\x1b[6n\n", 3)
	f.Fuzz(func(t *testing.T, data string, n int) {
		if n < 1 {
			n = 1
		}
		lines, err := all(t, NewInput(&chunks{data, n}))
		want := strings.Split(data, "\n")
		tail := want[len(want)-1]
		want = want[:len(want)-1]
		for i := range want {
			want[i] = strings.TrimSuffix(want[i], "\r")
		}
		if len(want) == 0 {
			want = nil
		}
		require.Equal(t, want, lines)
		var u *UnsentError
		if tail == "" {
			require.NoError(t, err)
		} else {
			require.True(t, errors.As(err, &u), "%v", err)
			require.Equal(t, tail, u.Text)
		}
	})
}
