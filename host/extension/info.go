package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
)

// Info is what an extension said about itself when it started.
type Info struct {
	Name, Version, Description string
	// APIVersion is the panto API version it speaks.
	APIVersion int
	// Events are the events it handles.
	Events   []string
	Commands []Command
	Tools    []Tool
	// Variables are the {{variables}} it defines.
	Variables map[string]string
}

// Tool is a tool an extension offers the model.
type Tool struct {
	Name, Description string
	// Parameters is the input's JSON schema; empty means any object.
	Parameters json.RawMessage
	// Guidance is prompt text on when and how to use the tool.
	Guidance string
}

func infoFrom(r *pb.InitResponse) Info {
	info := Info{Name: r.GetName(), Version: r.GetVersion(), Description: r.GetDescription(),
		APIVersion: int(r.GetApiVersion()), Events: r.GetEvents(), Variables: r.GetVariables()}
	for _, c := range r.GetCommands() {
		info.Commands = append(info.Commands, Command{Extension: r.GetName(), Name: c.GetName(), Description: c.GetDescription(), Usage: c.GetUsage()})
	}
	for _, t := range r.GetTools() {
		info.Tools = append(info.Tools, Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: t.GetParameters(), Guidance: t.GetGuidance()})
	}
	return info
}

// Describe starts the extension alone, returns what it says about itself
// in Init, and stops it; no event reaches it, and it can record nothing
// (panto ext list).
func Describe(ctx context.Context, spec Spec, opts Options) (Info, error) {
	opts.defaults()
	var first error
	report := func(err error) {
		if first == nil {
			first = err
		}
	}
	e, err := start(ctx, spec, refuse{}, opts, report)
	if err != nil {
		return Info{}, err
	}
	defer e.stop(true, opts.HookTimeout)
	return e.Info(), nil
}

// refuse is the Recorder of an extension that may record nothing.
type refuse struct{}

var errDescribeOnly = errors.New("nothing is recorded while panto only describes the extension")

func (refuse) EditSystem(string, Edit) error              { return errDescribeOnly }
func (refuse) EffectiveSystem() []conversation.SystemText { return nil }
func (refuse) Messages() []conversation.Message           { return nil }
func (refuse) AppendData(string, json.RawMessage) error {
	return fmt.Errorf("append data: %w", errDescribeOnly)
}
func (refuse) SetSection(string, string, string) error               { return errDescribeOnly }
func (refuse) Sections(string) []Section                             { return nil }
func (refuse) DisposeSections(string, string) error                  { return nil }
func (refuse) Ask(context.Context, string, Question) (Answer, error) { return Answer{}, ErrNoUser }
func (refuse) Notify(string, string, string)                         {}
func (refuse) SetStatus(string, string, string)                      {}
