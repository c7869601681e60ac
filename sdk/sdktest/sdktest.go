package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/hashicorp/go-hclog"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/rules"
	"github.com/panto-dev/panto/sdk"
)

// HookTimeout is the deadline of each hook and command the harness runs,
// unless WithHookTimeout says otherwise: panto's default hook_timeout.
// panto disables an extension that misses it; the harness returns an
// error wrapping context.DeadlineExceeded.
const HookTimeout = 5 * time.Second

// Edit is one system-prompt edit an extension made. A section's edit has
// its Key (as the extension gave it, without its name) and mode append;
// an empty Text with a Key removed the section. Bare is set on a replace
// made with sdk.Bare.
//
// The sections panto records again after a replace that is not bare
// (the live sections, spec amendment 6) are panto's, not the
// extension's edits: they are in Messages and Prompt, not in Edits.
type Edit struct {
	Mode conversation.Mode
	Key  string
	Text string
	Bare bool
}

// HostFuncs overrides the fake Host's methods, terraform style: a non-nil
// field is called instead of the method's default, which records the call
// (a nil field keeps the default). Use it to make the Host fail:
//
//	h.WithHostFuncs(sdktest.HostFuncs{
//		AppendData: func(context.Context, any) error { return errors.New("disk full") },
//	})
//
// ReplaceSystemMessage is not given the call's options (sdk.Bare): test
// them through Edits, with no override.
type HostFuncs struct {
	AddSystemMessage     func(ctx context.Context, text string) error
	ReplaceSystemMessage func(ctx context.Context, text string) error
	SystemPrompt         func(ctx context.Context) ([]string, error)
	Messages             func(ctx context.Context) ([]conversation.Message, error)
	AppendData           func(ctx context.Context, v any) error
	SetSection           func(ctx context.Context, key, text string) error
	RemoveSection        func(ctx context.Context, key string) error
	Sections             func(ctx context.Context) ([]sdk.Section, error)
	// CacheEstimate answers Host.CacheEstimate; nil answers nothing
	// cached (the zero estimate).
	CacheEstimate func(ctx context.Context) (sdk.CacheEstimate, error)
}

// Harness runs one extension against a fake Host for one test. Its
// methods are safe to call from any goroutine, as the Host is for the
// extension.
type Harness struct {
	ext      sdk.Extension
	ctx      context.Context
	commands map[string]sdk.Command
	logger   hclog.Logger
	host     *fakeHost
	t        testing.TB

	mu        sync.Mutex
	vars      map[string]string
	user      User
	closing   bool // SessionEnd was delivered: no more questions
	questions []Question
	notices   []Notice
	status    map[string]string
	timeout   time.Duration
	funcs     HostFuncs
	msgs      []conversation.Message
	edits     []Edit
	data      []json.RawMessage
	tools     []sdk.Tool
	config    json.RawMessage
	toolSets  []ToolSet
	progress  []Progress
	log       bytes.Buffer
}

// New returns a harness for ext with an empty conversation. It fails the
// test if panto would refuse ext: a name (sdk.Info.Name) that is not 1 to
// 64 letters, digits, _ or -, or is "panto" in any case; or commands it
// could not run: an empty name, one with a slash or a space in it, a nil
// Run, or a name given twice; and likewise for its tools (see Tools).
func New(t testing.TB, ext sdk.Extension) *Harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := &Harness{ext: ext, ctx: ctx, commands: map[string]sdk.Command{}, timeout: HookTimeout, t: t}
	if n := h.Info().Name; n != "" {
		if err := rules.CheckExtensionName(n); err != nil {
			t.Fatalf("sdktest: panto would not load this extension: %v", err)
		}
	}
	h.host = &fakeHost{h: h}
	h.logger = hclog.New(&hclog.LoggerOptions{
		Name:   h.name(),
		Level:  hclog.Trace,
		Output: lockedWriter{h},
	})
	if cp, ok := ext.(sdk.CommandProvider); ok {
		for _, c := range cp.Commands() {
			switch {
			case c.Name == "" || strings.ContainsFunc(c.Name, func(r rune) bool { return r == '/' || unicode.IsSpace(r) }):
				t.Fatalf("sdktest: command %q: a name is one word without the slash", c.Name)
			case c.Run == nil:
				t.Fatalf("sdktest: command /%s has no Run", c.Name)
			}
			if _, dup := h.commands[c.Name]; dup {
				t.Fatalf("sdktest: command /%s is declared twice", c.Name)
			}
			h.commands[c.Name] = c
		}
	}
	if tp, ok := ext.(sdk.ToolProvider); ok {
		h.tools = checkTools(t, tp.Tools())
	}
	return h
}

func (h *Harness) name() string {
	if n := h.Info().Name; n != "" {
		return n
	}
	return "extension"
}

// WithSystem appends each text to the conversation as an append-mode
// system message: the configured prompt, as panto seeds it. It records no
// Edit and returns h.
func (h *Harness) WithSystem(texts ...string) *Harness {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, text := range texts {
		h.msgs = append(h.msgs, conversation.SystemMessage(text, conversation.ModeAppend))
	}
	return h
}

// AddMessages appends msgs to the conversation (a system message in
// replace mode, a user's message, a model's reply...). It records no Edit
// and returns h.
func (h *Harness) AddMessages(msgs ...conversation.Message) *Harness {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range msgs {
		h.msgs = append(h.msgs, m.Clone())
	}
	return h
}

// WithHostFuncs overrides the fake Host's methods (see HostFuncs) for the
// calls that follow, and returns h.
func (h *Harness) WithHostFuncs(f HostFuncs) *Harness {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.funcs = f
	return h
}

// WithHookTimeout sets the deadline of the hooks and commands that follow
// (panto's hook_timeout; HookTimeout by default), and returns h.
func (h *Harness) WithHookTimeout(d time.Duration) *Harness {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timeout = d
	return h
}

// Host returns the fake Host the extension is given, to call it as the
// extension would from outside a hook.
func (h *Harness) Host() sdk.Host { return h.host }

// Edits returns the system edits the extension made, in order.
func (h *Harness) Edits() []Edit {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.edits)
}

// Prompt returns the effective system prompt, block by block, as the next
// model request would carry it.
func (h *Harness) Prompt() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return conversation.Texts(conversation.EffectiveSystem(h.msgs))
}

// Messages returns a copy of the conversation: the messages given to
// WithSystem and AddMessages and the extension's system edits, in order.
func (h *Harness) Messages() []conversation.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]conversation.Message, len(h.msgs))
	for i, m := range h.msgs {
		out[i] = m.Clone()
	}
	return out
}

// Data returns the JSON of each value the extension gave AppendData, in
// order.
func (h *Harness) Data() []json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.data)
}

// Log returns what the extension logged through Host.Logger, one line per
// entry.
func (h *Harness) Log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.log.String()
}

// Info returns the extension's Info (the zero Info if it implements no
// sdk.Describer).
func (h *Harness) Info() sdk.Info {
	if d, ok := h.ext.(sdk.Describer); ok {
		return d.Describe()
	}
	return sdk.Info{}
}

// Commands returns the extension's commands, as panto lists them.
func (h *Harness) Commands() []sdk.Command {
	if cp, ok := h.ext.(sdk.CommandProvider); ok {
		return cp.Commands()
	}
	return nil
}

// SessionStart delivers the session_start event. It returns nil if the
// extension does not handle it, as do all the event methods.
func (h *Harness) SessionStart(ev sdk.SessionStartEvent) error {
	if x, ok := h.ext.(sdk.SessionStarter); ok {
		return h.hook("SessionStart", func(ctx context.Context) error { _, err := x.SessionStart(ctx, h.host, ev); return err })
	}
	return nil
}

// BeforeTurn delivers the before_turn event. It does not add the user's
// message to the conversation (AddMessages does; Turn does both).
func (h *Harness) BeforeTurn(ev sdk.BeforeTurnEvent) error {
	if x, ok := h.ext.(sdk.BeforeTurner); ok {
		return h.hook("BeforeTurn", func(ctx context.Context) error { _, err := x.BeforeTurn(ctx, h.host, ev); return err })
	}
	return nil
}

// TurnEnd delivers the turn_end event. It does not add the reply to the
// conversation (AddMessages does; Turn does both).
func (h *Harness) TurnEnd(ev sdk.TurnEndEvent) error {
	if x, ok := h.ext.(sdk.TurnEnder); ok {
		return h.hook("TurnEnd", func(ctx context.Context) error { _, err := x.TurnEnd(ctx, h.host, ev); return err })
	}
	return nil
}

// SystemPromptChanged delivers the system_prompt_changed event. The
// harness never sends it by itself: panto sends it asynchronously, after
// each recorded change, and a test says when.
func (h *Harness) SystemPromptChanged(ev sdk.SystemPromptChangedEvent) error {
	if x, ok := h.ext.(sdk.SystemPromptWatcher); ok {
		return h.hook("SystemPromptChanged", func(ctx context.Context) error { _, err := x.SystemPromptChanged(ctx, h.host, ev); return err })
	}
	return nil
}

// SessionEnd delivers the session_end event. As in panto, the session is
// closing from then on: every question (Confirm, Select, Input) fails at
// once with sdk.ErrClosing, and is not recorded.
func (h *Harness) SessionEnd(ev sdk.SessionEndEvent) error {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	if x, ok := h.ext.(sdk.SessionEnder); ok {
		return h.hook("SessionEnd", func(ctx context.Context) error { _, err := x.SessionEnd(ctx, h.host, ev); return err })
	}
	return nil
}

// Turn plays one turn as panto does: the user's message is recorded,
// before_turn is delivered, the reply is recorded, and turn_end is
// delivered with stop reason "end_turn". It stops at the first error.
func (h *Harness) Turn(userText, replyText string) error {
	h.AddMessages(conversation.UserText(userText))
	if err := h.BeforeTurn(sdk.BeforeTurnEvent{UserText: userText}); err != nil {
		return err
	}
	reply := conversation.AssistantText(replyText)
	h.AddMessages(reply)
	return h.TurnEnd(sdk.TurnEndEvent{Message: reply, StopReason: "end_turn"})
}

// Command runs "/name args" (the slash is optional in name). It returns
// an error for a command the extension does not declare, and otherwise
// what the command's Run returns.
func (h *Harness) Command(name, args string) (sdk.CommandResponse, error) {
	name = strings.TrimPrefix(name, "/")
	c, ok := h.commands[name]
	if !ok {
		return sdk.CommandResponse{}, fmt.Errorf("sdktest: unknown command /%s", name)
	}
	var resp sdk.CommandResponse
	err := h.hook("/"+name, func(ctx context.Context) error {
		var err error
		resp, err = c.Run(ctx, h.host, sdk.CommandRequest{Args: args})
		return err
	})
	return resp, err
}

// hook runs fn under the hook deadline, as panto runs a hook or command.
func (h *Harness) hook(what string, fn func(ctx context.Context) error) error {
	h.mu.Lock()
	timeout := h.timeout
	h.mu.Unlock()
	return h.hookWithin(timeout, what, "hook deadline; panto would disable the extension", fn)
}

// hookWithin runs fn under timeout; deadline says what missing it means.
// As in panto, the clock stops while the extension waits on a question
// to the user (WithUser), and starts again from zero when it is answered.
func (h *Harness) hookWithin(timeout time.Duration, what, deadline string, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(h.ctx)
	defer cancel(nil)
	var (
		mu sync.Mutex // orders t's assignment before expire reads it
		t  *time.Timer
	)
	expire := func() {
		mu.Lock()
		timer := t
		mu.Unlock()
		if h.host.waiting(func() { timer.Reset(timeout) }) {
			return
		}
		cancel(context.DeadlineExceeded)
	}
	mu.Lock()
	t = time.AfterFunc(timeout, expire)
	mu.Unlock()
	defer t.Stop()
	err := fn(ctx)
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return fmt.Errorf("sdktest: %s did not return within the %s %s: %w",
			what, timeout, deadline, context.DeadlineExceeded)
	}
	return err
}

// SessionID is the session id the harness's Host gives.
const SessionID = "sdktest-session"

// The built-in variables the harness renders with, as panto's: cwd, os,
// arch, date, model and provider. WithVariables changes them.
func (h *Harness) builtins() map[string]string {
	out := map[string]string{
		"cwd": "/project", "os": runtime.GOOS, "arch": runtime.GOARCH,
		"date": time.Now().Format("2006-01-02"), "model": "sdktest-model", "provider": "sdktest",
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, v := range h.vars {
		out[k] = v
	}
	return out
}

// variables are what {{name}} renders to: the extension's own variables
// under the built-ins, which win, and env.NAME from the environment (less
// the provider keys, which panto never renders).
func (h *Harness) variables() rules.Vars {
	values := map[string]string{}
	if vp, ok := h.ext.(sdk.VariableProvider); ok {
		for k, v := range vp.Variables() {
			values[k] = v
		}
	}
	for k, v := range h.builtins() {
		values[k] = v
	}
	return rules.Map{Values: values, Env: rules.Env(os.Getenv)}
}

// WithVariables sets built-in variables (cwd, model, ...) as a test's
// panto would have them, and returns h.
func (h *Harness) WithVariables(vars map[string]string) *Harness {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.vars == nil {
		h.vars = map[string]string{}
	}
	for k, v := range vars {
		h.vars[k] = v
	}
	return h
}

// fakeHost is the sdk.Host the extension is given.
type fakeHost struct {
	h *Harness

	// asking counts the questions waiting on the scripted user; then
	// run when the last is answered (see hookWithin).
	askMu  sync.Mutex
	asking int
	then   []func()
}

var _ sdk.Host = (*fakeHost)(nil)

// edit records an unkeyed edit as panto does. After a replace that is
// not bare, panto records each live section again, in its earlier order,
// with its owner as source (spec amendment 6); the harness counts every
// section of the prompt as live — panto removes those of extensions not
// loaded when the session opens.
func (f *fakeHost) edit(ctx context.Context, mode conversation.Mode, text string, bare bool, override func(context.Context, string) error) error {
	if override != nil {
		return override(ctx, text)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h := f.h
	// panto renders {{variables}} in every block an extension records,
	// strictly: so does the harness, with the same rules.
	rendered, err := rules.Render(text, "extension "+h.name(), h.variables())
	if err != nil {
		return fmt.Errorf("panto host: %w", err)
	}
	text = rendered
	h.mu.Lock()
	defer h.mu.Unlock()
	var live []conversation.SystemText
	if mode == conversation.ModeReplace && !bare {
		for _, b := range conversation.EffectiveSystem(h.msgs) {
			if b.Key != "" {
				live = append(live, b)
			}
		}
	}
	h.msgs = append(h.msgs, conversation.SystemMessage(text, mode).WithSource("extension "+h.name()))
	for _, b := range live {
		owner := conversation.SectionOwner(b.Key)
		h.msgs = append(h.msgs, conversation.KeyedSystemMessage(b.Key, b.Text).WithSource("extension "+owner))
	}
	h.edits = append(h.edits, Edit{Mode: mode, Text: text, Bare: bare && mode == conversation.ModeReplace})
	return nil
}

func (f *fakeHost) AddSystemMessage(ctx context.Context, text string) error {
	return f.edit(ctx, conversation.ModeAppend, text, false, f.funcs().AddSystemMessage)
}

// ReplaceSystemMessage records the replace as panto does: the live
// sections again after it, unless opts hold sdk.Bare.
func (f *fakeHost) ReplaceSystemMessage(ctx context.Context, text string, opts ...sdk.ReplaceOption) error {
	bare := sdk.ApplyReplaceOptions(opts...).Bare
	return f.edit(ctx, conversation.ModeReplace, text, bare, f.funcs().ReplaceSystemMessage)
}

// SetSection records the extension's section as panto does, by
// conversation's section rule: under the extension's name, set in place,
// nothing recorded when unchanged.
func (f *fakeHost) SetSection(ctx context.Context, key, text string) error {
	if fn := f.funcs().SetSection; fn != nil {
		return fn(ctx, key, text)
	}
	return f.section(ctx, key, text)
}

// CacheEstimate is HostFuncs.CacheEstimate's answer; without one,
// nothing is cached.
func (f *fakeHost) CacheEstimate(ctx context.Context) (sdk.CacheEstimate, error) {
	if fn := f.funcs().CacheEstimate; fn != nil {
		return fn(ctx)
	}
	if err := ctx.Err(); err != nil {
		return sdk.CacheEstimate{}, err
	}
	return sdk.CacheEstimate{}, nil
}

func (f *fakeHost) RemoveSection(ctx context.Context, key string) error {
	if fn := f.funcs().RemoveSection; fn != nil {
		return fn(ctx, key)
	}
	return f.section(ctx, key, "")
}

func (f *fakeHost) section(ctx context.Context, key, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h := f.h
	full, err := conversation.SectionKey(h.name(), key)
	if err != nil {
		return fmt.Errorf("panto host: set section %s: %w", key, err)
	}
	if text != "" {
		rendered, err := rules.Render(text, "extension "+h.name(), h.variables())
		if err != nil {
			return fmt.Errorf("panto host: set section %s: %w", key, err)
		}
		text = rendered
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if conversation.SectionUnchanged(conversation.EffectiveSystem(h.msgs), full, text) {
		return nil // unchanged: panto records nothing
	}
	h.msgs = append(h.msgs, conversation.KeyedSystemMessage(full, text).WithSource("extension "+h.name()))
	h.edits = append(h.edits, Edit{Mode: conversation.ModeAppend, Key: key, Text: text})
	return nil
}

func (f *fakeHost) Sections(ctx context.Context) ([]sdk.Section, error) {
	if fn := f.funcs().Sections; fn != nil {
		return fn(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.h.Sections(), nil
}

// Sections returns the extension's sections in the prompt, in order, as
// Host.Sections gives them to it.
func (h *Harness) Sections() []sdk.Section {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []sdk.Section
	for _, b := range conversation.OwnedSections(conversation.EffectiveSystem(h.msgs), h.name()) {
		out = append(out, sdk.Section{Key: b.Key, Text: b.Text, Source: b.Source})
	}
	return out
}

func (f *fakeHost) SystemPrompt(ctx context.Context) ([]string, error) {
	if fn := f.funcs().SystemPrompt; fn != nil {
		return fn(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.h.Prompt(), nil
}

func (f *fakeHost) Messages(ctx context.Context) ([]conversation.Message, error) {
	if fn := f.funcs().Messages; fn != nil {
		return fn(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.h.Messages(), nil
}

func (f *fakeHost) AppendData(ctx context.Context, v any) error {
	if fn := f.funcs().AppendData; fn != nil {
		return fn(ctx, v)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		// The message the real Host gives.
		return fmt.Errorf("panto host: append data: encode: %w", err)
	}
	h := f.h
	h.mu.Lock()
	defer h.mu.Unlock()
	h.data = append(h.data, data)
	return nil
}

func (f *fakeHost) Logger() hclog.Logger { return f.h.logger }

// Info is what the harness tells the extension about panto.
func (f *fakeHost) Info() sdk.HostInfo {
	f.h.mu.Lock()
	config := f.h.config
	f.h.mu.Unlock()
	return sdk.HostInfo{Version: "sdktest", APIVersion: sdk.APIVersion, SessionID: SessionID, CWD: f.h.builtins()["cwd"], Config: config}
}

func (f *fakeHost) funcs() HostFuncs {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	return f.h.funcs
}

// lockedWriter writes the extension's log lines into the harness.
type lockedWriter struct{ h *Harness }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.log.Write(p)
}
