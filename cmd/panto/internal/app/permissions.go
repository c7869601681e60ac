package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/permissions"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// The permission policy of a run: the config's [permissions] and
// [sandbox] with the flags on top (--permission-mode, or
// PANTO_PERMISSION_MODE, and --allow), handed to the host, which decides
// each tool call (docs/permissions.md).

// permissionModeEnv sets the permission mode for scripts; the flag
// beats it.
const permissionModeEnv = "PANTO_PERMISSION_MODE"

// loadPolicy is the run's policy; a bad flag is a usage error.
func loadPolicy(env Env, cfg config.Config, f Flags) (permissions.Policy, error) {
	mode, from := f.PermissionMode, "--permission-mode"
	if mode == "" {
		mode, from = env.Getenv(permissionModeEnv), permissionModeEnv
	}
	pol, err := cfg.Permissions.Policy(mode, f.Allow)
	if err != nil {
		if strings.HasPrefix(err.Error(), "config ") {
			return permissions.Policy{}, err
		}
		if strings.HasPrefix(err.Error(), "permission mode") {
			return permissions.Policy{}, usageErrorf("%s: %v", from, err)
		}
		return permissions.Policy{}, usageErrorf("%v", err)
	}
	return pol, nil
}

// hostPermissions are the host's permissions for a session in the
// working directory.
func (a *App) hostPermissions() *host.Permissions {
	home := a.env.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	p := &host.Permissions{Policy: a.policy, Env: permissions.Env{Workspace: a.dirs.CWD, Home: home}, TmpRoot: a.sockets}
	if sb := a.cfg.Sandbox; sb.Mode != config.SandboxOff {
		roots := append([]string{a.dirs.CWD}, gitDirs(a.dirs.CWD)...)
		for _, r := range sb.WritableRoots {
			if !contains(roots, r) {
				roots = append(roots, r)
			}
		}
		p.Sandbox = &sessionlog.SandboxPolicy{Mode: sb.Mode, Network: sb.Network, WritableRoots: roots, Required: sb.Required, UnixSockets: sb.UnixSockets}
	}
	user := config.Path(a.dirs.Layer(layers.User))
	p.AlwaysFile = user
	p.Always = func(rules []string) (string, error) { return user, AddAllowRules(user, rules) }
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// gitDirs are the git directories of the repository dir is in, which
// workspace-write lets bash write (git commit writes there): the .git
// directory, or for a worktree its own git directory and the main
// repository's common one. None when dir is in no repository.
func gitDirs(dir string) []string {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		if err == nil && fi.IsDir() {
			return []string{dotgit}
		}
		if err == nil && fi.Mode().IsRegular() {
			return worktreeDirs(dotgit)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}

// worktreeDirs reads a worktree's .git file ("gitdir: PATH") and the
// commondir file of the git directory it names.
func worktreeDirs(dotgit string) []string {
	data, err := layers.ReadFile(dotgit, 4096, layers.RegularOnly)
	if err != nil {
		return nil
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return nil
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(dotgit), gitdir)
	}
	out := []string{filepath.Clean(gitdir)}
	if c, err := layers.ReadFile(filepath.Join(gitdir, "commondir"), 4096, layers.RegularOnly); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		out = append(out, filepath.Clean(common))
	}
	return out
}

// sandboxNotice says, once at start, that bash runs unsandboxed (or not
// at all) because this kernel cannot sandbox it; "" when it can, or the
// sandbox is off.
func (a *App) sandboxNotice() string {
	if a.cfg.Sandbox.Mode == config.SandboxOff {
		return ""
	}
	ok, reason := host.SandboxSupport()
	if ok {
		return ""
	}
	if a.cfg.Sandbox.Required {
		return "warning: bash will not run: sandbox.required = true, and " + reason + " (docs/permissions.md)"
	}
	return "warning: bash runs without a sandbox: " + reason + "; set sandbox.required = true to refuse it instead (docs/permissions.md)"
}

// permissionsTable finds a [permissions] table header; allowLine an
// allow key in it.
var (
	tableHeader      = regexp.MustCompile(`(?m)^[ \t]*\[\[?[^\]\n]*\]\]?[ \t]*(#.*)?$`)
	permissionsTable = regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*permissions[ \t]*\][ \t]*(#.*)?$`)
	allowLine        = regexp.MustCompile(`(?m)^[ \t]*allow[ \t]*=[ \t]*\[`)
)

// AddAllowRules adds rules to the allow list of the [permissions] table
// of the config file at path (the *always allow* answer), creating the
// file, the table or the key as needed and keeping the rest of the file
// as written. The result must load with the rules in it, or nothing is
// written.
func AddAllowRules(path string, rules []string) error {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("add allow rules: %w", err)
	}
	quoted := make([]string, len(rules))
	for i, r := range rules {
		quoted[i] = strconv.Quote(r)
	}
	out := addAllow(data, quoted)
	if _, err := config.Parse(path, out); err != nil {
		return fmt.Errorf("add allow rules to %s: the file would not load (%v); add %s to [permissions] allow yourself", path, err, strings.Join(rules, ", "))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("add allow rules: %w", err)
	}
	f, err := atomicfile.Create(context.Background(), path)
	if err != nil {
		return fmt.Errorf("add allow rules to %s: %w", path, err)
	}
	if _, err := f.Write(out); err != nil {
		f.Abort()
		return fmt.Errorf("add allow rules to %s: %w", path, err)
	}
	if err := f.Commit(true); err != nil {
		return fmt.Errorf("add allow rules to %s: %w", path, err)
	}
	return nil
}

// addAllow is data with quoted added to [permissions] allow.
func addAllow(data []byte, quoted []string) []byte {
	list := strings.Join(quoted, ", ")
	loc := permissionsTable.FindIndex(data)
	if loc == nil {
		var b bytes.Buffer
		b.Write(data)
		if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
			b.WriteByte('\n')
		}
		if len(data) > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[permissions]\nallow = [%s]\n", list)
		return b.Bytes()
	}
	bodyStart := loc[1]
	bodyEnd := len(data)
	if next := tableHeader.FindIndex(data[bodyStart:]); next != nil {
		bodyEnd = bodyStart + next[0]
	}
	body := data[bodyStart:bodyEnd]
	var b bytes.Buffer
	if at := allowLine.FindIndex(body); at != nil {
		// Right after the opening bracket: the list's first items.
		cut := bodyStart + at[1]
		b.Write(data[:cut])
		b.WriteString(list)
		rest := bytes.TrimLeft(data[cut:], " \t")
		if len(rest) > 0 && rest[0] != ']' {
			b.WriteString(", ")
		}
		b.Write(data[cut:])
		return b.Bytes()
	}
	b.Write(data[:bodyStart])
	fmt.Fprintf(&b, "\nallow = [%s]", list)
	b.Write(data[bodyStart:])
	return b.Bytes()
}

// PermissionsCommand is /permissions in every front end: with no
// arguments, what the session's tool calls run under; "mode MODE"
// switches the mode (recorded in the log).
func PermissionsCommand(s Session, args string) (string, error) {
	if rest, ok := strings.CutPrefix(args, "mode"); ok && (rest == "" || rest[0] == ' ') {
		mode := strings.TrimSpace(rest)
		if mode == "" {
			return "", errors.New("/permissions mode: name a mode: default, accept-edits, plan or bypass")
		}
		if err := s.SetPermissionMode(permissions.Mode(mode)); err != nil {
			return "", fmt.Errorf("/permissions mode: %w", err)
		}
		return "permission mode: " + mode + modeNote(mode), nil
	}
	if args != "" {
		return "", fmt.Errorf("/permissions %s: want no arguments, or mode MODE", args)
	}
	return DescribePermissions(s), nil
}

// modeNote warns of bypass.
func modeNote(mode string) string {
	if mode == string(permissions.ModeBypass) {
		return " (every call runs that no rule denies or asks about: only the sandbox holds)"
	}
	return ""
}

// NextMode is the mode after mode in the cycle Shift+Tab walks:
// default → accept-edits → plan → bypass → default.
func NextMode(mode string) permissions.Mode {
	order := []permissions.Mode{permissions.ModeDefault, permissions.ModeAcceptEdits, permissions.ModePlan, permissions.ModeBypass}
	for i, m := range order {
		if string(m) == mode {
			return order[(i+1)%len(order)]
		}
	}
	return permissions.ModeDefault
}

// DescribePermissions says what the session's tool calls run under:
// the mode, the rules and where each was written, the grants, the
// sandbox (/permissions, panto prompt).
func DescribePermissions(s interface {
	PermissionState() (sessionlog.Permissions, string, bool)
}) string {
	st, tmp, ok := s.PermissionState()
	if !ok {
		return "this session decides no tool calls: every call runs, with no sandbox"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "permission mode: %s%s\n", st.Mode, modeNote(st.Mode))
	if len(st.Rules) == 0 {
		b.WriteString("rules: none (the mode decides every call)\n")
	} else {
		b.WriteString("rules (deny, then ask, then allow; the first match wins):\n")
		for _, v := range []string{"deny", "ask", "allow"} {
			for _, r := range st.Rules {
				if r.Verdict == v {
					fmt.Fprintf(&b, "  %-5s  %-28s  %s\n", r.Verdict, r.Rule, r.Source)
				}
			}
		}
	}
	if len(st.Grants) > 0 {
		b.WriteString("allowed for this session:\n")
		for _, g := range st.Grants {
			fmt.Fprintf(&b, "  %s\n", g)
		}
	}
	sb := st.Sandbox
	switch {
	case sb == nil && st.Mode == string(permissions.ModePlan):
		fmt.Fprintf(&b, "sandbox: off, but plan mode runs bash read-only (TMPDIR %s)\n", tmp)
	case sb == nil:
		b.WriteString("sandbox: off (sandbox.mode = \"off\"): bash can write anything you can\n")
	default:
		network := "off"
		if sb.Network {
			network = "on"
		}
		mode := sb.Mode
		if st.Mode == string(permissions.ModePlan) {
			mode = "read-only (plan mode)"
		}
		fmt.Fprintf(&b, "sandbox: %s, network %s%s\n", mode, network, map[bool]string{true: ", required", false: ""}[sb.Required])
		if mode == config.SandboxWorkspaceWrite {
			fmt.Fprintf(&b, "  bash writes: %s\n", strings.Join(sb.WritableRoots, ", "))
		}
		if len(sb.UnixSockets) > 0 && !sb.Network {
			fmt.Fprintf(&b, "  unix sockets bash may connect to: %s\n", strings.Join(sb.UnixSockets, ", "))
		}
		fmt.Fprintf(&b, "  TMPDIR: %s\n", tmp)
		if ok, reason := host.SandboxSupport(); !ok {
			if sb.Required {
				fmt.Fprintf(&b, "  this machine cannot sandbox (%s): bash is refused\n", reason)
			} else {
				fmt.Fprintf(&b, "  this machine cannot sandbox (%s): bash runs unsandboxed\n", reason)
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
