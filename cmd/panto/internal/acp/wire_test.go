package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// chunked reads its data a few bytes at a time, as a pipe may.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// peek passes stdin through unchanged, however it is cut, and tells the
// messages it looks at once each, in order.
func TestPeekPassesThroughAndTells(t *testing.T) {
	t.Parallel()
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"panto-1","result":{"action":"accept"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s2","prompt":[]}}`
	for _, n := range []int{1, 2, 7, 1 << 16} {
		var told []string
		var answered [][]byte
		p := &peek{r: &chunked{data: []byte(input), n: n},
			seen: func(method string, _ json.RawMessage) { told = append(told, method) },
			answer: func(line []byte) bool {
				ok := bytes.Contains(line, []byte(`"panto-1"`))
				if ok {
					answered = append(answered, bytes.Clone(line))
				}
				return ok
			},
		}
		out, err := io.ReadAll(p)
		require.NoError(t, err)
		require.Equal(t, input, string(out), "read in pieces of %d", n)
		require.Equal(t, []string{"initialize", "session/cancel"}, told, "the last line has no newline yet: not a message")
		require.Len(t, answered, 1)
	}
}

// A line longer than maxPeek is passed through and not looked at.
func TestPeekSkipsAnOverlongLine(t *testing.T) {
	t.Parallel()
	long := `{"method":"session/cancel","params":{"sessionId":"` + string(bytes.Repeat([]byte("x"), maxPeek)) + `"}}` + "\n"
	input := long + `{"method":"session/cancel","params":{"sessionId":"s"}}` + "\n"
	var told []string
	p := &peek{r: &chunked{data: []byte(input), n: 1 << 15}, seen: func(m string, _ json.RawMessage) { told = append(told, m) }}
	out, err := io.ReadAll(p)
	require.NoError(t, err)
	require.Equal(t, len(input), len(out))
	require.Equal(t, []string{"session/cancel"}, told, "only the line that fits")
}

// The gate of a session opens once its session/new response is written,
// not before, whatever else is.
func TestWireGateOpensOnTheResponse(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := newWire(&out)
	gate := w.gate("abc")
	write := func(s string) {
		_, err := w.Write([]byte(s + "\n"))
		require.NoError(t, err)
	}
	write(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"abc","update":{}}}`)
	write(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"abcd"}}`)
	select {
	case <-gate:
		t.Fatal("the gate opened before the session's response")
	default:
	}
	write(`{"jsonrpc":"2.0","id":2,"result":{"configOptions":[],"sessionId":"abc"}}`)
	select {
	case <-gate:
	default:
		t.Fatal("the gate did not open on the session/new response")
	}
}

// FuzzPeek: any stdin, cut anywhere, goes through peek byte for byte,
// and peek never panics.
func FuzzPeek(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientCapabilities":{"session":{"notices":{}}}}}`+"\n"), 3)
	f.Add([]byte(`{"method":"session/cancel","params":{"sessionId":7}}`+"\n"+`{"id":"panto-9","result":null}`+"\n"), 1)
	f.Add([]byte("\n\n{\"method\":\"session/prompt\"\n"), 2)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n <= 0 {
			n = 1
		}
		a := newAgent(Options{}, io.Discard)
		p := &peek{r: &chunked{data: bytes.Clone(data), n: n}, seen: a.peeked, answer: a.wire.answer}
		out, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("peek changed the stream")
		}
	})
}
