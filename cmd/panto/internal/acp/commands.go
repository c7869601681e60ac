package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/extension"
)

// The slash commands a client is offered (available_commands_update):
// panto's own that make sense in an editor, then every extension's. A
// command runs without the model; what it prints is the agent's message,
// and the prompt ends with end_turn. Nothing of it is recorded but what
// the command itself records (a compaction, a model change).

// builtin is one of panto's commands in ACP.
type builtin struct {
	description, hint string
	run               func(s *session, ctx context.Context, args string) (string, error)
}

var builtins = map[string]builtin{
	"prompt":  {"show the effective system prompt, each block with where it came from", "", (*session).cmdPrompt},
	"compact": {"summarise older messages to free context (the prompt stays)", "", (*session).cmdCompact},
	"model":   {"show the models to choose from, or switch to NAME (--force: one the provider does not list)", "NAME [--force]", (*session).cmdModel},
	"session": {"show the session's id and log", "", (*session).cmdSession},
	"permissions": {"show what the tool calls run under (mode, rules, grants, sandbox), or switch the mode", "mode MODE",
		func(s *session, _ context.Context, args string) (string, error) {
			return app.PermissionsCommand(s.current(), args)
		}},
	"extensions": {"show the extensions and their state, or go on without one for this session (disable NAME)", "disable NAME",
		func(s *session, _ context.Context, args string) (string, error) {
			return app.ExtensionsCommand(s.current(), args)
		}},
	"reload": {"restart every extension and read config and prompt files again (what changed is recorded)", "", (*session).cmdReload},
}

// builtinOrder is the order they are offered in.
var builtinOrder = []string{"prompt", "compact", "model", "session", "permissions", "extensions", "reload"}

// commands are the commands offered.
func (s *session) commands() []acpsdk.AvailableCommand {
	var out []acpsdk.AvailableCommand
	seen := map[string]bool{}
	for _, name := range builtinOrder {
		b := builtins[name]
		c := acpsdk.AvailableCommand{Name: name, Description: b.description}
		if b.hint != "" {
			c.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: b.hint}}
		}
		out = append(out, c)
		seen[name] = true
	}
	for _, c := range s.current().Commands() {
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		d := strings.TrimSpace(c.Description)
		if d == "" {
			d = "a command of the " + c.Extension + " extension"
		} else {
			d += " (" + c.Extension + ")"
		}
		ac := acpsdk.AvailableCommand{Name: c.Name, Description: d}
		if c.Usage != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: c.Usage}}
		}
		out = append(out, ac)
	}
	return out
}

// offerCommands sends the commands offered.
func (s *session) offerCommands() {
	s.update(acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: s.commands()}})
}

// command runs a slash command, when it is one panto or an extension
// has; handled is false for any other text starting with a slash (a
// message, then).
func (s *session) command(ctx context.Context, cmd app.Command) (handled bool, resp acpsdk.PromptResponse, err error) {
	var out string
	if b, ok := builtins[cmd.Name]; ok {
		out, err = b.run(s, ctx, cmd.Args)
	} else if slices.ContainsFunc(s.current().Commands(), func(c extension.Command) bool { return c.Name == cmd.Name }) {
		out, err = s.current().RunCommand(ctx, cmd.Name, cmd.Args)
	} else {
		return false, acpsdk.PromptResponse{}, nil
	}
	if err != nil {
		out = strings.TrimSpace(out + "\n/" + cmd.Name + ": " + err.Error())
	}
	if strings.TrimSpace(out) != "" {
		s.update(acpsdk.UpdateAgentMessageText(strings.TrimRight(out, "\n") + "\n"))
	}
	if ctx.Err() != nil {
		return true, acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	return true, acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}

func (s *session) cmdPrompt(context.Context, string) (string, error) {
	var b strings.Builder
	blocks := app.BlocksOf(s.current().EffectiveSystem())
	fmt.Fprintf(&b, "Effective system prompt: %d block(s)\n", len(blocks))
	app.WriteBlocks(&b, blocks)
	return b.String(), nil
}

func (s *session) cmdCompact(ctx context.Context, _ string) (string, error) {
	res, err := s.current().Compact(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("compacted: the next request sends %d messages instead of %d; the system prompt is unchanged", res.MessagesAfter, res.MessagesBefore), nil
}

func (s *session) cmdModel(ctx context.Context, args string) (string, error) {
	info := s.current().Info()
	name, force := app.ModelArgs(args)
	if name == "" && !force {
		var b strings.Builder
		for _, m := range s.current().Models(ctx).Names() {
			mark := " "
			if m == info.Model {
				mark = "*"
			}
			fmt.Fprintf(&b, "%s %s\n", mark, m)
		}
		fmt.Fprintf(&b, "provider %s; /model NAME switches (or the model option); /model NAME --force takes a name the provider does not list", info.Provider)
		return b.String(), nil
	}
	// The chat gets the error in words (did you mean, --force), not as
	// a JSON-RPC error.
	if err := app.SetModel(s.current(), name, force); err != nil {
		return "", err
	}
	return fmt.Sprintf("model %s (recorded; a load goes on with it)", name), nil
}

func (s *session) cmdSession(context.Context, string) (string, error) {
	info := s.current().Info()
	if info.Path == "" {
		return fmt.Sprintf("session %s is not recorded", info.ID), nil
	}
	return fmt.Sprintf("session %s\nlog %s\nmessages %d", info.ID, info.Path, s.current().MessageCount()), nil
}

// modelOption is the id of the model config option.
const modelOption acpsdk.SessionConfigId = "model"

// configOptions are the session's options: the model, from config's
// models.
func (s *session) configOptions() []acpsdk.SessionConfigOption {
	current := s.current().Info().Model
	opts := acpsdk.SessionConfigSelectOptionsUngrouped{}
	for _, m := range s.app.Models(current) {
		opts = append(opts, acpsdk.SessionConfigSelectOption{Name: m, Value: acpsdk.SessionConfigValueId(m)})
	}
	cat := acpsdk.SessionConfigOptionCategoryModel
	desc := "the model requests go to (config models lists more)"
	return []acpsdk.SessionConfigOption{{Select: &acpsdk.SessionConfigOptionSelect{
		Id: modelOption, Name: "Model", Description: &desc, Category: &cat, Type: "select",
		CurrentValue: acpsdk.SessionConfigValueId(current),
		Options:      acpsdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}}
}

// setModel switches the model, recorded as /model records it.
func (s *session) setModel(name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return invalidParams("the model's name is empty")
	}
	if err := s.current().SetModel(name); err != nil {
		var unknown *host.UnknownModelError
		if errors.As(err, &unknown) {
			return invalidParams(err.Error())
		}
		if errors.Is(err, host.ErrBusy) {
			return &acpsdk.RequestError{Code: -32600, Message: "the model cannot change while a turn runs: set it once the prompt has answered"}
		}
		return &acpsdk.RequestError{Code: -32603, Message: "set the model: " + err.Error()}
	}
	return nil
}
