package protocol

import "google.golang.org/grpc"

// The gRPC tuning both ends of a panto connection use: Serve and the host
// (host/extension). Extension authors do not need these.
//
// Every call between panto and an extension is a small message on a local
// socket, and hooks sit on the path of a turn, so the tuning is for latency:
//   - a fixed HTTP/2 flow-control window turns off gRPC's bandwidth probe,
//     which otherwise sends a ping (and waits for its ack) alongside calls;
//   - a few stream workers serve calls on goroutines that are already
//     running instead of starting one per call (more calls at once than
//     workers still each get their own goroutine).
//
// And for safety: every message either end sends has its strings made
// valid UTF-8 (see conversation.ValidText), and a message may be up to MaxMessageSize
// (gRPC's default of 4 MB refused a large tool input, and the call failed
// as if the extension had crashed).
const (
	window        = 1 << 20
	streamWorkers = 2
)

// MaxMessageSize is the largest message either end of the protocol sends
// or accepts: 64 MiB. panto keeps what it sends below it (it cuts tool
// results at 1 MiB and checks the size of each request before sending);
// an extension should keep its replies well below it too.
const MaxMessageSize = 64 << 20

// ServerOptions are the gRPC server options of both ends.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(window),
		grpc.InitialConnWindowSize(window),
		grpc.NumStreamWorkers(streamWorkers),
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.ChainUnaryInterceptor(repairServer),
	}
}

// DialOptions are the gRPC dial options of both ends.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(window),
		grpc.WithInitialConnWindowSize(window),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
		grpc.WithChainUnaryInterceptor(repairClient),
	}
}
