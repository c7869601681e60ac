// Command rawplug is a test extension that serves pb.Extension directly,
// without the SDK, as an extension in another language would. What it does
// is chosen by the name it is run under (see sdkplug).
package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
)

type server struct {
	pb.UnimplementedExtensionServer
	name, behaviour string
}

func (s *server) Init(context.Context, *pb.InitRequest) (*pb.InitResponse, error) {
	// A version-1 extension, as one built before API v2 answers; "v9" is
	// one from a panto far ahead.
	resp := &pb.InitResponse{ApiVersion: 1, Name: s.name, Events: []string{protocol.EventSessionStart}}
	if s.behaviour == "v9" {
		resp.ApiVersion = 9
	}
	return resp, nil
}

func (s *server) HandleEvent(context.Context, *pb.EventRequest) (*pb.EventResponse, error) {
	if s.behaviour == "bareedits" {
		// bare on a replace leaves the prompt bare; on an append it means
		// nothing.
		return &pb.EventResponse{Edits: []*pb.SystemEdit{
			{Mode: "replace", Text: "r1"},
			{Mode: "replace", Text: "r2", Bare: true},
			{Mode: "append", Text: "a3", Bare: true},
		}}, nil
	}
	return &pb.EventResponse{Edits: []*pb.SystemEdit{
		{Mode: "append", Text: "e1"},
		{Mode: "replace", Text: "e2"},
		{Mode: "sideways", Text: "bad"},
		{Mode: "append", Text: "e3"},
	}}, nil
}

func (s *server) Shutdown(context.Context, *pb.ShutdownRequest) (*pb.ShutdownResponse, error) {
	return &pb.ShutdownResponse{}, nil
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv *server
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterExtensionServer(s, p.srv)
	return nil
}

func (p *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

func main() {
	name := filepath.Base(os.Args[0])
	behaviour, _, _ := strings.Cut(name, "-")
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: protocol.Handshake,
		Plugins:         plugin.PluginSet{protocol.PluginName: &grpcPlugin{srv: &server{name: name, behaviour: behaviour}}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
