package sdk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/sdk"
)

// ToolProgress records "progress:CALL:TEXT".
func (f *fakeHost) ToolProgress(_ context.Context, req *pb.ToolProgressRequest) (*pb.ToolProgressResponse, error) {
	f.rec.add("progress:" + req.GetToolCallId() + ":" + req.GetText())
	return &pb.ToolProgressResponse{}, nil
}

// progressExt offers "count", which sends input.n lines as progress, one
// Progress call each, and then waits for wait before it answers.
type progressExt struct {
	sdk.Base
	wait time.Duration
}

func (e *progressExt) Tools() []sdk.Tool {
	return []sdk.Tool{{Name: "count", Description: "counts",
		Run: func(ctx context.Context, _ sdk.Host, call sdk.ToolCall) (sdk.ToolResult, error) {
			var b strings.Builder
			for i := range 200 {
				line := fmt.Sprintf("line %d\n", i)
				sdk.Progress(ctx, line)
				b.WriteString(line)
			}
			time.Sleep(e.wait)
			return sdk.ToolResult{Content: b.String() + "done"}, nil
		}}}
}

func progressOf(calls []string) (text string, sends int) {
	for _, c := range calls {
		if rest, ok := strings.CutPrefix(c, "progress:"); ok {
			id, piece, _ := strings.Cut(rest, ":")
			if id == "c1" {
				text += piece
				sends++
			}
		}
	}
	return text, sends
}

// A tool's progress reaches a panto of API v6 while the call runs, for
// the call it belongs to, in order and whole; a flood of pieces is
// gathered into a few sends.
func TestToolProgressReachesTheHost(t *testing.T) {
	t.Parallel()
	p, resp := start(t, &progressExt{wait: 500 * time.Millisecond})
	require.GreaterOrEqual(t, resp.ApiVersion, uint32(6))
	res, err := p.client.CallTool(context.Background(), &pb.ToolCallRequest{Call: &pb.ToolCall{Id: "c1", Name: "count"}})
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(res.GetContent(), "done"))
	text, sends := progressOf(p.rec.list())
	var want strings.Builder
	for i := range 200 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	require.Equal(t, want.String(), text, "every piece, in order, before the call answered")
	require.Less(t, sends, 10, "200 pieces at once are a few sends")
}

// An extension built on this SDK with a panto that does not know
// ToolProgress (API v5): Progress is dropped silently, nothing is sent
// to the host, and the call answers as before.
func TestToolProgressIsDroppedWithAnOlderHost(t *testing.T) {
	t.Parallel()
	p := serve(t, &progressExt{wait: 300 * time.Millisecond})
	resp, err := p.client.Init(context.Background(), &pb.InitRequest{ApiVersion: 5, MinApiVersion: 1, HostBrokerId: p.hostID})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, uint32(5), resp.ApiVersion, "the newest version both speak")
	res, err := p.client.CallTool(context.Background(), &pb.ToolCallRequest{Call: &pb.ToolCall{Id: "c1", Name: "count"}})
	require.NoError(t, err)
	require.False(t, res.GetIsError())
	require.True(t, strings.HasSuffix(res.GetContent(), "line 199\ndone"), res.GetContent())
	time.Sleep(200 * time.Millisecond)
	for _, c := range p.rec.list() {
		require.NotContains(t, c, "progress:", "a v5 panto is sent no progress")
	}
}

// Progress outside a tool call (a hook's context, a bare one) does
// nothing, and WithProgress sends it where a harness wants it.
func TestProgressOutsideACall(t *testing.T) {
	t.Parallel()
	sdk.Progress(context.Background(), "nowhere") // no panic, nothing to do
	var got []string
	ctx := sdk.WithProgress(context.Background(), func(text string) { got = append(got, text) })
	sdk.Progress(ctx, "a")
	sdk.Progress(ctx, "")
	sdk.Progress(ctx, "b\n")
	require.Equal(t, []string{"a", "b\n"}, got)
}
