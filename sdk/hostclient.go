package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
)

// The Host an extension calls: panto's Host service over the broker
// connection (remoteHost), or, without one, a Host that refuses every
// call (noHost); and how the service's errors read in Go.

// remoteHost is Host over the broker connection dialled in Init.
type remoteHost struct {
	client pb.HostClient
	logger hclog.Logger
	info   HostInfo
	server *server // whose tool table SetTools extends
}

func (h *remoteHost) Info() HostInfo { return h.info }

func (h *remoteHost) AddSystemMessage(ctx context.Context, text string) error {
	resp, err := h.client.AddSystemMessage(ctx, &pb.SystemEditRequest{Text: text})
	return hostErr("add system message", resp.GetError(), err)
}

func (h *remoteHost) ReplaceSystemMessage(ctx context.Context, text string, opts ...ReplaceOption) error {
	o := ApplyReplaceOptions(opts...)
	resp, err := h.client.ReplaceSystemMessage(ctx, &pb.SystemEditRequest{Text: text, Bare: o.Bare})
	return hostErr("replace system message", resp.GetError(), err)
}

// needs returns an error when the API version negotiated with panto is
// older than v: the call op does not exist there.
func (h *remoteHost) needs(op string, v int) error {
	if h.info.APIVersion < v {
		return fmt.Errorf("panto host: %s needs panto API v%d; this panto speaks v%d: upgrade panto", op, v, h.info.APIVersion)
	}
	return nil
}

func (h *remoteHost) SetSection(ctx context.Context, key, text string) error {
	if err := h.needs("set section", 2); err != nil {
		return err
	}
	resp, err := h.client.SetSection(ctx, &pb.SetSectionRequest{Key: key, Text: text})
	return hostErr("set section "+key, resp.GetError(), err)
}

func (h *remoteHost) RemoveSection(ctx context.Context, key string) error {
	if err := h.needs("remove section", 2); err != nil {
		return err
	}
	resp, err := h.client.RemoveSection(ctx, &pb.RemoveSectionRequest{Key: key})
	return hostErr("remove section "+key, resp.GetError(), err)
}

func (h *remoteHost) Sections(ctx context.Context) ([]Section, error) {
	resp, err := h.client.GetSystemPrompt(ctx, &pb.GetSystemPromptRequest{})
	if err != nil {
		return nil, hostErr("get sections", nil, err)
	}
	var out []Section
	for _, s := range resp.GetSections() {
		out = append(out, Section{Key: s.GetKey(), Text: s.GetText(), Source: s.GetSource()})
	}
	return out, nil
}

// timeoutMS is the deadline of ctx as a question's timeout, or 0.
func timeoutMS(ctx context.Context) uint32 {
	if d, ok := ctx.Deadline(); ok {
		if ms := time.Until(d).Milliseconds(); ms > 0 {
			return uint32(min(ms, 1<<31))
		}
		return 1
	}
	return 0
}

// userErr turns a user call's failure into the SDK's errors.
func userErr(op string, domain *pb.Error, err error) error {
	if err != nil {
		return hostErr(op, nil, err)
	}
	if domain == nil {
		return nil
	}
	switch domain.GetCode() {
	case "no_user":
		return ErrNoUser
	case "dismissed":
		return ErrDismissed
	case "timeout":
		return ErrNoAnswer
	case "too_many":
		return ErrTooManyQuestions
	case "closing":
		return ErrClosing
	}
	return hostErr(op, domain, nil)
}

func (h *remoteHost) Confirm(ctx context.Context, title, message string, opts ...AskOption) (bool, error) {
	if err := h.needs("confirm", 2); err != nil {
		return false, err
	}
	o := ApplyAskOptions(opts...)
	resp, err := h.client.Confirm(ctx, &pb.ConfirmRequest{Title: title, Message: message, TimeoutMs: timeoutMS(ctx), Highlight: o.Highlight, ToolCallId: callOf(ctx)})
	err = userErr("confirm", resp.GetError(), err)
	if errors.Is(err, ErrDismissed) {
		return false, nil // closing a yes/no question is a no
	}
	return resp.GetYes() && err == nil, err
}

func (h *remoteHost) Select(ctx context.Context, title string, options []string, opts ...AskOption) (int, error) {
	if err := h.needs("select", 2); err != nil {
		return 0, err
	}
	o := ApplyAskOptions(opts...)
	resp, err := h.client.Select(ctx, &pb.SelectRequest{Title: title, Options: options, TimeoutMs: timeoutMS(ctx), Highlight: o.Highlight, ToolCallId: callOf(ctx)})
	if err = userErr("select", resp.GetError(), err); err != nil {
		return 0, err
	}
	return int(resp.GetIndex()), nil
}

func (h *remoteHost) Input(ctx context.Context, title, placeholder string, opts ...AskOption) (string, error) {
	if err := h.needs("input", 2); err != nil {
		return "", err
	}
	o := ApplyAskOptions(opts...)
	resp, err := h.client.Input(ctx, &pb.InputRequest{Title: title, Placeholder: placeholder, TimeoutMs: timeoutMS(ctx), Highlight: o.Highlight, ToolCallId: callOf(ctx)})
	if err = userErr("input", resp.GetError(), err); err != nil {
		return "", err
	}
	return resp.GetText(), nil
}

func (h *remoteHost) Notify(ctx context.Context, level, text string) error {
	if err := h.needs("notify", 2); err != nil {
		return err
	}
	_, err := h.client.Notify(ctx, &pb.NotifyRequest{Level: level, Text: text})
	return hostErr("notify", nil, err)
}

func (h *remoteHost) SetStatus(ctx context.Context, key, text string) error {
	if err := h.needs("set status", 2); err != nil {
		return err
	}
	_, err := h.client.SetStatus(ctx, &pb.SetStatusRequest{Key: key, Text: text})
	return hostErr("set status", nil, err)
}

func (h *remoteHost) SetTools(ctx context.Context, tools []Tool, reason string) error {
	if err := h.needs("set tools", 3); err != nil {
		return err
	}
	// Callable before panto may offer them.
	h.server.addTools(tools)
	resp, err := h.client.SetTools(ctx, &pb.SetToolsRequest{Tools: pbTools(tools), Reason: reason})
	return hostErr("set tools", resp.GetError(), err)
}

func workspaceErr(op string, e *pb.Error, err error) error {
	if e != nil && e.GetCode() == "unavailable" {
		return ErrUnavailable
	}
	if status.Code(err) == codes.Unimplemented {
		return ErrUnavailable
	}
	return hostErr(op, e, err)
}

func (h *remoteHost) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	if !h.info.Workspace.Files || h.needs("read text file", 4) != nil {
		return "", ErrUnavailable
	}
	resp, err := h.client.ReadTextFile(ctx, &pb.ReadTextFileRequest{Path: path, Line: uint32(max(line, 0)), Limit: uint32(max(limit, 0)), ToolCallId: callOf(ctx)})
	if err := workspaceErr("read "+path, resp.GetError(), err); err != nil {
		return "", err
	}
	return resp.GetContent(), nil
}

func (h *remoteHost) WriteTextFile(ctx context.Context, path, content string) error {
	if !h.info.Workspace.Files || h.needs("write text file", 4) != nil {
		return ErrUnavailable
	}
	resp, err := h.client.WriteTextFile(ctx, &pb.WriteTextFileRequest{Path: path, Content: content, ToolCallId: callOf(ctx)})
	return workspaceErr("write "+path, resp.GetError(), err)
}

func (h *remoteHost) RunInTerminal(ctx context.Context, c TerminalCommand) (TerminalResult, error) {
	if !h.info.Workspace.Terminal || h.needs("run in terminal", 4) != nil {
		return TerminalResult{}, ErrUnavailable
	}
	resp, err := h.client.RunInTerminal(ctx, &pb.RunInTerminalRequest{Command: c.Command, Cwd: c.Dir,
		TimeoutMs: uint32(min(c.Timeout.Milliseconds(), math.MaxUint32)), OutputByteLimit: uint64(max(c.OutputLimit, 0)), ToolCallId: callOf(ctx)})
	if err := workspaceErr("run in terminal", resp.GetError(), err); err != nil {
		return TerminalResult{}, err
	}
	return TerminalResult{Output: resp.GetOutput(), Truncated: resp.GetTruncated(), ExitCode: int(resp.GetExitCode()),
		Signal: resp.GetSignal(), TimedOut: resp.GetTimedOut()}, nil
}

// toolProgress sends a piece of the output of the call id (API v6; see
// Progress).
func (h *remoteHost) toolProgress(ctx context.Context, id, text string) error {
	_, err := h.client.ToolProgress(ctx, &pb.ToolProgressRequest{ToolCallId: id, Text: text})
	return hostErr("tool progress", nil, err)
}

func (h *remoteHost) CacheEstimate(ctx context.Context) (CacheEstimate, error) {
	if err := h.needs("cache estimate", 7); err != nil {
		return CacheEstimate{}, err
	}
	resp, err := h.client.GetCacheEstimate(ctx, &pb.GetCacheEstimateRequest{})
	if err != nil {
		return CacheEstimate{}, hostErr("cache estimate", nil, err)
	}
	e := CacheEstimate{Tokens: int(resp.GetTokens())}
	if ms := resp.GetLastReplyUnixMs(); ms > 0 {
		e.LastReply = time.UnixMilli(ms)
	}
	return e, nil
}

func (h *remoteHost) SystemPrompt(ctx context.Context) ([]string, error) {
	resp, err := h.client.GetSystemPrompt(ctx, &pb.GetSystemPromptRequest{})
	if err != nil {
		return nil, hostErr("get system prompt", nil, err)
	}
	return resp.Blocks, nil
}

func (h *remoteHost) Messages(ctx context.Context) ([]conversation.Message, error) {
	resp, err := h.client.GetMessages(ctx, &pb.GetMessagesRequest{})
	if err != nil {
		return nil, hostErr("get messages", nil, err)
	}
	msgs, err := conversation.UnmarshalMessages(resp.Messages)
	if err != nil {
		return nil, fmt.Errorf("panto host: get messages: decode: %w", err)
	}
	return msgs, nil
}

func (h *remoteHost) AppendData(ctx context.Context, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("panto host: append data: encode: %w", err)
	}
	resp, err := h.client.AppendData(ctx, &pb.AppendDataRequest{Data: data})
	return hostErr("append data", resp.GetError(), err)
}

func (h *remoteHost) Logger() hclog.Logger { return h.logger }

func hostErr(op string, domain *pb.Error, err error) error {
	if err != nil {
		return fmt.Errorf("panto host: %s: %w", op, err)
	}
	if domain != nil {
		return fmt.Errorf("panto host: %s: %s", op, domain.Message)
	}
	return nil
}

// ErrNoHost is returned by the Host of an extension that panto started
// without a host connection (for example by a protocol test); it cannot
// call back.
var ErrNoHost = errors.New("panto host: no host connection")

// noHost answers every call with ErrNoHost (the workspace calls with
// ErrUnavailable: use the machine's).
type noHost struct{ logger hclog.Logger }

func (noHost) ReadTextFile(context.Context, string, int, int) (string, error) {
	return "", ErrUnavailable
}
func (noHost) WriteTextFile(context.Context, string, string) error { return ErrUnavailable }
func (noHost) RunInTerminal(context.Context, TerminalCommand) (TerminalResult, error) {
	return TerminalResult{}, ErrUnavailable
}

func (noHost) AddSystemMessage(context.Context, string) error { return ErrNoHost }
func (noHost) ReplaceSystemMessage(context.Context, string, ...ReplaceOption) error {
	return ErrNoHost
}
func (noHost) SystemPrompt(context.Context) ([]string, error) { return nil, ErrNoHost }
func (noHost) CacheEstimate(context.Context) (CacheEstimate, error) {
	return CacheEstimate{}, ErrNoHost
}
func (noHost) Messages(context.Context) ([]conversation.Message, error) {
	return nil, ErrNoHost
}
func (noHost) AppendData(context.Context, any) error            { return ErrNoHost }
func (noHost) SetSection(context.Context, string, string) error { return ErrNoHost }
func (noHost) RemoveSection(context.Context, string) error      { return ErrNoHost }
func (noHost) Sections(context.Context) ([]Section, error)      { return nil, ErrNoHost }
func (noHost) Confirm(context.Context, string, string, ...AskOption) (bool, error) {
	return false, ErrNoHost
}
func (noHost) Select(context.Context, string, []string, ...AskOption) (int, error) {
	return 0, ErrNoHost
}
func (noHost) Input(context.Context, string, string, ...AskOption) (string, error) {
	return "", ErrNoHost
}
func (noHost) Notify(context.Context, string, string) error    { return ErrNoHost }
func (noHost) SetStatus(context.Context, string, string) error { return ErrNoHost }
func (noHost) SetTools(context.Context, []Tool, string) error  { return ErrNoHost }
func (h noHost) Logger() hclog.Logger                          { return h.logger }
func (noHost) Info() HostInfo                                  { return HostInfo{} }

// infoHost is a Host without a connection that still says what Init was
// told (an extension started with no host broker, by a protocol test).
type infoHost struct {
	Host
	info HostInfo
}

func (h *infoHost) Info() HostInfo { return h.info }
