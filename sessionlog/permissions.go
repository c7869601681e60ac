package sessionlog

import (
	"errors"
	"fmt"
)

// Permissions records the permission policy a session's tool calls run
// under from here on, on this branch: the mode, the rules in force with
// where each was written, the grants the user made for the session, and
// the sandbox. It is recorded when it changes (and at a start that finds
// it differs from the branch's last), so a branch runs under the policy
// it had, as it runs under its prompt, and a resume keeps the grants.
type Permissions struct {
	// Mode is the permission mode: default, accept-edits, plan or bypass.
	Mode string `json:"mode"`
	// Rules are the rules of the config and the flags.
	Rules []PermissionRule `json:"rules"`
	// Grants are the allow rules the user granted for the session.
	Grants []string `json:"grants"`
	// Sandbox is the sandbox policy; nil when it is off.
	Sandbox *SandboxPolicy `json:"sandbox,omitempty"`
	// Reason says what changed, for people: "start", "grant", "mode".
	Reason string `json:"reason,omitempty"`
}

// PermissionRule is one rule in force.
type PermissionRule struct {
	// Verdict is allow, ask or deny.
	Verdict string `json:"verdict"`
	// Rule is the rule as written: "bash(go test *)".
	Rule string `json:"rule"`
	// Source says where it was written ("config /p/config.toml",
	// "--allow").
	Source string `json:"source,omitempty"`
}

// SandboxPolicy is the OS boundary bash runs in.
type SandboxPolicy struct {
	// Mode is read-only or workspace-write.
	Mode string `json:"mode"`
	// Network lets bash use the network.
	Network bool `json:"network"`
	// WritableRoots are what bash may write besides the session's
	// TMPDIR (the project and its git directories included).
	WritableRoots []string `json:"writable_roots,omitempty"`
	// Required refuses bash where the kernel cannot sandbox.
	Required bool `json:"required,omitempty"`
	// UnixSockets are the unix sockets bash may connect to with the
	// network off.
	UnixSockets []string `json:"unix_sockets,omitempty"`
}

// PermissionsEntry returns an entry recording the permission policy.
func PermissionsEntry(p Permissions) Entry { return Entry{Type: TypePermissions, Permissions: &p} }

type permissionsLine struct {
	lineHead
	Permissions *Permissions `json:"permissions"`
}

// checkPermissions checks a permissions payload, written or read.
func checkPermissions(p *Permissions) error {
	if p == nil {
		return errors.New("permissions entry without its payload")
	}
	if p.Mode == "" {
		return errors.New("permissions entry without a mode")
	}
	for _, r := range p.Rules {
		switch r.Verdict {
		case "allow", "ask", "deny":
		default:
			return fmt.Errorf("permissions entry: rule %q has verdict %q, want allow, ask or deny", r.Rule, r.Verdict)
		}
		if r.Rule == "" {
			return errors.New("permissions entry: a rule without its text")
		}
	}
	if s := p.Sandbox; s != nil && s.Mode == "" {
		return errors.New("permissions entry: a sandbox without a mode")
	}
	return nil
}
