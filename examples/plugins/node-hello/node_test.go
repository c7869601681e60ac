package nodehello_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/internal/testio"
	"google.golang.org/grpc"

	"github.com/panto-dev/panto/internal/pb"
)

// handshake is panto's go-plugin handshake.
var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "PANTO_PLUGIN",
	MagicCookieValue: "extension-v1",
}

// extensionPlugin is the host side of the "extension" plugin: a bare
// pb.ExtensionClient on go-plugin's connection.
type extensionPlugin struct {
	plugin.NetRPCUnsupportedPlugin
}

func (extensionPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the extension is served by node, not by this test")
}

func (extensionPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return pb.NewExtensionClient(conn), nil
}

// syncBuffer is safe to read while another goroutine writes to it.
type syncBuffer = testio.SyncBuffer

// executable returns node-hello's absolute path. Without Node.js or the npm
// packages the test is skipped, except under CI=true, where they are
// installed and their absence is a failure.
func executable(t *testing.T) string {
	t.Helper()
	missing := t.Skipf
	if os.Getenv("CI") == "true" {
		missing = t.Fatalf
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH (%v): install Node.js to run the node-hello extension", err)
	}
	for _, pkg := range []string{"@grpc/grpc-js", "@grpc/proto-loader"} {
		if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil {
			missing("npm package %s is not installed: run `npm ci` in examples/plugins/node-hello (%v)", pkg, err)
		}
	}
	path, err := filepath.Abs("node-hello")
	require.NoError(t, err)
	return path
}

// start starts node-hello as panto does and dispenses its Extension client.
// The process is killed when the test ends.
func start(t *testing.T) (*plugin.Client, pb.ExtensionClient, *syncBuffer) {
	t.Helper()
	path := executable(t)
	logs := &syncBuffer{}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake,
		Plugins:          map[string]plugin.Plugin{"extension": extensionPlugin{}},
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "panto", Output: logs, Level: hclog.Trace}),
		StartTimeout:     20 * time.Second,
	})
	t.Cleanup(func() {
		client.Kill()
		if t.Failed() {
			t.Logf("go-plugin log:\n%s", logs.String())
		}
	})

	rpc, err := client.Client()
	require.NoError(t, err, "starting node-hello")
	raw, err := rpc.Dispense("extension")
	require.NoError(t, err)
	ext, ok := raw.(pb.ExtensionClient)
	require.True(t, ok, "dispensed %T", raw)
	require.NoError(t, rpc.Ping(), "grpc.health.v1.Health/Check for service \"plugin\"")
	return client, ext, logs
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestExtension(t *testing.T) {
	client, ext, logs := start(t)

	init, err := ext.Init(callCtx(t), &pb.InitRequest{
		ApiVersion: 1, MinApiVersion: 1, HostVersion: "test", SessionId: "s1", Cwd: t.TempDir(),
	})
	require.NoError(t, err)
	assert.Nil(t, init.GetError())
	assert.EqualValues(t, 1, init.GetApiVersion())
	assert.Equal(t, "node-hello", init.GetName())
	assert.Equal(t, "0.1.0", init.GetVersion())
	assert.NotEmpty(t, init.GetDescription())
	assert.Equal(t, []string{"session_start"}, init.GetEvents())
	require.Len(t, init.GetCommands(), 1)
	cmd := init.GetCommands()[0]
	assert.Equal(t, "node-note", cmd.GetName())
	assert.Equal(t, "Append a system note from Node.js", cmd.GetDescription())
	assert.Equal(t, "TEXT", cmd.GetUsage())

	ev, err := ext.HandleEvent(callCtx(t), &pb.EventRequest{
		Event:   "session_start",
		Payload: &pb.EventRequest_SessionStart{SessionStart: &pb.SessionStart{SessionId: "s1", Resumed: true}},
	})
	require.NoError(t, err)
	assert.Nil(t, ev.GetError())
	require.Len(t, ev.GetEdits(), 1)
	assert.Equal(t, "append", ev.GetEdits()[0].GetMode())
	assert.Equal(t, "Hello from a Node.js extension (session s1, resumed: true).", ev.GetEdits()[0].GetText())

	note, err := ext.RunCommand(callCtx(t), &pb.CommandRequest{Name: "node-note", Args: "x"})
	require.NoError(t, err)
	assert.Nil(t, note.GetError())
	assert.Equal(t, "noted", note.GetOutput())
	require.Len(t, note.GetEdits(), 1)
	assert.Equal(t, "append", note.GetEdits()[0].GetMode())
	assert.Equal(t, "x", note.GetEdits()[0].GetText())

	nope, err := ext.RunCommand(callCtx(t), &pb.CommandRequest{Name: "nope"})
	require.NoError(t, err, "an unknown command is a domain error, not a gRPC one")
	assert.Contains(t, nope.GetError().GetMessage(), `no command "nope"`)
	assert.Empty(t, nope.GetEdits())

	newer, err := ext.Init(callCtx(t), &pb.InitRequest{ApiVersion: 2, MinApiVersion: 2})
	require.NoError(t, err)
	assert.EqualValues(t, 1, newer.GetApiVersion())
	assert.Equal(t, "node-hello speaks panto extension API version 1, but this panto speaks versions 2 to 2",
		newer.GetError().GetMessage())

	// Kill calls plugin.GRPCController/Shutdown; node exits by itself, in
	// well under go-plugin's 2 s grace period.
	client.Kill()
	assert.True(t, client.Exited(), "node-hello still running after Kill")

	out := logs.String()
	assert.NotContains(t, out, "plugin failed to exit gracefully")
	assert.NotContains(t, out, "[ERROR]")
	// The JSON log lines on stderr were parsed (timestamp included) and
	// re-logged at their own level under the executable's name.
	assert.Regexp(t, `\[INFO\]  panto\.node-hello: listening:.* address=127\.0\.0\.1:\d+`, out)
	assert.Contains(t, out, "[INFO]  panto.node-hello: shutting down (GRPCController.Shutdown)")
}

func TestShutdownExits(t *testing.T) {
	client, ext, logs := start(t)

	_, err := ext.Shutdown(callCtx(t), &pb.ShutdownRequest{})
	require.NoError(t, err, "Shutdown replies before exiting")
	assert.Eventually(t, client.Exited, 5*time.Second, 20*time.Millisecond,
		"node-hello did not exit after Extension.Shutdown")
	assert.Contains(t, logs.String(), "[INFO]  panto.node-hello: shutting down (Extension.Shutdown)")
}

func TestRefusesWithoutCookie(t *testing.T) {
	path := executable(t)
	cmd := exec.Command(path)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PANTO_PLUGIN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "node-hello must exit non-zero without the cookie")
	assert.Equal(t, 1, exit.ExitCode())
	assert.Empty(t, stdout.String(), "nothing may reach stdout")
	assert.Contains(t, stderr.String(), "panto extension")
	assert.Contains(t, stderr.String(), "started by panto")
}
