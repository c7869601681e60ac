package app

import (
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/host/provider"
	"github.com/panto-dev/panto/sessionlog"
)

// RequestAt rebuilds, from the log at path alone, the request whose
// reply at names (an entry id or a unique prefix, or the current
// branch's Nth message, as panto prompt --at takes it): panto request
// --at. No extension starts.
func RequestAt(path, at string) (host.Replay, error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return host.Replay{}, err
	}
	id, err := resolveAt(tree, path, at)
	if err != nil {
		return host.Replay{}, err
	}
	if id == "" {
		return host.Replay{}, usageErrorf("--at 0: no reply comes before the first message")
	}
	return host.RequestAt(tree, id)
}

// Wire is the wire and encoder options of the configured provider's
// requests (provider.Encode takes them), without its key.
func (a *App) Wire() (wire string, opts map[string]string) {
	return provider.WireOf(provider.Config{Name: a.cfg.Provider, AnthropicVersion: a.cfg.AnthropicVersion})
}

// ResolveAt is the entry an --at value names in the log at path ("" for
// 0): an entry id or a unique prefix, or the current branch's Nth
// message.
func ResolveAt(path, at string) (string, error) {
	tree, err := sessionlog.Scan(path)
	if err != nil {
		return "", err
	}
	return resolveAt(tree, path, at)
}
