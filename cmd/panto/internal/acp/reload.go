package acp

import (
	"context"
	"errors"
	"fmt"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/host"
)

// /reload in an editor: the config and prompt files read again, and the
// session's own log opened again in the place of the session in use (as
// a resume: every extension restarted, what changed recorded by the
// reconciliation); the client's session goes on, its id unchanged.

func (s *session) cmdReload(ctx context.Context, _ string) (string, error) {
	old := s.current()
	path, err := app.ReloadPath(old)
	if err != nil {
		return "", err
	}
	if old.Busy() {
		return "", errors.New("/reload: the session is busy; reload once it is done")
	}
	before := app.BeforeReload(old)
	if err := s.app.Reload(); err != nil {
		return "", err
	}
	swap := make(chan struct{})
	s.mu.Lock()
	s.swap = swap
	s.mu.Unlock()
	sw := app.Switch(ctx, old, path, s.app.Reopen)
	s.mu.Lock()
	if sw.Session != nil && !sw.Kept {
		s.sess = sw.Session
		s.unsubscribe()
		sctx, cancel := context.WithCancel(context.Background())
		s.events, s.unsubscribe = sw.Session.Subscribe(sctx), cancel
	}
	s.swap = nil
	s.mu.Unlock()
	close(swap)
	switch {
	case sw.Session == nil:
		return "", fmt.Errorf("/reload: %w; opening the session again failed too: %v (resume it with panto --session %s)", sw.Err, sw.BackErr, path)
	case sw.Err != nil:
		return "", fmt.Errorf("/reload: %w", sw.Err)
	}
	return app.ReloadReport(before, sw.Session), nil
}

// swapped is what the pump reads once the subscription events ended: the
// subscription of the session /reload opened in its place, waited for
// while the reload runs; nil when there is none (the session closed).
func (s *session) swapped(events <-chan host.Event) <-chan host.Event {
	s.mu.Lock()
	swap := s.swap
	s.mu.Unlock()
	if swap != nil {
		select {
		case <-swap:
		case <-s.stop:
			return nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events != events {
		return s.events
	}
	return nil
}
