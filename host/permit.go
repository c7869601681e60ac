package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/permissions"
	"github.com/panto-dev/panto/sdk/sandbox"
	"github.com/panto-dev/panto/sessionlog"
)

// Every tool call the model makes is decided before it runs: the
// permission policy (rules and a mode, package permissions) says allow,
// ask or deny, and an allowed call runs inside the sandbox (package
// sdk/sandbox applies it in the tools extension). The policy is part of
// the session's state: a permissions entry records it when it changes,
// and the current one is always the last on the branch, so a resume and
// a move run under the policy of the path, grants included.
// docs/permissions.md is the user's side.

// Permissions configure how a session decides the model's tool calls.
type Permissions struct {
	// Policy is the mode and the rules of the config and flags, each rule
	// with its Source.
	Policy permissions.Policy
	// Env is where paths are read from: the workspace and the home.
	Env permissions.Env
	// Sandbox is the OS boundary of bash (and the roots write and edit
	// keep to); nil: off. Its WritableRoots hold the project and its git
	// directories; the session's TMPDIR is added by Open.
	Sandbox *sessionlog.SandboxPolicy
	// Always writes allow rules to the user's config (the *always allow*
	// choice) and returns the file it wrote; AlwaysFile names that file
	// before, for the question. Nil: the choice is not offered.
	Always     func(rules []string) (string, error)
	AlwaysFile string
	// TmpRoot is where the session's TMPDIR is made; "" is the system's
	// temporary folder. panto gives its run's own folder, which the next
	// panto removes when this one was killed.
	TmpRoot string
}

// askTimeout bounds a permission question: a call nobody answers for
// this long is denied.
const askTimeout = 30 * time.Minute

// permState is a session's permission machinery, set by Open.
type permState struct {
	cfg    Permissions
	tmpDir string // the session's TMPDIR, removed at Close
	// asking makes the questions of calls run side by side one at a time.
	asking chan struct{}
	// configured is the policy of the config and flags, for a path that
	// recorded none.
	configured *sessionlog.Permissions

	// mu guards the policy parsed last and the state it was parsed from:
	// the rules are compiled once per recorded state, not per call.
	mu     sync.Mutex
	parsed *sessionlog.Permissions
	policy permissions.Policy
}

// policyFor is the policy of st, parsed once.
func (p *permState) policyFor(st *sessionlog.Permissions) (permissions.Policy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st == p.parsed {
		return p.policy, nil
	}
	pol, err := policyOf(st)
	if err != nil {
		return permissions.Policy{}, err
	}
	p.parsed, p.policy = st, pol
	return pol, nil
}

// current is the state calls run under now: the branch's last recorded,
// or the configured one.
func (s *Session) current() *sessionlog.Permissions {
	if st := s.permissions(); st != nil {
		return st
	}
	return s.perm.configured
}

// openPermissions sets the session's permissions up and returns the
// permissions entry to record as it opens: when the policy differs from
// the path's last (mode, rules, sandbox), keeping the path's grants.
func (s *Session) openPermissions(cfg *Permissions) ([]sessionlog.Entry, error) {
	if cfg == nil {
		return nil, nil
	}
	configured := stateOf(cfg)
	p := &permState{cfg: *cfg, asking: make(chan struct{}, 1), configured: &configured}
	if cfg.Sandbox != nil || cfg.Policy.Mode == permissions.ModePlan {
		dir, err := os.MkdirTemp(cfg.TmpRoot, "tmp-")
		if err != nil {
			return nil, fmt.Errorf("open session: the session's TMPDIR: %w", err)
		}
		p.tmpDir = dir
	}
	s.perm = p
	want := stateOf(cfg)
	last := s.permissions()
	if last != nil {
		want.Grants = slices.Clone(last.Grants)
		if samePermissions(last, &want) {
			return nil, nil
		}
	}
	want.Reason = "start"
	return []sessionlog.Entry{sessionlog.PermissionsEntry(want)}, nil
}

// stateOf is the recorded form of a configured policy.
func stateOf(cfg *Permissions) sessionlog.Permissions {
	st := sessionlog.Permissions{Mode: string(cfg.Policy.Mode), Grants: []string{}, Rules: []sessionlog.PermissionRule{}}
	for _, l := range []struct {
		verdict string
		rules   []permissions.Rule
	}{{"allow", cfg.Policy.Allow}, {"ask", cfg.Policy.Ask}, {"deny", cfg.Policy.Deny}} {
		for _, r := range l.rules {
			st.Rules = append(st.Rules, sessionlog.PermissionRule{Verdict: l.verdict, Rule: r.String(), Source: r.Source})
		}
	}
	if cfg.Sandbox != nil {
		sb := *cfg.Sandbox
		st.Sandbox = &sb
	}
	return st
}

func samePermissions(a, b *sessionlog.Permissions) bool {
	sameSandbox := (a.Sandbox == nil) == (b.Sandbox == nil)
	if sameSandbox && a.Sandbox != nil {
		x, y := *a.Sandbox, *b.Sandbox
		sameSandbox = x.Mode == y.Mode && x.Network == y.Network && x.Required == y.Required &&
			slices.Equal(x.WritableRoots, y.WritableRoots) && slices.Equal(x.UnixSockets, y.UnixSockets)
	}
	return sameSandbox && a.Mode == b.Mode && slices.Equal(a.Rules, b.Rules) && slices.Equal(a.Grants, b.Grants)
}

// permissions is the policy recorded last on the branch, nil when none
// is.
func (s *Session) permissions() *sessionlog.Permissions {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.entries) - 1; i >= 0; i-- {
		if p := s.entries[i].Permissions; p != nil {
			return p
		}
	}
	return nil
}

// PermissionState is the permission policy the session's tool calls run
// under now, as recorded: /permissions shows it. ok is false when the
// session decides no calls (no Permissions were configured).
func (s *Session) PermissionState() (st sessionlog.Permissions, tmpDir string, ok bool) {
	if s.perm == nil {
		return sessionlog.Permissions{}, "", false
	}
	return *s.current(), s.perm.tmpDir, true
}

// SetPermissionMode switches the permission mode (Shift+Tab, /permissions
// mode), recorded in the log.
func (s *Session) SetPermissionMode(mode permissions.Mode) error {
	if _, err := permissions.ParseMode(string(mode)); err != nil {
		return err
	}
	return s.changePermissions("mode", func(p *sessionlog.Permissions) { p.Mode = string(mode) })
}

// changePermissions records the current policy as change makes it.
func (s *Session) changePermissions(reason string, change func(*sessionlog.Permissions)) error {
	if s.perm == nil {
		return errors.New("this session decides no tool calls")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	p := s.current()
	next := *p
	next.Grants = slices.Clone(p.Grants)
	if p.Sandbox != nil {
		sb := *p.Sandbox
		next.Sandbox = &sb
	}
	change(&next)
	next.Reason = reason
	if err := s.writeLocked([]sessionlog.Entry{sessionlog.PermissionsEntry(next)}, nil); err != nil {
		return fmt.Errorf("record permissions: %w", err)
	}
	return nil
}

// policy is the policy of the recorded state: its rules, with the
// session's grants as allow rules.
func policyOf(st *sessionlog.Permissions) (permissions.Policy, error) {
	mode, err := permissions.ParseMode(st.Mode)
	if err != nil {
		return permissions.Policy{}, err
	}
	pol := permissions.Policy{Mode: mode}
	add := func(dst *[]permissions.Rule, text, source string) error {
		r, err := permissions.ParseRule(text)
		if err != nil {
			return fmt.Errorf("rule %q (%s): %w", text, source, err)
		}
		r.Source = source
		*dst = append(*dst, r)
		return nil
	}
	for _, r := range st.Rules {
		dst := map[string]*[]permissions.Rule{"allow": &pol.Allow, "ask": &pol.Ask, "deny": &pol.Deny}[r.Verdict]
		if err := add(dst, r.Rule, r.Source); err != nil {
			return permissions.Policy{}, err
		}
	}
	for _, g := range st.Grants {
		if err := add(&pol.Allow, g, "granted for this session"); err != nil {
			return permissions.Policy{}, err
		}
	}
	return pol, nil
}

// sandboxOf is the sandbox of a call under st, nil when it is off. In
// plan mode bash runs read-only even with the sandbox off.
func (s *Session) sandboxOf(st *sessionlog.Permissions) *extension.Sandbox {
	sb := st.Sandbox
	if sb == nil && st.Mode != string(permissions.ModePlan) {
		return nil
	}
	out := &extension.Sandbox{Mode: "read-only", TmpDir: s.perm.tmpDir}
	if sb != nil {
		out.Mode, out.Network, out.Required = sb.Mode, sb.Network, sb.Required
		out.WritableRoots = slices.Clone(sb.WritableRoots)
		out.UnixSockets = slices.Clone(sb.UnixSockets)
	}
	if st.Mode == string(permissions.ModePlan) {
		out.Mode = "read-only"
	}
	return out
}

// runCall decides one call and runs it when allowed, asking the user
// when the policy says so and there is a user to ask.
func (s *Session) runCall(ctx context.Context, use conversation.Block) conversation.Block {
	if s.perm == nil {
		return s.tools.RunTool(ctx, use)
	}
	st := s.current()
	pol, err := s.perm.policyFor(st)
	if err != nil {
		return conversation.ToolResult(use.ID, "not run: the session's permission policy cannot be read: "+err.Error(), true)
	}
	d := pol.Decide(use.Name, use.Input, s.perm.cfg.Env)
	if pol.Mode == permissions.ModePlan && permissions.Edits(use.Name) {
		// Whatever the rules allow: plan mode changes no file.
		d = permissions.Decision{Verdict: permissions.Deny, Why: use.Name + " changes files, which permission mode plan never does"}
	}
	switch d.Verdict {
	case permissions.Deny:
		if d.Rule == "" {
			return conversation.ToolResult(use.ID, "not run: "+d.Why+".", true)
		}
		return conversation.ToolResult(use.ID, "not run: denied by the permission rule "+d.Why+from(d.Source)+".", true)
	case permissions.Ask:
		if res, ok := s.askCall(ctx, use, d); !ok {
			return res
		}
		st = s.current() // a grant may have changed it
	}
	sb := s.sandboxOf(st)
	run := s.tools.RunToolIn(ctx, use, sb)
	if run.SandboxBlocked == "" || sb == nil || !s.interactive.Load() || ctx.Err() != nil {
		return run.Result
	}
	if ok, _ := SandboxSupport(); !ok {
		// Refused because the sandbox is required and cannot be had:
		// running it unsandboxed is what the user ruled out.
		return run.Result
	}
	return s.offerRerun(ctx, use, sb, run, st.Mode == string(permissions.ModePlan), st.Sandbox != nil)
}

func from(source string) string {
	if source == "" {
		return ""
	}
	return " (" + source + ")"
}

// askCall asks the user whether the call may run: ok says it may; else
// res is the result that says why not. With nobody to ask, an ask is a
// denial that says how to allow the call.
func (s *Session) askCall(ctx context.Context, use conversation.Block, d permissions.Decision) (res conversation.Block, ok bool) {
	what := describeCall(use)
	asker := d.Rule + from(d.Source)
	if d.Rule == "" {
		asker = d.Why
	}
	grants := suggestGrants(use, s.perm.cfg.Env)
	if !s.interactive.Load() {
		why := d.Why // "bash is asked about (permission mode default)"
		how := "choose a looser mode with --permission-mode, or allow it in the [permissions] table of config.toml"
		switch {
		case d.Rule != "":
			why = "the rule " + d.Why + from(d.Source)
			how = "remove the ask rule " + d.Rule + from(d.Source) + ", or answer it in an interactive session"
		case len(grants) > 0:
			how = "run with --allow '" + strings.Join(grants, "' --allow '") + "', add it to the allow list of [permissions] in config.toml, or " +
				"choose a looser mode with --permission-mode"
		}
		return conversation.ToolResult(use.ID, fmt.Sprintf("not run: %s: %s, and there is nobody to ask here (print mode). To allow it: %s (docs/permissions.md).",
			what, why, how), true), false
	}
	// One question at a time: calls run side by side.
	select {
	case s.perm.asking <- struct{}{}:
		defer func() { <-s.perm.asking }()
	case <-ctx.Done():
		return conversation.ToolResult(use.ID, "not run: interrupted by the user", true), false
	}
	// A grant made while this call waited may allow it now.
	if st := s.current(); st != nil {
		if pol, err := s.perm.policyFor(st); err == nil && pol.Decide(use.Name, use.Input, s.perm.cfg.Env).Verdict == permissions.Allow {
			return conversation.Block{}, true
		}
	}
	var options []string
	var kinds []PermissionKind
	choice := func(text string, k PermissionKind) { options = append(options, text); kinds = append(kinds, k) }
	choice("Allow once", AllowOnce)
	// A grant is an allow rule, which an ask rule beats: offered only
	// when the mode asked.
	canGrant := d.Rule == "" && len(grants) > 0
	if canGrant {
		choice("Allow for this session: "+strings.Join(grants, ", "), AllowAlways)
		if s.perm.cfg.Always != nil {
			choice("Always allow: add "+strings.Join(grants, ", ")+" to "+s.perm.cfg.AlwaysFile, AllowAlways)
		}
	}
	choice("Deny", RejectOnce)
	choice("Deny, with a note to the model", RejectOnce)
	because := "asked by the rule " + asker
	if d.Rule == "" {
		because = "asked because " + d.Why
	}
	q := extension.Question{Kind: extension.AskSelect, Title: "Allow " + use.Name + "?",
		Message: what + "\n(" + because + ")", Options: options, Timeout: askTimeout, ToolCall: use.ID}
	a, err := s.askWith(ctx, "panto", q, kinds)
	if err != nil {
		return conversation.ToolResult(use.ID, "not run: the user did not allow it ("+err.Error()+")", true), false
	}
	picked := ""
	if a.Index >= 0 && a.Index < len(options) {
		picked = options[a.Index]
	}
	switch {
	case picked == "Allow once":
		return conversation.Block{}, true
	case strings.HasPrefix(picked, "Allow for this session"):
		if err := s.grant(grants); err != nil {
			s.notice(NoticeError, err.Error())
		}
		return conversation.Block{}, true
	case strings.HasPrefix(picked, "Always allow"):
		file, err := s.perm.cfg.Always(grants)
		if err != nil {
			s.notice(NoticeError, "always allow: "+err.Error()+"; allowed for this session only")
		} else {
			s.notice(NoticeInfo, "added "+strings.Join(grants, ", ")+" to "+file)
		}
		if err := s.grant(grants); err != nil {
			s.notice(NoticeError, err.Error())
		}
		return conversation.Block{}, true
	case picked == "Deny, with a note to the model":
		note, err := s.askWith(ctx, "panto", extension.Question{Kind: extension.AskInput, Title: "Note to the model",
			Placeholder: "why not, or what to do instead", Timeout: askTimeout, ToolCall: use.ID}, nil)
		if err == nil && strings.TrimSpace(note.Text) != "" {
			return conversation.ToolResult(use.ID, "not run: the user denied it, and says: "+strings.TrimSpace(note.Text), true), false
		}
	}
	return conversation.ToolResult(use.ID, "not run: the user denied it", true), false
}

// grant adds allow rules to the session's grants, recorded.
func (s *Session) grant(rules []string) error {
	return s.changePermissions("grant", func(p *sessionlog.Permissions) {
		for _, r := range rules {
			if !slices.Contains(p.Grants, r) {
				p.Grants = append(p.Grants, r)
			}
		}
	})
}

// offerRerun asks, after the sandbox blocked what a call needed, whether
// to run it again with more room: once outside the sandbox, or (for the
// network) with the network on for the session.
//
// In plan mode nothing runs outside the sandbox (plan mode writes
// nothing); the network is offered for the session only where a sandbox
// policy records it.
func (s *Session) offerRerun(ctx context.Context, use conversation.Block, sb *extension.Sandbox, run extension.ToolRun, plan, recorded bool) conversation.Block {
	const (
		outside = "Run it again outside the sandbox, once"
		network = "Turn the network on for this session and run it again"
		leave   = "Leave it blocked"
	)
	var options []string
	var kinds []PermissionKind
	if !plan {
		options, kinds = append(options, outside), append(kinds, AllowOnce)
	}
	if !sb.Network && recorded && strings.Contains(run.SandboxBlocked, "network") {
		options, kinds = append(options, network), append(kinds, AllowAlways)
	}
	if len(options) == 0 {
		return run.Result
	}
	options, kinds = append(options, leave), append(kinds, RejectOnce)
	select {
	case s.perm.asking <- struct{}{}:
		defer func() { <-s.perm.asking }()
	case <-ctx.Done():
		return run.Result
	}
	a, err := s.askWith(ctx, "panto", extension.Question{Kind: extension.AskSelect, Title: "The sandbox blocked " + use.Name,
		Message: describeCall(use) + "\nblocked by the sandbox: " + run.SandboxBlocked, Options: options, Timeout: askTimeout, ToolCall: use.ID}, kinds)
	if err != nil || a.Index < 0 || a.Index >= len(options) || options[a.Index] == leave {
		return run.Result
	}
	if options[a.Index] == outside {
		return s.tools.RunToolIn(ctx, use, nil).Result
	}
	if err := s.changePermissions("grant", func(p *sessionlog.Permissions) {
		if p.Sandbox != nil {
			p.Sandbox.Network = true
		}
	}); err != nil {
		s.notice(NoticeError, err.Error())
	}
	more := *sb
	more.Network = true
	return s.tools.RunToolIn(ctx, use, &more).Result
}

// describeCall says what a call does, for a question: the command of a
// bash call, the path of a file tool's, the tool's name otherwise.
func describeCall(use conversation.Block) string {
	var in struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		URL     string `json:"url"`
	}
	_ = json.Unmarshal(use.Input, &in)
	switch {
	case use.Name == "bash" && in.Command != "":
		return "bash: " + in.Command
	case in.Path != "":
		return use.Name + " " + in.Path
	case use.Name == "fetch" && in.URL != "":
		return "fetch " + in.URL
	}
	return use.Name + " " + string(use.Input)
}

// suggestGrants are the allow rules that would allow a call like this
// one: each command of a bash line as written (none when one holds a
// "*", which a rule would read as a wildcard), the workspace for a file
// tool's path in it, else the path itself, the host of a fetch's URL,
// and the tool for the others.
func suggestGrants(use conversation.Block, env permissions.Env) []string {
	var in struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		URL     string `json:"url"`
	}
	_ = json.Unmarshal(use.Input, &in)
	switch use.Name {
	case "bash":
		l := permissions.ParseLine(in.Command)
		if l.Err != nil || l.Opaque != "" {
			return nil
		}
		var out []string
		for _, c := range l.Commands {
			if c.Carrier {
				continue
			}
			if strings.ContainsAny(c.Text, "*()") {
				return nil
			}
			if r := "bash(" + c.Text + ")"; !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		return out
	case "edit", "write", "read", "grep", "find", "ls":
		family := "edit"
		if use.Name != "edit" && use.Name != "write" {
			family = "read"
		}
		p := in.Path
		if p == "" {
			return nil
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok && env.Home != "" {
			p = filepath.Join(env.Home, rest)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Workspace, p)
		}
		if rel, err := filepath.Rel(env.Workspace, filepath.Clean(p)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return []string{family + "(./**)"}
		}
		if strings.ContainsAny(p, "*?[]()") {
			return nil
		}
		return []string{family + "(" + filepath.Clean(p) + ")"}
	case "fetch":
		if h := permissions.URLHost(in.URL); h != "" && !strings.ContainsAny(h, "*()") {
			return []string{"fetch(" + h + ")"}
		}
	}
	return []string{use.Name}
}

// closePermissions removes the session's TMPDIR.
func (s *Session) closePermissions() {
	if s.perm != nil && s.perm.tmpDir != "" {
		if err := os.RemoveAll(s.perm.tmpDir); err != nil {
			s.logger.Warn("remove the session's TMPDIR", "dir", s.perm.tmpDir, "err", err)
		}
	}
}

// SandboxSupport says whether this machine can sandbox bash (Landlock
// and seccomp), and why not when it cannot.
func SandboxSupport() (ok bool, reason string) {
	sup := sandbox.Probe()
	return sup.OK(), sup.Reason
}
