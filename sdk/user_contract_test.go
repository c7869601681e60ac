package sdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/sdk"
)

// The user calls over the wire: Highlight travels, and the error codes
// of the bounds (too_many, closing) become errors an extension can test
// for. The fake host answers a question whose title is a code with that
// code.

func (f *fakeHost) Confirm(_ context.Context, req *pb.ConfirmRequest) (*pb.ConfirmResponse, error) {
	f.rec.add("confirm:" + req.GetTitle() + ":" + req.GetMessage() + ":" + strings.Join(req.GetHighlight(), "|"))
	return &pb.ConfirmResponse{Yes: true, Error: userCode(req.GetTitle())}, nil
}

func (f *fakeHost) Select(_ context.Context, req *pb.SelectRequest) (*pb.SelectResponse, error) {
	f.rec.add("select:" + req.GetTitle() + ":" + strings.Join(req.GetOptions(), ",") + ":" + strings.Join(req.GetHighlight(), "|"))
	return &pb.SelectResponse{Index: 1, Error: userCode(req.GetTitle())}, nil
}

func (f *fakeHost) Input(_ context.Context, req *pb.InputRequest) (*pb.InputResponse, error) {
	f.rec.add("input:" + req.GetTitle() + ":" + req.GetPlaceholder() + ":" + strings.Join(req.GetHighlight(), "|"))
	return &pb.InputResponse{Text: "typed", Error: userCode(req.GetTitle())}, nil
}

func userCode(title string) *pb.Error {
	switch title {
	case "too_many", "closing", "no_user":
		return &pb.Error{Message: "host says " + title, Code: title}
	}
	return nil
}

func TestQuestionsCarryHighlight(t *testing.T) {
	t.Parallel()
	p, _ := start(t, &ext{start: func(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) error {
		yes, err := h.Confirm(ctx, "Run this command?", "sudo rm -rf ~", sdk.Highlight("rm -rf", ""), sdk.Highlight("sudo"))
		if err != nil || !yes {
			return err
		}
		if _, err := h.Select(ctx, "Pick", []string{"keep", "delete"}, sdk.Highlight("delete")); err != nil {
			return err
		}
		if _, err := h.Input(ctx, "Name", "a name"); err != nil {
			return err
		}
		_, err = h.Confirm(ctx, "old style", "no options")
		return err
	}})
	resp, err := p.client.HandleEvent(context.Background(), sessionStart(false, false))
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, []string{
		"confirm:Run this command?:sudo rm -rf ~:rm -rf|sudo",
		"select:Pick:keep,delete:delete",
		"input:Name:a name:",
		"confirm:old style:no options:",
	}, p.rec.list())
}

func TestQuestionBoundsAreErrorsToTestFor(t *testing.T) {
	t.Parallel()
	got := map[string]error{}
	p, _ := start(t, &ext{start: func(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) error {
		for _, code := range []string{"too_many", "closing", "no_user"} {
			yes, err := h.Confirm(ctx, code, "")
			require.False(t, yes)
			got["confirm "+code] = err
			_, got["select "+code] = h.Select(ctx, code, []string{"a"})
			_, got["input "+code] = h.Input(ctx, code, "")
		}
		return nil
	}})
	_, err := p.client.HandleEvent(context.Background(), sessionStart(false, false))
	require.NoError(t, err)
	for _, kind := range []string{"confirm", "select", "input"} {
		require.ErrorIs(t, got[kind+" too_many"], sdk.ErrTooManyQuestions, kind)
		require.ErrorIs(t, got[kind+" closing"], sdk.ErrClosing, kind)
		require.ErrorIs(t, got[kind+" no_user"], sdk.ErrNoUser, kind)
	}
}

func TestApplyAskOptions(t *testing.T) {
	t.Parallel()
	require.Equal(t, sdk.QuestionOptions{}, sdk.ApplyAskOptions())
	require.Equal(t, sdk.QuestionOptions{}, sdk.ApplyAskOptions(nil, sdk.Highlight("", "")))
	require.Equal(t, sdk.QuestionOptions{Highlight: []string{"a", "b"}}, sdk.ApplyAskOptions(sdk.Highlight("a"), sdk.Highlight("b")))
}
