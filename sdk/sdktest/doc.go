// Package sdktest runs a panto extension in-process, inside a Go test,
// with no model, no network and no subprocess: a Harness hands the
// extension a fake Host, calls its hooks and commands the way panto does,
// and records what the extension did.
//
//	func TestGreeting(t *testing.T) {
//		h := sdktest.New(t, &ext{}).WithSystem("You are a helpful assistant.")
//		require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
//		require.Equal(t, []sdktest.Edit{{Mode: conversation.ModeAppend, Text: "Hello."}}, h.Edits())
//		require.Equal(t, []string{"You are a helpful assistant.", "Hello."}, h.Prompt())
//	}
//
// The fake Host keeps a conversation: the messages given to WithSystem and
// AddMessages, plus every system edit the extension makes, in order.
// SystemPrompt and Prompt derive the effective prompt from it with
// conversation.EffectiveSystem, the rule panto itself uses, and a replace
// records what panto's does: the live sections again after it, unless it
// is bare (sdk.Bare; every section of the prompt counts as live, since
// panto removes those of extensions not loaded). A test that
// needs the Host to fail overrides its methods with WithHostFuncs. Each
// hook and command runs under panto's hook deadline (HookTimeout, or
// WithHookTimeout), and its context ends when it returns, as over gRPC.
//
// What the harness does not check is the wire: encoding, the handshake,
// version negotiation. For that, run the built binary with
// `panto ext check PATH`, or test over go-plugin's TestPluginGRPCConn as
// the SDK's own contract tests do.
package sdktest
