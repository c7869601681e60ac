package sse

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type got struct {
	Name, Data string
	Line       int
}

func readAll(t *testing.T, in string) []got {
	t.Helper()
	r := NewReader(strings.NewReader(in))
	var out []got
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, got{ev.Name, string(ev.Data), ev.Line})
	}
}

func TestReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"anthropic style", "event: ping\ndata: {\"type\":\"ping\"}\n\nevent: message_stop\ndata: {}\n\n",
			[]got{{"ping", `{"type":"ping"}`, 1}, {"message_stop", "{}", 4}}},
		{"openai style", "data: {\"a\":1}\n\ndata: [DONE]\n\n",
			[]got{{"", `{"a":1}`, 1}, {"", "[DONE]", 3}}},
		{"crlf and comments", ": keep-alive\r\n\r\nevent: x\r\ndata: 1\r\n\r\n",
			[]got{{"x", "1", 3}}},
		{"lone cr", "data: a\rdata: b\r\r", []got{{"", "a\nb", 1}}},
		{"multi-line data", "data: a\ndata:b\ndata:\n\n", []got{{"", "a\nb\n", 1}}},
		{"no space after colon", "event:e\ndata:d\n\n", []got{{"e", "d", 1}}},
		{"unknown fields ignored", "id: 7\nretry: 10\nfoo\ndata: x\n\n", []got{{"", "x", 1}}},
		{"last event without blank line", "data: x\n\ndata: {\"cut", []got{{"", "x", 1}, {"", `{"cut`, 3}}},
		{"blank lines only", "\n\n\r\n", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, readAll(t, tt.in))
		})
	}
}

// A line as long as a large tool input (17 MB) is read; one over MaxLine
// is an error naming the line, the limit, the field and the event.
func TestReaderLongLines(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 17<<20)
	require.Equal(t, []got{{"content_block_delta", big, 1}, {"", "after", 4}},
		readAll(t, "event: content_block_delta\ndata: "+big+"\r\n\ndata: after\n\n"))
	exact := strings.Repeat("y", MaxLine-len("data: "))
	require.Equal(t, []got{{"", exact, 1}}, readAll(t, "data: "+exact+"\r\n\r\n"), "a line of exactly MaxLine bytes")

	for _, tc := range []struct{ name, in, want string }{
		{"named event", "event: ping\ndata: {}\n\nevent: content_block_delta\ndata: " + strings.Repeat("x", MaxLine) + "\n\n",
			`read event stream line 5: the line is longer than 64 MiB, the limit for one line (the "data" field of event "content_block_delta")`},
		{"no name, no end of line", "data: " + strings.Repeat("x", MaxLine+10),
			`read event stream line 1: the line is longer than 64 MiB, the limit for one line (the "data" field of an event without a name)`},
		{"no colon", strings.Repeat("z", MaxLine+1) + "\n",
			`read event stream line 1: the line is longer than 64 MiB, the limit for one line (the "` + strings.Repeat("z", 64) + `" field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.in))
			var err error
			for err == nil {
				_, err = r.Next()
			}
			require.ErrorIs(t, err, ErrLineTooLong)
			require.ErrorContains(t, err, tc.want)
			var long *LineTooLongError
			require.ErrorAs(t, err, &long)
		})
	}
}

func FuzzReader(f *testing.F) {
	f.Add("event: a\ndata: b\n\n")
	f.Add("data: [DONE]\r\n\r\n")
	f.Add(": c\rdata:x\r\rdata")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewReader(strings.NewReader(in))
		for i := 0; i <= len(in)+1; i++ {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if ev.Line < 1 {
				t.Fatalf("event with line %d", ev.Line)
			}
		}
		t.Fatal("reader did not end")
	})
}
