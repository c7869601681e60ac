package sdk_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/sdk"
)

// GetCacheEstimate answers 23456 tokens, the last reply at 1 s past the
// epoch.
func (f *fakeHost) GetCacheEstimate(context.Context, *pb.GetCacheEstimateRequest) (*pb.GetCacheEstimateResponse, error) {
	f.rec.add("cache-estimate")
	return &pb.GetCacheEstimateResponse{Tokens: 23456, LastReplyUnixMs: 1000}, nil
}

func estimateCommand() []sdk.Command {
	return []sdk.Command{{Name: "estimate", Run: func(ctx context.Context, h sdk.Host, _ sdk.CommandRequest) (sdk.CommandResponse, error) {
		e, err := h.CacheEstimate(ctx)
		if err != nil {
			return sdk.CommandResponse{}, err
		}
		return sdk.CommandResponse{Output: fmt.Sprintf("%d %d", e.Tokens, e.LastReply.UnixMilli())}, nil
	}}}
}

// An extension reads panto's estimate of the cache a change would
// invalidate before it edits the prompt.
func TestCacheEstimateReachesTheExtension(t *testing.T) {
	t.Parallel()
	p, resp := start(t, &ext{commands: estimateCommand()})
	require.GreaterOrEqual(t, resp.ApiVersion, uint32(7))
	out, err := p.client.RunCommand(context.Background(), &pb.CommandRequest{Name: "estimate"})
	require.NoError(t, err)
	require.Nil(t, out.Error)
	require.Equal(t, fmt.Sprintf("23456 %d", time.Unix(1, 0).UnixMilli()), out.Output)
	require.Equal(t, []string{"cache-estimate"}, p.rec.list())
}

// With a panto older than v7 the call fails with a clear error, and
// nothing is sent.
func TestCacheEstimateNeedsV7(t *testing.T) {
	t.Parallel()
	p := serve(t, &ext{commands: estimateCommand()})
	resp, err := p.client.Init(context.Background(), &pb.InitRequest{ApiVersion: 6, MinApiVersion: 1, HostBrokerId: p.hostID})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	out, err := p.client.RunCommand(context.Background(), &pb.CommandRequest{Name: "estimate"})
	require.NoError(t, err)
	require.Contains(t, out.GetError().GetMessage(), "cache estimate needs panto API v7; this panto speaks v6")
	require.Empty(t, p.rec.list())
}
