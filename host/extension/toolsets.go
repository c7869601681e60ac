package extension

import (
	"context"
	"fmt"

	"github.com/panto-dev/panto/internal/pb"
	"github.com/panto-dev/panto/serializers"
)

// An extension's tools are what Init declared until it gives another
// set (Host.SetTools, API v3). A new set waits, pending, until the host
// applies it at a turn boundary (ApplyToolChanges), so a turn's requests
// all offer the same tools and the log records each change before the
// turn it shapes.

// toolSet is a set an extension gave, and why.
type toolSet struct {
	tools  []*pb.Tool
	reason string
}

// tools returns the extension's tools as offered now.
func (e *Ext) tools() []*pb.Tool {
	e.toolsMu.Lock()
	defer e.toolsMu.Unlock()
	if e.current != nil {
		return e.current.tools
	}
	return e.info.GetTools()
}

// ToolSet is one extension's whole tool set, as offered from now on.
type ToolSet struct {
	Extension string
	// Reason says why it changed, for people ("" for the set an
	// extension started with).
	Reason string
	Tools  []serializers.Tool
}

func toolSetOf(name, reason string, tools []*pb.Tool) ToolSet {
	ts := ToolSet{Extension: name, Reason: reason, Tools: []serializers.Tool{}}
	for _, t := range tools {
		ts.Tools = append(ts.Tools, serializers.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: t.GetParameters()})
	}
	return ts
}

// ToolSets returns each enabled extension's tools, in load order: what
// the session offers (before the clash rule and narrowing).
func (m *Manager) ToolSets() []ToolSet {
	var out []ToolSet
	for _, e := range m.list() {
		if e.Disabled() == nil {
			out = append(out, toolSetOf(e.Name(), "", e.tools()))
		}
	}
	return out
}

// ApplyToolChanges makes each set an enabled extension gave since the
// last call the one offered, and returns them, in load order. The host
// calls it at a turn boundary, before the turn's first request.
func (m *Manager) ApplyToolChanges() []ToolSet {
	var out []ToolSet
	for _, e := range m.list() {
		e.toolsMu.Lock()
		p := e.pending
		e.pending = nil
		if p != nil {
			e.current = p
		}
		e.toolsMu.Unlock()
		if p != nil && e.Disabled() == nil {
			out = append(out, toolSetOf(e.Name(), p.reason, p.tools))
		}
	}
	if len(out) > 0 {
		m.clashMu.Lock()
		m.clashes = nil // a clash of the new sets is told again
		m.clashMu.Unlock()
	}
	return out
}

// SetTools takes an extension's new tool set (API v3), checked as Init's
// is; it is offered from the next turn boundary on.
func (h *hostServer) SetTools(_ context.Context, req *pb.SetToolsRequest) (*pb.SetToolsResponse, error) {
	if !h.ext.ready.Load() {
		return &pb.SetToolsResponse{Error: errNotReady}, nil
	}
	if err := checkTools(req.GetTools()); err != nil {
		err = fmt.Errorf("extension %s: new tools refused: %w", h.ext.Name(), err)
		h.report(err)
		return &pb.SetToolsResponse{Error: &pb.Error{Message: err.Error()}}, nil
	}
	h.ext.toolsMu.Lock()
	h.ext.pending = &toolSet{tools: req.GetTools(), reason: req.GetReason()}
	h.ext.toolsMu.Unlock()
	h.logger.Info("new tools, for the next turn", "extension", h.ext.Name(), "tools", len(req.GetTools()), "reason", req.GetReason())
	return &pb.SetToolsResponse{}, nil
}
