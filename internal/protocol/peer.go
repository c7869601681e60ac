package protocol

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Only panto connects to an extension's gRPC server, and only the
// extension connects to the Host service panto serves it: go-plugin's
// unix sockets carry no authentication of their own, and any process of
// the user's (the model's bash, say) could otherwise dial them — call a
// tool, ask the user a question in an extension's name, record a system
// block. Each end checks the process at the other end of every
// connection before gRPC reads a byte of it: the kernel's record of who
// called connect() (SO_PEERCRED on Linux, LOCAL_PEERPID on macOS), which
// a process cannot forge. And the dialling end checks who serves the
// socket it reached (the same record, of who called listen()), since a
// process of the user's could put a listener of its own in a socket's
// place before gRPC dials again (it does after an idle spell). The
// check costs one getsockopt per connection, and both ends keep one
// connection for the whole session.
//
// go-plugin's AutoMTLS would not do this: its client certificate is
// passed in the extension's environment, which every process the
// extension starts inherits. panto does not turn it on, so go-plugin
// hands the servers no TLS credentials; PeerCredentials wraps insecure
// ones (its inner credentials).

// ErrPeerUnknown is wrapped by PeerPID's error where the system cannot
// say which process is at the other end (Windows, where go-plugin uses
// TCP on 127.0.0.1, and systems other than Linux and macOS).
var ErrPeerUnknown = errors.New("the system cannot say which process is at the other end of this connection")

// PeerPID returns the pid of the process at the other end of conn, a
// unix socket: the one that connected it (on a server's connection) or
// the one that listens (on a client's).
func PeerPID(conn net.Conn) (int, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("%w: a %s connection, not a unix socket", ErrPeerUnknown, conn.LocalAddr().Network())
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer of %s: %w", conn.LocalAddr(), err)
	}
	var pid int
	var perr error
	if err := raw.Control(func(fd uintptr) { pid, perr = peerPID(fd) }); err != nil {
		return 0, fmt.Errorf("peer of %s: %w", conn.LocalAddr(), err)
	}
	if perr != nil {
		return 0, fmt.Errorf("peer of %s: %w", conn.LocalAddr(), perr)
	}
	return pid, nil
}

// PeerCheck decides on one connection: pid is its peer's, or err says
// why it is not known (PeerPID's error). A nil result accepts the
// connection; an error refuses it (gRPC closes it unread).
type PeerCheck func(pid int, err error) error

// PeerCredentials are gRPC transport credentials that check the process
// at the other end of each connection before anything is read from it —
// server on a connection a server accepted (the process that dialled),
// client on one a client dialled (the process that serves it); nil
// admits every peer — then hand it to insecure credentials (see the
// comment above: no TLS is in use). Give them to grpc.NewServer with
// grpc.Creds, or to a dial with grpc.WithTransportCredentials, after
// go-plugin's options (the last credentials given win).
func PeerCredentials(server, client PeerCheck) credentials.TransportCredentials {
	return &peerCreds{TransportCredentials: insecure.NewCredentials(), server: server, client: client}
}

type peerCreds struct {
	credentials.TransportCredentials
	server, client PeerCheck
}

func (c *peerCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if c.server != nil {
		if err := c.server(PeerPID(conn)); err != nil {
			return nil, nil, err
		}
	}
	return c.TransportCredentials.ServerHandshake(conn)
}

func (c *peerCreds) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if c.client != nil {
		if err := c.client(PeerPID(conn)); err != nil {
			return nil, nil, err
		}
	}
	return c.TransportCredentials.ClientHandshake(ctx, authority, conn)
}

func (c *peerCreds) Clone() credentials.TransportCredentials {
	return &peerCreds{TransportCredentials: c.TransportCredentials.Clone(), server: c.server, client: c.client}
}

// HostPIDEnv is the variable in which panto gives every extension its
// pid: the only process that may connect to the extension, and the one
// that serves its Host service (an extension started through a wrapper
// script is not panto's child, so its parent would not do).
const HostPIDEnv = "PANTO_HOST_PID"
