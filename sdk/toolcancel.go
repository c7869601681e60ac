package sdk

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
)

// ErrCallCancelled is the cause of a tool call's context when panto
// cancelled the call (the user interrupted it) with tool_cancel. The
// call's answer still reaches panto, which records it as the call's
// result: a tool that has made its change by then should say so, one
// stopped before should say nothing was done.
var ErrCallCancelled = errors.New("panto cancelled the tool call: the user interrupted it")

// toolCancel lets panto cancel one running tool call and still get its
// answer. Cancelling the CallTool request itself would drop whatever the
// tool answers; so an extension that offers tools declares tool_cancel
// in Init, and panto, when the user interrupts a call, sends tool_cancel
// naming it instead and waits a short time for the CallTool answer. It
// sits in front of the extension service as a gRPC interceptor: it
// tracks each CallTool's context by call id, answers tool_cancel itself,
// and adds tool_cancel to the events of an Init that declares tools.
type toolCancel struct {
	mu      sync.Mutex
	next    uint64
	running map[string]map[uint64]context.CancelCauseFunc // by call id
}

func newToolCancel() *toolCancel {
	return &toolCancel{running: map[string]map[uint64]context.CancelCauseFunc{}}
}

func (tc *toolCancel) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	switch r := req.(type) {
	case *pb.ToolCallRequest:
		id := r.GetCall().GetId()
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		tc.mu.Lock()
		tc.next++
		n := tc.next
		if tc.running[id] == nil {
			tc.running[id] = map[uint64]context.CancelCauseFunc{}
		}
		tc.running[id][n] = cancel
		tc.mu.Unlock()
		defer func() {
			tc.mu.Lock()
			defer tc.mu.Unlock()
			delete(tc.running[id], n)
			if len(tc.running[id]) == 0 {
				delete(tc.running, id)
			}
		}()
		return handler(ctx, req)
	case *pb.EventRequest:
		if r.GetEvent() == protocol.EventToolCancel {
			tc.mu.Lock()
			for _, cancel := range tc.running[r.GetToolCall().GetId()] {
				cancel(ErrCallCancelled) // only cancels: safe under the lock
			}
			tc.mu.Unlock()
			return &pb.EventResponse{}, nil
		}
	case *pb.InitRequest:
		resp, err := handler(ctx, req)
		if ir, ok := resp.(*pb.InitResponse); ok && err == nil && len(ir.GetTools()) > 0 {
			ir.Events = append(ir.Events, protocol.EventToolCancel)
		}
		return resp, err
	}
	return handler(ctx, req)
}
