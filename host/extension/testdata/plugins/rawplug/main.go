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

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/pb"
)

type server struct {
	pb.UnimplementedExtensionServer
	name, behaviour string
}

func (s *server) Init(context.Context, *pb.InitRequest) (*pb.InitResponse, error) {
	resp := &pb.InitResponse{ApiVersion: 1, Name: s.name, Events: []string{sdk.EventSessionStart}}
	if s.behaviour == "v2" {
		resp.ApiVersion = 2
	}
	return resp, nil
}

func (s *server) HandleEvent(context.Context, *pb.EventRequest) (*pb.EventResponse, error) {
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
		HandshakeConfig: sdk.Handshake,
		Plugins:         plugin.PluginSet{sdk.PluginName: &grpcPlugin{srv: &server{name: name, behaviour: behaviour}}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
