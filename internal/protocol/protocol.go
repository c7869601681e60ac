// Package protocol is the machinery panto and its Go extensions share to
// speak the extension protocol (sdk/extension.proto) over
// hashicorp/go-plugin: the handshake, the go-plugin glue on each side, the
// gRPC options both ends use, and the repair of text that is not UTF-8.
//
// Authors never see it: the sdk package wraps the extension's side and
// host/extension panto's. The generated code is in internal/pb.
package protocol

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/internal/pb"
)

// Handshake is the go-plugin handshake panto and its extensions share. Its
// protocol version changes only for a break of go-plugin's transport; the
// panto API version is negotiated inside Init.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "PANTO_PLUGIN",
	MagicCookieValue: "extension-v1",
}

// PluginName is the name of the one plugin an extension binary serves.
const PluginName = "extension"

// The panto API versions: the newest this module speaks, and the oldest
// panto still loads. Each version only adds fields and calls to the wire
// (2: sections and the user calls; 3: InitRequest.config and SetTools;
// 4: the workspace calls; 5: the sandbox of a tool call; 6: a tool
// call's progress, ToolProgress; 7: GetCacheEstimate), so an extension built for an older one
// runs as it did.
const (
	APIVersion    = 7
	MinAPIVersion = 1
)

// GRPCPlugin is the go-plugin glue of the extension protocol. On the
// extension's side NewServer builds the Extension service; on panto's,
// GRPCClient gives a *Conn.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// NewServer returns the Extension service (extension side only).
	NewServer func(broker *plugin.GRPCBroker) pb.ExtensionServer
}

// GRPCServer registers the extension service (extension side).
func (p *GRPCPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	if p.NewServer == nil {
		return errors.New("protocol: no extension to serve")
	}
	pb.RegisterExtensionServer(s, p.NewServer(broker))
	return nil
}

// GRPCClient returns a *Conn (panto's side).
func (p *GRPCPlugin) GRPCClient(_ context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Conn{Extension: pb.NewExtensionClient(conn), Broker: broker}, nil
}

// Conn is panto's side of one extension: its client and the broker on
// which panto serves the Host service back to it.
type Conn struct {
	Extension pb.ExtensionClient
	Broker    *plugin.GRPCBroker
}

// The event names, as extensions declare them in Init.
const (
	EventSessionStart        = "session_start"
	EventBeforeTurn          = "before_turn"
	EventTurnEnd             = "turn_end"
	EventSystemPromptChanged = "system_prompt_changed"
	EventSessionEnd          = "session_end"
	EventToolCall            = "tool_call"
	EventToolResult          = "tool_result"
	EventBeforeRequest       = "before_request"
	EventBeforeMove          = "before_move"
	EventAfterMove           = "after_move"
	// EventToolCancel asks an extension to stop one of its tool calls
	// that is running: the payload is a ToolCall holding its id (and
	// name). panto sends it only to an extension that declared it, when
	// the user interrupts a call, and then waits a short time for the
	// call's own answer on its CallTool, which it records as the call's
	// result: a tool that had already made its change says so. One that
	// does not declare it has its CallTool cancelled at once, and panto
	// cannot say what the call did.
	EventToolCancel = "tool_cancel"
)
