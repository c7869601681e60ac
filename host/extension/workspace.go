package extension

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/panto-dev/panto/internal/pb"
)

// Workspace is where the user works, when the front end offers it: an
// ACP editor's buffers and terminal (panto acp). The extensions reach it
// through the Host service's ReadTextFile, WriteTextFile and
// RunInTerminal (API v4); without one (Options.Workspace nil) those
// answer "unavailable" and the tools use the machine's files and
// processes. call is the tool call they are for ("" when none).
type Workspace interface {
	// Offers says what it offers: files (read and write), a terminal.
	Offers() (files, terminal bool)
	ReadTextFile(ctx context.Context, call, path string, line, limit int) (string, error)
	WriteTextFile(ctx context.Context, call, path, content string) error
	RunInTerminal(ctx context.Context, call string, c TerminalCommand) (TerminalResult, error)
}

// TerminalCommand is a command line to run in the workspace's terminal,
// as bash -c Command in Dir.
type TerminalCommand struct {
	Command, Dir string
	// Timeout bounds the run (0: only ctx); OutputLimit the output kept,
	// in bytes (0: the front end's default).
	Timeout     time.Duration
	OutputLimit int
}

// TerminalResult is what a command run in the terminal did.
type TerminalResult struct {
	Output    string
	Truncated bool
	ExitCode  int
	Signal    string
	TimedOut  bool
}

// ErrUnavailable says the workspace does not offer what was asked.
var ErrUnavailable = errors.New("the front end offers no workspace here")

// errUnavailable is ErrUnavailable on the wire.
var errUnavailable = &pb.Error{Message: ErrUnavailable.Error(), Code: "unavailable"}

// workspaceCall is a call of the workspace's for the tool call id
// claimed: kept when the extension is running or checking that call.
func (h *hostServer) workspaceCall(claimed string) string { return h.ext.checking.about(claimed) }

func wireErr(err error) *pb.Error {
	if errors.Is(err, ErrUnavailable) {
		return errUnavailable
	}
	return &pb.Error{Message: err.Error()}
}

// absolute refuses a relative path: the workspace's paths are absolute.
func absolute(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%q is not an absolute path", p)
	}
	return nil
}

func (h *hostServer) ReadTextFile(ctx context.Context, req *pb.ReadTextFileRequest) (*pb.ReadTextFileResponse, error) {
	ws := h.ws
	if files, _ := offers(ws); !files || !h.ext.ready.Load() {
		return &pb.ReadTextFileResponse{Error: errUnavailable}, nil
	}
	if err := absolute(req.GetPath()); err != nil {
		return &pb.ReadTextFileResponse{Error: wireErr(err)}, nil
	}
	text, err := ws.ReadTextFile(ctx, h.workspaceCall(req.GetToolCallId()), req.GetPath(), int(req.GetLine()), int(req.GetLimit()))
	if err != nil {
		return &pb.ReadTextFileResponse{Error: wireErr(err)}, nil
	}
	return &pb.ReadTextFileResponse{Content: text}, nil
}

func (h *hostServer) WriteTextFile(ctx context.Context, req *pb.WriteTextFileRequest) (*pb.WriteTextFileResponse, error) {
	ws := h.ws
	if files, _ := offers(ws); !files || !h.ext.ready.Load() {
		return &pb.WriteTextFileResponse{Error: errUnavailable}, nil
	}
	if err := absolute(req.GetPath()); err != nil {
		return &pb.WriteTextFileResponse{Error: wireErr(err)}, nil
	}
	if err := ws.WriteTextFile(ctx, h.workspaceCall(req.GetToolCallId()), req.GetPath(), req.GetContent()); err != nil {
		return &pb.WriteTextFileResponse{Error: wireErr(err)}, nil
	}
	return &pb.WriteTextFileResponse{}, nil
}

func (h *hostServer) RunInTerminal(ctx context.Context, req *pb.RunInTerminalRequest) (*pb.RunInTerminalResponse, error) {
	ws := h.ws
	if _, term := offers(ws); !term || !h.ext.ready.Load() {
		return &pb.RunInTerminalResponse{Error: errUnavailable}, nil
	}
	if req.GetCwd() != "" {
		if err := absolute(req.GetCwd()); err != nil {
			return &pb.RunInTerminalResponse{Error: wireErr(err)}, nil
		}
	}
	r, err := ws.RunInTerminal(ctx, h.workspaceCall(req.GetToolCallId()), TerminalCommand{
		Command: req.GetCommand(), Dir: req.GetCwd(),
		Timeout: time.Duration(req.GetTimeoutMs()) * time.Millisecond, OutputLimit: int(min(req.GetOutputByteLimit(), 1<<30)),
	})
	if err != nil {
		return &pb.RunInTerminalResponse{Error: wireErr(err)}, nil
	}
	return &pb.RunInTerminalResponse{Output: r.Output, Truncated: r.Truncated, ExitCode: int32(r.ExitCode), Signal: r.Signal, TimedOut: r.TimedOut}, nil
}

// offers is what ws offers; nothing for nil.
func offers(ws Workspace) (files, terminal bool) {
	if ws == nil {
		return false, false
	}
	return ws.Offers()
}

// initWorkspace is InitRequest's workspace.
func initWorkspace(ws Workspace) *pb.Workspace {
	files, terminal := offers(ws)
	if !files && !terminal {
		return nil
	}
	return &pb.Workspace{Files: files, Terminal: terminal}
}
