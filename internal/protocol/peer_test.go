//go:build linux || darwin

package protocol

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/panto-dev/panto/internal/pb"
)

// serveUnix serves an Extension service that implements nothing on a
// unix socket, with creds; it returns the socket's path.
func serveUnix(t *testing.T, creds PeerCheck) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "peer")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	s := grpc.NewServer(grpc.Creds(PeerCredentials(creds, nil)))
	pb.RegisterExtensionServer(s, pb.UnimplementedExtensionServer{})
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return path
}

// call dials path with client checking its server and makes one call:
// Unimplemented means the connection was admitted, Unavailable that it
// was refused.
func call(t *testing.T, path string, client PeerCheck) codes.Code {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(PeerCredentials(nil, client)))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pb.NewExtensionClient(conn).Shutdown(ctx, &pb.ShutdownRequest{})
	return status.Code(err)
}

// Each end learns the process at the other end from the kernel: a
// server the pid that connected, a client the pid that listens; a
// refusal closes the connection before gRPC reads a byte of it.
func TestPeerCredentials(t *testing.T) {
	t.Parallel()
	self := os.Getpid()
	var mu sync.Mutex
	var seen []int
	admit := func(pid int, err error) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, pid)
		return err
	}
	refuse := func(int, error) error { return errors.New("not you") }
	onlySelf := func(pid int, err error) error {
		if err != nil || pid != self {
			return errors.New("not panto")
		}
		return nil
	}
	onlyOther := func(pid int, err error) error {
		if err != nil || pid == self {
			return errors.New("not the extension")
		}
		return nil
	}

	admitted := serveUnix(t, admit)
	require.Equal(t, codes.Unimplemented, call(t, admitted, onlySelf), "the server's pid is this process's")
	mu.Lock()
	require.Equal(t, []int{self}, seen, "the server saw this process dial")
	mu.Unlock()
	require.Equal(t, codes.Unavailable, call(t, admitted, onlyOther), "the client refuses a server that is not the one it wants")

	require.Equal(t, codes.Unavailable, call(t, serveUnix(t, refuse), nil), "the server refuses the caller")

	// A connection that is not a unix socket has no known peer.
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	_, err := PeerPID(c1)
	require.ErrorIs(t, err, ErrPeerUnknown)
}
