package protocol

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/panto-dev/panto/internal/pb"
)

func TestRepairUTF8ReachesEveryString(t *testing.T) {
	t.Parallel()
	bad := "x\xff\xfey"
	m := &pb.InitResponse{
		Name:      bad,
		Events:    []string{"ok", bad},
		Commands:  []*pb.Command{{Name: bad, Usage: bad}},
		Tools:     []*pb.Tool{{Name: "t", Guidance: bad, Parameters: []byte("\xff")}},
		Variables: map[string]string{"k": bad, bad: "v"},
		Error:     &pb.Error{Message: bad},
	}
	require.True(t, repairUTF8(m.ProtoReflect()))
	_, err := proto.Marshal(m)
	require.NoError(t, err)
	fixed := "x\uFFFDy"
	require.Equal(t, fixed, m.Name)
	require.Equal(t, []string{"ok", fixed}, m.Events)
	require.Equal(t, fixed, m.Commands[0].Name)
	require.Equal(t, fixed, m.Commands[0].Usage)
	require.Equal(t, fixed, m.Tools[0].Guidance)
	require.Equal(t, []byte("\xff"), m.Tools[0].Parameters, "bytes fields are not text")
	require.Equal(t, map[string]string{"k": fixed, fixed: "v"}, m.Variables)
	require.Equal(t, fixed, m.Error.Message)

	ok := &pb.EventRequest{Event: "before_turn", Payload: &pb.EventRequest_BeforeTurn{BeforeTurn: &pb.BeforeTurn{UserText: "fine é"}}}
	require.False(t, repairUTF8(ok.ProtoReflect()))
}
