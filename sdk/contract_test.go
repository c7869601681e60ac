package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/internal/protocol"
	"github.com/panto-dev/panto/sdk"
)

// The contract of the SDK with panto, at go-plugin level: real gRPC over
// plugin.TestPluginGRPCConn, and real host callbacks over the broker to a
// fake Host service, all in-process.

// recorder keeps, in order, every call that reached the fake host and
// every line the extension logged.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Write takes the extension's hclog JSON lines: "log:LEVEL:MESSAGE".
func (r *recorder) Write(p []byte) (int, error) {
	var line struct {
		Level   string `json:"@level"`
		Message string `json:"@message"`
	}
	if err := json.Unmarshal(p, &line); err != nil {
		return 0, fmt.Errorf("log line %q: %w", p, err)
	}
	r.add("log:" + line.Level + ":" + line.Message)
	return len(p), nil
}

// fakeHost is panto's Host service as the extension reaches it.
type fakeHost struct {
	pb.UnimplementedHostServer
	rec *recorder

	mu       sync.Mutex
	msgs     []conversation.Message
	failEdit string // when set, system edits answer this domain error
}

func (f *fakeHost) edit(mode conversation.Mode, text string) *pb.Error {
	f.rec.add(string(mode) + ":" + text)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failEdit != "" {
		return &pb.Error{Message: f.failEdit}
	}
	f.msgs = append(f.msgs, conversation.SystemMessage(text, mode))
	return nil
}

func (f *fakeHost) AddSystemMessage(_ context.Context, req *pb.SystemEditRequest) (*pb.SystemEditResponse, error) {
	return &pb.SystemEditResponse{Error: f.edit(conversation.ModeAppend, req.Text)}, nil
}

// ReplaceSystemMessage records "replace:TEXT", or "replace bare:TEXT"
// for a bare one.
func (f *fakeHost) ReplaceSystemMessage(_ context.Context, req *pb.SystemEditRequest) (*pb.SystemEditResponse, error) {
	mode := conversation.ModeReplace
	if req.GetBare() {
		mode += " bare"
	}
	return &pb.SystemEditResponse{Error: f.edit(mode, req.Text)}, nil
}

func (f *fakeHost) GetSystemPrompt(context.Context, *pb.GetSystemPromptRequest) (*pb.GetSystemPromptResponse, error) {
	f.rec.add("get_system_prompt")
	f.mu.Lock()
	defer f.mu.Unlock()
	return &pb.GetSystemPromptResponse{Blocks: conversation.Texts(conversation.EffectiveSystem(f.msgs))}, nil
}

func (f *fakeHost) GetMessages(context.Context, *pb.GetMessagesRequest) (*pb.GetMessagesResponse, error) {
	f.rec.add("get_messages")
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := json.Marshal(f.msgs)
	return &pb.GetMessagesResponse{Messages: data}, err
}

func (f *fakeHost) AppendData(_ context.Context, req *pb.AppendDataRequest) (*pb.AppendDataResponse, error) {
	f.rec.add("data:" + string(req.Data))
	return &pb.AppendDataResponse{}, nil
}

func (f *fakeHost) Log(_ context.Context, req *pb.LogRequest) (*pb.LogResponse, error) {
	f.rec.add("host_log:" + req.Level + ":" + req.Message)
	return &pb.LogResponse{}, nil
}

// plug is one extension served over TestPluginGRPCConn, with the fake
// host served back on the broker.
type plug struct {
	client pb.ExtensionClient
	// hostID is the broker id the fake host is served on.
	hostID uint32
	host   *fakeHost
	rec    *recorder
	broker *plugin.GRPCBroker
}

// serve serves ext over real gRPC and the fake host on the broker. It
// does not call Init.
func serve(tb testing.TB, ext sdk.Extension, seed ...string) *plug {
	tb.Helper()
	return serveWith(tb, true, ext, seed...)
}

// serveWith is serve with go-plugin's broker multiplexed or not (panto's
// is not: a dial of an unknown id then fails, after go-plugin's 5 s).
func serveWith(tb testing.TB, multiplex bool, ext sdk.Extension, seed ...string) *plug {
	tb.Helper()
	rec := &recorder{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "ext", Output: rec, JSONFormat: true, Level: hclog.Trace})
	client, _ := plugin.TestPluginGRPCConn(tb, multiplex, map[string]plugin.Plugin{
		protocol.PluginName: sdk.PluginFor(ext, logger),
	})
	// Close asks the plugin side to stop (go-plugin's controller calls its
	// server's Stop; calling Stop here as well races with that).
	tb.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(protocol.PluginName)
	require.NoError(tb, err)
	conn, ok := raw.(*protocol.Conn)
	require.True(tb, ok, "the host side dispenses a *protocol.Conn, got %T", raw)

	host := &fakeHost{rec: rec}
	for _, s := range seed {
		host.msgs = append(host.msgs, conversation.SystemMessage(s, conversation.ModeAppend))
	}
	id := conn.Broker.NextId()
	go conn.Broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		pb.RegisterHostServer(s, host)
		return s
	})
	return &plug{client: conn.Extension, hostID: id, host: host, rec: rec, broker: conn.Broker}
}

// serveHost serves the fake host on a new broker id and returns it.
func (p *plug) serveHost() uint32 {
	id := p.broker.NextId()
	go p.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		pb.RegisterHostServer(s, p.host)
		return s
	})
	return id
}

// start serves ext and calls Init as panto does (API range [1,2], the
// host's broker id), requiring success.
func start(tb testing.TB, ext sdk.Extension, seed ...string) (*plug, *pb.InitResponse) {
	tb.Helper()
	p := serve(tb, ext, seed...)
	resp, err := p.client.Init(context.Background(), &pb.InitRequest{
		ApiVersion: sdk.APIVersion, MinApiVersion: 1, HostBrokerId: p.hostID, HostVersion: "test", SessionId: "s1", Cwd: "/project",
	})
	require.NoError(tb, err)
	require.Nil(tb, resp.Error)
	return p, resp
}

func sessionStart(resumed, reseeded bool) *pb.EventRequest {
	return &pb.EventRequest{Event: sdk.EventSessionStart, Payload: &pb.EventRequest_SessionStart{
		SessionStart: &pb.SessionStart{SessionId: "s1", SessionPath: "/s.jsonl", Resumed: resumed, Reseeded: reseeded},
	}}
}

// ext is a test extension: each hook it implements runs its func.
type ext struct {
	sdk.Base
	start    func(context.Context, sdk.Host, sdk.SessionStartEvent) error
	turnEnd  func(context.Context, sdk.Host, sdk.TurnEndEvent) error
	commands []sdk.Command
}

func (e *ext) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	return sdk.SessionStartResponse{}, e.start(ctx, h, ev)
}

func (e *ext) Commands() []sdk.Command { return e.commands }

func (e *ext) Describe() sdk.Info {
	return sdk.Info{Name: "contract", Version: "1.2.3", Description: "the contract test's extension"}
}

// turnEnder adds TurnEnd to ext.
type turnEnder struct{ *ext }

func (e turnEnder) TurnEnd(ctx context.Context, h sdk.Host, ev sdk.TurnEndEvent) (sdk.TurnEndResponse, error) {
	return sdk.TurnEndResponse{}, e.turnEnd(ctx, h, ev)
}

func TestInitDescribesTheExtension(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, sdk.Host, sdk.CommandRequest) (sdk.CommandResponse, error) {
		return sdk.CommandResponse{}, nil
	}
	_, resp := start(t, &ext{commands: []sdk.Command{
		{Name: "a", Description: "does a", Usage: "X", Run: noop},
		{Name: "b", Run: noop},
	}})
	require.Equal(t, uint32(sdk.APIVersion), resp.ApiVersion)
	require.Equal(t, "contract", resp.Name)
	require.Equal(t, "1.2.3", resp.Version)
	require.Equal(t, "the contract test's extension", resp.Description)
	require.Equal(t, []string{sdk.EventSessionStart}, resp.Events)
	require.Len(t, resp.Commands, 2)
	require.Equal(t, "a", resp.Commands[0].Name)
	require.Equal(t, "does a", resp.Commands[0].Description)
	require.Equal(t, "X", resp.Commands[0].Usage)
	require.Equal(t, "b", resp.Commands[1].Name)
}

func TestSessionStartCallsBackInOrder(t *testing.T) {
	t.Parallel()
	var got sdk.SessionStartEvent
	var prompt []string
	p, _ := start(t, &ext{start: func(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) error {
		got = ev
		if err := h.AddSystemMessage(ctx, "note"); err != nil {
			return err
		}
		var err error
		if prompt, err = h.SystemPrompt(ctx); err != nil {
			return err
		}
		if err := h.AppendData(ctx, map[string]int{"blocks": len(prompt)}); err != nil {
			return err
		}
		h.Logger().Info("started", "blocks", len(prompt))
		return nil
	}}, "seed")

	resp, err := p.client.HandleEvent(context.Background(), sessionStart(true, true))
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, sdk.SessionStartEvent{SessionID: "s1", SessionPath: "/s.jsonl", Resumed: true, Reseeded: true}, got)
	require.Equal(t, []string{"seed", "note"}, prompt, "the prompt read back holds the edit just made")
	require.Equal(t, []string{"append:note", "get_system_prompt", `data:{"blocks":2}`, "log:info:started"}, p.rec.list())
}

func TestCommandReplacesThePrompt(t *testing.T) {
	t.Parallel()
	p, _ := start(t, &ext{commands: []sdk.Command{{Name: "system-replace", Run: func(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
		if err := h.ReplaceSystemMessage(ctx, req.Args); err != nil {
			return sdk.CommandResponse{}, err
		}
		return sdk.CommandResponse{Output: "replaced"}, nil
	}}}}, "seed")

	resp, err := p.client.RunCommand(context.Background(), &pb.CommandRequest{Name: "system-replace", Args: "fresh start"})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, "replaced", resp.Output)
	require.Equal(t, []string{"replace:fresh start"}, p.rec.list())
	require.Equal(t, []conversation.Message{
		conversation.SystemMessage("seed", conversation.ModeAppend),
		conversation.SystemMessage("fresh start", conversation.ModeReplace),
	}, p.host.msgs)

	// A domain error of the host comes back to the command, which passes
	// it on: a domain error of the command, not a gRPC error.
	p.host.mu.Lock()
	p.host.failEdit = "session log is read-only"
	p.host.mu.Unlock()
	resp, err = p.client.RunCommand(context.Background(), &pb.CommandRequest{Name: "system-replace", Args: "again"})
	require.NoError(t, err)
	require.Equal(t, "panto host: replace system message: session log is read-only", resp.GetError().GetMessage())
}

// sdk.Bare travels with the replace (SystemEditRequest.bare); a replace
// without it is not bare.
func TestBareReplaceOverTheWire(t *testing.T) {
	t.Parallel()
	p, _ := start(t, &ext{start: func(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) error {
		if err := h.ReplaceSystemMessage(ctx, "keeps the sections"); err != nil {
			return err
		}
		if err := h.ReplaceSystemMessage(ctx, "bare", nil, sdk.Bare()); err != nil {
			return err
		}
		return h.ReplaceSystemMessage(ctx, "no options either", nil)
	}})
	resp, err := p.client.HandleEvent(context.Background(), sessionStart(false, false))
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, []string{"replace:keeps the sections", "replace bare:bare", "replace:no options either"}, p.rec.list())
}

func TestApplyReplaceOptions(t *testing.T) {
	t.Parallel()
	require.Equal(t, sdk.ReplaceOptions{}, sdk.ApplyReplaceOptions())
	require.Equal(t, sdk.ReplaceOptions{}, sdk.ApplyReplaceOptions(nil))
	require.Equal(t, sdk.ReplaceOptions{Bare: true}, sdk.ApplyReplaceOptions(nil, sdk.Bare()))
}

func TestUnknownCommandIsADomainError(t *testing.T) {
	t.Parallel()
	p, _ := start(t, &ext{})
	resp, err := p.client.RunCommand(context.Background(), &pb.CommandRequest{Name: "nope", Args: "x"})
	require.NoError(t, err, "not a gRPC error")
	require.Equal(t, "unknown command /nope", resp.GetError().GetMessage())
	require.Empty(t, p.rec.list())
}

func TestInitRefusesAnotherAPIVersion(t *testing.T) {
	t.Parallel()
	p := serve(t, &ext{})
	newer := uint32(sdk.APIVersion + 1)
	resp, err := p.client.Init(context.Background(), &pb.InitRequest{ApiVersion: newer + 1, MinApiVersion: newer, HostBrokerId: p.hostID})
	require.NoError(t, err, "a refusal is a domain error")
	require.Equal(t, uint32(sdk.APIVersion), resp.ApiVersion, "the extension still says which version it speaks")
	require.Equal(t, fmt.Sprintf("extension contract speaks panto API v1 to v%d; this panto speaks v%d to v%d (upgrade the one that is older)",
		sdk.APIVersion, newer, newer+1), resp.GetError().GetMessage())
}

// With a panto that speaks only version 1, the SDK speaks 1 too, and the
// extension is told which in Host.Info.
func TestInitNegotiatesTheNewestVersionBothSpeak(t *testing.T) {
	t.Parallel()
	got := make(chan sdk.HostInfo, 1)
	p := serve(t, &ext{start: func(_ context.Context, h sdk.Host, _ sdk.SessionStartEvent) error {
		got <- h.Info()
		return nil
	}})
	resp, err := p.client.Init(context.Background(), &pb.InitRequest{ApiVersion: 1, MinApiVersion: 1, HostBrokerId: p.hostID,
		HostVersion: "0.9", SessionId: "s9", Cwd: "/old"})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, uint32(1), resp.ApiVersion)
	_, err = p.client.HandleEvent(context.Background(), sessionStart(false, false))
	require.NoError(t, err)
	require.Equal(t, sdk.HostInfo{Version: "0.9", APIVersion: 1, SessionID: "s9", CWD: "/old"}, <-got)
}

// A first Init whose dial fails leaves nothing spent: a second Init dials
// again and the extension can call back.
func TestInitDialsAgainAfterAFailedDial(t *testing.T) {
	t.Parallel()
	p := serveWith(t, false, &ext{start: func(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) error {
		return h.AddSystemMessage(ctx, "called back")
	}})
	resp, err := p.client.Init(context.Background(), &pb.InitRequest{ApiVersion: 2, MinApiVersion: 1, HostBrokerId: 999})
	require.NoError(t, err)
	require.Contains(t, resp.GetError().GetMessage(), "connect to the panto host service")
	resp, err = p.client.Init(context.Background(), &pb.InitRequest{ApiVersion: 2, MinApiVersion: 1, HostBrokerId: p.serveHost()})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	ev, err := p.client.HandleEvent(context.Background(), sessionStart(false, false))
	require.NoError(t, err)
	require.Nil(t, ev.Error, "the second Init's connection is used")
	require.Contains(t, p.rec.list(), "append:called back")
}

func TestHookErrorIsADomainError(t *testing.T) {
	t.Parallel()
	calls := 0
	p, _ := start(t, &ext{start: func(context.Context, sdk.Host, sdk.SessionStartEvent) error {
		calls++
		return errors.New("cannot read .git/HEAD")
	}})
	for range 2 { // the extension keeps serving after an error
		resp, err := p.client.HandleEvent(context.Background(), sessionStart(false, false))
		require.NoError(t, err, "not a gRPC error")
		require.Equal(t, "cannot read .git/HEAD", resp.GetError().GetMessage())
	}
	require.Equal(t, 2, calls)
}

func TestHostErrorReachesTheHook(t *testing.T) {
	t.Parallel()
	var hookErr error
	p, _ := start(t, &ext{start: func(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) error {
		hookErr = h.AddSystemMessage(ctx, "x")
		return nil
	}})
	p.host.mu.Lock()
	p.host.failEdit = "extension disabled"
	p.host.mu.Unlock()
	resp, err := p.client.HandleEvent(context.Background(), sessionStart(false, false))
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.EqualError(t, hookErr, "panto host: add system message: extension disabled")
}

func TestWithoutAHostCallbacksFail(t *testing.T) {
	t.Parallel()
	var hookErr error
	p := serve(t, &ext{start: func(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) error {
		hookErr = h.AddSystemMessage(ctx, "x")
		return hookErr
	}})
	resp, err := p.client.Init(context.Background(), &pb.InitRequest{ApiVersion: 1, MinApiVersion: 1}) // no broker id
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	ev, err := p.client.HandleEvent(context.Background(), sessionStart(false, false))
	require.NoError(t, err)
	require.ErrorIs(t, hookErr, sdk.ErrNoHost)
	require.Equal(t, sdk.ErrNoHost.Error(), ev.GetError().GetMessage())
	require.Empty(t, p.rec.list())
}

func TestUnimplementedEventsAreNoOps(t *testing.T) {
	t.Parallel()
	started := 0
	p, _ := start(t, &ext{start: func(context.Context, sdk.Host, sdk.SessionStartEvent) error {
		started++
		return nil
	}})
	msg, err := json.Marshal(conversation.AssistantText("hi"))
	require.NoError(t, err)
	for _, req := range []*pb.EventRequest{
		{Event: sdk.EventBeforeTurn, Payload: &pb.EventRequest_BeforeTurn{BeforeTurn: &pb.BeforeTurn{UserText: "hi"}}},
		{Event: sdk.EventTurnEnd, Payload: &pb.EventRequest_TurnEnd{TurnEnd: &pb.TurnEnd{AssistantMessage: msg}}},
		{Event: sdk.EventSystemPromptChanged, Payload: &pb.EventRequest_SystemPromptChanged{SystemPromptChanged: &pb.SystemPromptChanged{Mode: "append", Text: "x", By: "panto"}}},
		{Event: sdk.EventSessionEnd, Payload: &pb.EventRequest_SessionEnd{SessionEnd: &pb.SessionEnd{}}},
	} {
		resp, err := p.client.HandleEvent(context.Background(), req)
		require.NoError(t, err, req.Event)
		require.Nil(t, resp.Error, req.Event)
	}
	require.Zero(t, started)
	require.Empty(t, p.rec.list())

	// An event without a payload is refused, as a domain error.
	resp, err := p.client.HandleEvent(context.Background(), &pb.EventRequest{Event: "compaction"})
	require.NoError(t, err)
	require.Equal(t, `unknown event "compaction"`, resp.GetError().GetMessage())
}

func TestTurnEndCarriesTheReply(t *testing.T) {
	t.Parallel()
	var got sdk.TurnEndEvent
	var history []conversation.Message
	p, _ := start(t, turnEnder{&ext{turnEnd: func(ctx context.Context, h sdk.Host, ev sdk.TurnEndEvent) error {
		got = ev
		var err error
		history, err = h.Messages(ctx)
		return err
	}}}, "seed")
	reply := conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
		conversation.Text("Looking."), conversation.ToolUse("t1", "read", json.RawMessage(`{"path":"go.mod"}`)),
	}}
	data, err := json.Marshal(reply)
	require.NoError(t, err)
	resp, err := p.client.HandleEvent(context.Background(), &pb.EventRequest{Event: sdk.EventTurnEnd, Payload: &pb.EventRequest_TurnEnd{
		TurnEnd: &pb.TurnEnd{AssistantMessage: data, StopReason: "tool_use"},
	}})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, sdk.TurnEndEvent{Message: reply, StopReason: "tool_use"}, got)
	require.Equal(t, []conversation.Message{conversation.SystemMessage("seed", conversation.ModeAppend)}, history)
	require.Equal(t, []string{"get_messages"}, p.rec.list())

	// A reply that is not message JSON is the extension's domain error.
	resp, err = p.client.HandleEvent(context.Background(), &pb.EventRequest{Event: sdk.EventTurnEnd, Payload: &pb.EventRequest_TurnEnd{
		TurnEnd: &pb.TurnEnd{AssistantMessage: []byte("{")},
	}})
	require.NoError(t, err)
	require.Contains(t, resp.GetError().GetMessage(), "decode turn_end message")
}

// Each optional interface of a hook adds exactly its event to Events and
// to what Init declares.
type (
	onlyBase     struct{ sdk.Base }
	onlyBefore   struct{ sdk.Base }
	onlyWatcher  struct{ sdk.Base }
	allHooks     struct{ sdk.Base }
	commandsOnly struct{ sdk.Base }
)

func (onlyBefore) BeforeTurn(context.Context, sdk.Host, sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	return sdk.BeforeTurnResponse{}, nil
}
func (onlyWatcher) SystemPromptChanged(context.Context, sdk.Host, sdk.SystemPromptChangedEvent) (sdk.SystemPromptChangedResponse, error) {
	return sdk.SystemPromptChangedResponse{}, nil
}
func (allHooks) SessionStart(context.Context, sdk.Host, sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	return sdk.SessionStartResponse{}, nil
}
func (allHooks) BeforeTurn(context.Context, sdk.Host, sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	return sdk.BeforeTurnResponse{}, nil
}
func (allHooks) TurnEnd(context.Context, sdk.Host, sdk.TurnEndEvent) (sdk.TurnEndResponse, error) {
	return sdk.TurnEndResponse{}, nil
}
func (allHooks) SystemPromptChanged(context.Context, sdk.Host, sdk.SystemPromptChangedEvent) (sdk.SystemPromptChangedResponse, error) {
	return sdk.SystemPromptChangedResponse{}, nil
}
func (allHooks) SessionEnd(context.Context, sdk.Host, sdk.SessionEndEvent) (sdk.SessionEndResponse, error) {
	return sdk.SessionEndResponse{}, nil
}
func (commandsOnly) Commands() []sdk.Command { return nil }

func TestEventsListsExactlyTheImplementedHooks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ext  sdk.Extension
		want []string
	}{
		{"base", onlyBase{}, nil},
		{"commands only", commandsOnly{}, nil},
		{"before_turn", onlyBefore{}, []string{sdk.EventBeforeTurn}},
		{"watcher", onlyWatcher{}, []string{sdk.EventSystemPromptChanged}},
		{"session_start", &ext{}, []string{sdk.EventSessionStart}},
		{"session_start and turn_end", turnEnder{&ext{}}, []string{sdk.EventSessionStart, sdk.EventTurnEnd}},
		{"all", allHooks{}, []string{
			sdk.EventSessionStart, sdk.EventBeforeTurn, sdk.EventTurnEnd, sdk.EventSystemPromptChanged, sdk.EventSessionEnd,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, sdk.Events(tc.ext))
			_, resp := start(t, tc.ext)
			require.Equal(t, tc.want, resp.Events, "what Init declares")
		})
	}
}

// benchHook measures one before_turn round trip over real gRPC, hook
// running fn, and reports the median.
func benchHook(b *testing.B, fn func(context.Context, sdk.Host) error) {
	p, _ := start(b, benchExt{fn: fn}, "seed")
	req := &pb.EventRequest{Event: sdk.EventBeforeTurn, Payload: &pb.EventRequest_BeforeTurn{BeforeTurn: &pb.BeforeTurn{UserText: "hi"}}}
	ctx := context.Background()
	var durs []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		resp, err := p.client.HandleEvent(ctx, req)
		durs = append(durs, time.Since(t0))
		if err != nil || resp.Error != nil {
			b.Fatalf("before_turn: %v %v", err, resp.GetError())
		}
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "p50-µs")
}

type benchExt struct {
	sdk.Base
	fn func(context.Context, sdk.Host) error
}

func (e benchExt) BeforeTurn(ctx context.Context, h sdk.Host, _ sdk.BeforeTurnEvent) (sdk.BeforeTurnResponse, error) {
	return sdk.BeforeTurnResponse{}, e.fn(ctx, h)
}

// BenchmarkHookRoundTrip is one hook call that does not call back.
func BenchmarkHookRoundTrip(b *testing.B) {
	benchHook(b, func(context.Context, sdk.Host) error { return nil })
}

// BenchmarkHookWithCallback is one hook call that makes one
// AddSystemMessage callback to the host.
func BenchmarkHookWithCallback(b *testing.B) {
	benchHook(b, func(ctx context.Context, h sdk.Host) error { return h.AddSystemMessage(ctx, "note") })
}
