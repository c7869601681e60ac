package sdktest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// refresher refreshes its section only while it invalidates little of
// the provider's cache.
type refresher struct{ sdk.Base }

func (refresher) Describe() sdk.Info { return sdk.Info{Name: "refresher"} }

func (refresher) Commands() []sdk.Command {
	return []sdk.Command{{Name: "refresh", Run: func(ctx context.Context, h sdk.Host, _ sdk.CommandRequest) (sdk.CommandResponse, error) {
		e, err := h.CacheEstimate(ctx)
		if err != nil {
			return sdk.CommandResponse{}, err
		}
		if e.Tokens > 10000 {
			return sdk.CommandResponse{Output: "held"}, nil
		}
		return sdk.CommandResponse{Output: "refreshed"}, h.SetSection(ctx, "state", "fresh")
	}}}
}

func TestCacheEstimateIsScripted(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, refresher{})
	out, err := h.Command("refresh", "")
	require.NoError(t, err)
	require.Equal(t, "refreshed", out.Output, "nothing is cached by default")

	h = sdktest.New(t, refresher{}).WithHostFuncs(sdktest.HostFuncs{
		CacheEstimate: func(context.Context) (sdk.CacheEstimate, error) { return sdk.CacheEstimate{Tokens: 50000}, nil },
	})
	out, err = h.Command("refresh", "")
	require.NoError(t, err)
	require.Equal(t, "held", out.Output)
	require.Empty(t, h.Edits(), "a held refresh records nothing")
}
