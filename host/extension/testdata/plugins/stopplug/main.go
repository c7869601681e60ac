// Command stopplug is a test extension for how panto starts and stops
// extensions that misbehave at the edges: it serves pb.Extension directly
// (as rawplug does), and what it does is chosen by the name it is run
// under, up to the first "-" (see sdkplug):
//
//   - calm: healthy; exits when go-plugin asks (GRPCController.Shutdown).
//   - stubborn: never answers Shutdown and never exits by itself.
//   - bare: a stand-in for an extension in another language: its own
//     handshake and a gRPC server with pb.Extension only (no
//     GRPCController, broker or stdio); it answers Shutdown and goes on
//     running. bare-badtool declares a tool name providers refuse.
//   - initsleep: completes the handshake, then never answers Init.
//   - late: waits PANTO_TEST_DELAY (a Go duration) before the handshake;
//     late-initsleep then never answers Init.
//   - initcrash: writes to stderr and exits in Init.
//   - bigout: in session_start writes a 1 MiB line to the real stdout and
//     another to the real stderr (file descriptors 1 and 2, past go-plugin's
//     redirection of os.Stdout), then answers with an edit.
//   - env: answers session_start with an edit holding its environment as
//     a JSON array.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
)

type server struct {
	pb.UnimplementedExtensionServer
	name, behaviour, variant string
}

func (s *server) Init(ctx context.Context, _ *pb.InitRequest) (*pb.InitResponse, error) {
	switch {
	case s.behaviour == "initsleep" || s.variant == "initsleep":
		<-ctx.Done()
		time.Sleep(time.Hour)
	case s.behaviour == "initcrash":
		fmt.Fprintln(os.NewFile(2, "stderr"), "initcrash: cannot open /nonexistent/config.toml")
		os.Exit(2)
	}
	resp := &pb.InitResponse{ApiVersion: 1, Name: s.name, Events: []string{protocol.EventSessionStart}}
	if s.variant == "badtool" {
		resp.Tools = []*pb.Tool{{Name: "bad name", Description: "an invalid tool"}}
	}
	return resp, nil
}

func (s *server) HandleEvent(context.Context, *pb.EventRequest) (*pb.EventResponse, error) {
	text := s.name
	switch s.behaviour {
	case "bigout":
		big := strings.Repeat("x", 1<<20)
		// The real descriptors: os.Stdout and os.Stderr are go-plugin's
		// pipes by now.
		if _, err := syscall.Write(1, []byte("BIGOUT "+big+"\n")); err != nil {
			return nil, err
		}
		if _, err := syscall.Write(2, []byte("BIGERR "+big+"\n")); err != nil {
			return nil, err
		}
		text = "after big output"
	case "env":
		b, err := json.Marshal(os.Environ())
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	return &pb.EventResponse{Edits: []*pb.SystemEdit{{Mode: "append", Text: text}}}, nil
}

func (s *server) Shutdown(context.Context, *pb.ShutdownRequest) (*pb.ShutdownResponse, error) {
	if s.behaviour == "stubborn" {
		select {}
	}
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

// serveBare does the handshake by hand, as node-hello does, serving
// pb.Extension and nothing else.
func serveBare(srv *server) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := grpc.NewServer()
	pb.RegisterExtensionServer(s, srv)
	fmt.Printf("1|1|tcp|%s|grpc\n", l.Addr())
	_ = s.Serve(l)
	select {} // a sloppy extension: still running
}

func main() {
	name := filepath.Base(os.Args[0])
	behaviour, variant, _ := strings.Cut(name, "-")
	srv := &server{name: name, behaviour: behaviour, variant: variant}
	switch behaviour {
	case "bare":
		serveBare(srv)
	case "late":
		d, err := time.ParseDuration(os.Getenv("PANTO_TEST_DELAY"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "late: PANTO_TEST_DELAY:", err)
			os.Exit(1)
		}
		time.Sleep(d)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: protocol.Handshake,
		Plugins:         plugin.PluginSet{protocol.PluginName: &grpcPlugin{srv: srv}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
	if behaviour == "stubborn" {
		select {} // go-plugin's server stopped; the process goes on
	}
}
