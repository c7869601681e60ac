package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// /extensions and /reload, for every front end: the extensions' states,
// one disabled for the rest of the session, and a reload that restarts
// every extension and reads the config and prompt files again without
// leaving the session.

// Extensions is what /extensions needs of a session; *host.Session has
// it.
type Extensions interface {
	Extensions() []host.ExtensionState
	DisableExtension(name string) error
}

// ExtensionsCommand runs /extensions [disable NAME]: the extensions'
// states, or NAME disabled for the rest of the session.
func ExtensionsCommand(s Session, args string) (string, error) {
	ext, ok := s.(Extensions)
	if !ok {
		return "", errors.New("/extensions: this session runs no extensions")
	}
	args = strings.TrimSpace(args)
	if rest, ok := strings.CutPrefix(args, "disable"); ok && (rest == "" || rest[0] == ' ') {
		name := strings.TrimSpace(rest)
		if name == "" {
			return "", errors.New("/extensions disable: name the extension (see /extensions)")
		}
		if err := ext.DisableExtension(name); err != nil {
			return "", err
		}
		return fmt.Sprintf("disabled %s for this session: it checks no tool call and its tools are gone (recorded); /reload starts it again", name), nil
	}
	if args != "" {
		return "", fmt.Errorf("/extensions %s: want /extensions or /extensions disable NAME", args)
	}
	states := ext.Extensions()
	if len(states) == 0 {
		return "no extensions are loaded", nil
	}
	var b strings.Builder
	for _, st := range states {
		fmt.Fprintf(&b, "%s\n    %s (%s)\n", st.String(), st.Path, st.Source)
	}
	b.WriteString("/reload restarts every extension; /extensions disable NAME goes on without one for this session")
	return b.String(), nil
}

// Before is what a reload compares the session after it with.
type Before struct {
	Prompt     []conversation.SystemText
	Extensions []string
	Provider   string
	Model      string
}

// BeforeReload takes what /reload compares with.
func BeforeReload(s Session) Before {
	info := s.Info()
	return Before{Prompt: s.EffectiveSystem(), Extensions: info.Extensions, Provider: info.Provider, Model: info.Model}
}

// ReloadReport says, for people, what a reload changed: every extension
// restarted, the prompt's blocks that changed (as the reconciliation
// recorded them), the extensions and the model.
func ReloadReport(before Before, after Session) string {
	info := after.Info()
	var parts []string
	if len(info.Extensions) > 0 {
		parts = append(parts, "restarted the extensions ("+strings.Join(info.Extensions, ", ")+")")
	} else {
		parts = append(parts, "no extensions to restart")
	}
	for _, n := range info.Extensions {
		if !slices.Contains(before.Extensions, n) {
			parts = append(parts, "extension "+n+" loaded")
		}
	}
	for _, n := range before.Extensions {
		if !slices.Contains(info.Extensions, n) {
			parts = append(parts, "extension "+n+" not loaded now")
		}
	}
	if changed := promptChanges(before.Prompt, after.EffectiveSystem()); len(changed) > 0 {
		what := "the system prompt changed: " + strings.Join(changed, "; ")
		if info.Reseeded {
			what += " (re-recorded from the config files, as a resume records it)"
		}
		parts = append(parts, what)
	} else {
		parts = append(parts, "the system prompt is unchanged")
	}
	if info.Provider != before.Provider || info.Model != before.Model {
		parts = append(parts, fmt.Sprintf("the model is now %s/%s (was %s/%s)", info.Provider, info.Model, before.Provider, before.Model))
	}
	return "reloaded: " + strings.Join(parts, "; ")
}

// promptChanges names the blocks of the prompt after that differ from
// before's, by source.
func promptChanges(before, after []conversation.SystemText) []string {
	name := func(b conversation.SystemText) string {
		switch {
		case b.Key != "":
			return "section " + b.Key
		case b.Source != "":
			return strings.TrimPrefix(b.Source, host.ReseedSource)
		}
		return "a block"
	}
	same := func(a, b conversation.SystemText) bool { return a.Text == b.Text && a.Key == b.Key }
	var out []string
	for _, b := range after {
		switch {
		case slices.ContainsFunc(before, func(x conversation.SystemText) bool { return same(x, b) }):
		case slices.ContainsFunc(before, func(x conversation.SystemText) bool { return name(x) == name(b) }):
			out = append(out, name(b)+" changed")
		default:
			out = append(out, name(b)+" added")
		}
	}
	for _, b := range before {
		if !slices.ContainsFunc(after, func(x conversation.SystemText) bool { return same(x, b) }) &&
			!slices.ContainsFunc(after, func(x conversation.SystemText) bool { return name(x) == name(b) }) {
			out = append(out, name(b)+" removed")
		}
	}
	return out
}

// ErrReloadNotRecorded refuses /reload of a session that is not recorded
// (--no-session): there is no log to open again.
var ErrReloadNotRecorded = errors.New("/reload: this session is not recorded (--no-session), so it cannot be opened again; restart panto instead")

// Reload reads the config files again and finds the extensions and the
// provider again, for the session Reopen opens next: /reload (the front
// end then switches to the log it is in, as a resume, whose
// reconciliation records what changed). The flags stay as they were
// given. On error nothing changed. Call it between turns, from the front
// end's goroutine.
func (a *App) Reload() error {
	dirs, cfg, policy, err := resolve(a.env, a.flags)
	if err != nil {
		return fmt.Errorf("/reload: %w", err)
	}
	n := *a
	n.dirs, n.cfg, n.policy = dirs, cfg, policy
	prov, err := n.newProvider()
	if err != nil {
		return fmt.Errorf("/reload: %w", err)
	}
	specs, err := n.extensionSpecs()
	if err != nil {
		return fmt.Errorf("/reload: %w", err)
	}
	a.dirs, a.cfg, a.policy, a.prov, a.specs, a.mcpMissing = dirs, cfg, policy, prov, specs, n.mcpMissing
	return nil
}

// ReloadPath is the log /reload opens again: the session's own; an error
// for one not recorded.
func ReloadPath(s Session) (string, error) {
	p := s.Info().Path
	if p == "" {
		return "", ErrReloadNotRecorded
	}
	return p, nil
}
