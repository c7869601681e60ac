package sdk_test

import (
	"context"
	"net"
	"testing"

	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
	"github.com/panto-dev/panto/sdk"
)

// latin1 is "café" in Latin-1: not valid UTF-8.
const latin1 = "caf\xe9"

// utf8Ext answers tool calls and commands with Latin-1 text, and keeps
// the text of the before_turn event it was given.
type utf8Ext struct {
	sdk.Base
	got chan string
}

func (e *utf8Ext) Tools() []sdk.Tool {
	return []sdk.Tool{{Name: "cat", Description: "prints a Latin-1 file",
		Run: func(context.Context, sdk.Host, sdk.ToolCall) (sdk.ToolResult, error) {
			return sdk.ToolResult{Content: "read " + latin1}, nil
		}}}
}

func (e *utf8Ext) BeforeTurn(_ context.Context, _ sdk.Host, ev sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	e.got <- ev.UserText
	return sdk.BeforeTurnResponse{}, nil
}

// serveReal serves ext over a real local gRPC connection with the options
// both ends of panto use (or none), the way sdk.Serve and the host do.
func serveReal(t *testing.T, ext sdk.Extension, serverOpts []grpc.ServerOption, dialOpts []grpc.DialOption) pb.ExtensionClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer(serverOpts...)
	require.NoError(t, sdk.PluginFor(ext, nil).(plugin.GRPCPlugin).GRPCServer(nil, s))
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), append(dialOpts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return pb.NewExtensionClient(conn)
}

func TestInvalidUTF8NeverFailsACall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ev := func() *pb.EventRequest {
		return &pb.EventRequest{Event: sdk.EventBeforeTurn, Payload: &pb.EventRequest_BeforeTurn{BeforeTurn: &pb.BeforeTurn{UserText: "stdin said " + latin1}}}
	}

	// Without the repair the calls fail, as they did for panto: the
	// extension's reply cannot be marshalled, nor the host's request.
	bare := serveReal(t, &utf8Ext{got: make(chan string, 1)}, nil, nil)
	_, err := bare.CallTool(ctx, &pb.ToolCallRequest{Call: &pb.ToolCall{Id: "1", Name: "cat"}})
	require.ErrorContains(t, err, "invalid UTF-8")
	_, err = bare.HandleEvent(ctx, ev())
	require.ErrorContains(t, err, "invalid UTF-8")

	// With panto's options both directions carry the text, each invalid
	// byte shown as U+FFFD.
	e := &utf8Ext{got: make(chan string, 1)}
	c := serveReal(t, e, protocol.ServerOptions(), protocol.DialOptions())
	resp, err := c.CallTool(ctx, &pb.ToolCallRequest{Call: &pb.ToolCall{Id: "1", Name: "cat"}})
	require.NoError(t, err)
	require.Equal(t, "read caf\uFFFD", resp.Content)
	_, err = c.HandleEvent(ctx, ev())
	require.NoError(t, err)
	require.Equal(t, "stdin said caf\uFFFD", <-e.got)
}

func TestLargeMessagesPass(t *testing.T) {
	t.Parallel()
	// A 5 MB tool input is over gRPC's default 4 MB limit.
	big := make([]byte, 5<<20)
	for i := range big {
		big[i] = 'a'
	}
	input := []byte(`{"content":"` + string(big) + `"}`)
	c := serveReal(t, &utf8Ext{got: make(chan string, 1)}, protocol.ServerOptions(), protocol.DialOptions())
	resp, err := c.CallTool(context.Background(), &pb.ToolCallRequest{Call: &pb.ToolCall{Id: "1", Name: "cat", Input: input}})
	require.NoError(t, err)
	require.Equal(t, "read caf\uFFFD", resp.Content)
}
