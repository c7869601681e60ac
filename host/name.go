package host

import (
	"fmt"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// maxName bounds a session's name, in bytes.
const maxName = 200

// SetName names the session — a session_info entry, so the name is in
// the log: what /resume and panto session list show beside its id — or
// with name "" removes its name. The name is one line, its spaces
// folded; it returns the name recorded.
func (s *Session) SetName(name string) (string, error) {
	name = strings.Join(strings.Fields(conversation.ValidText(name)), " ")
	if len(name) > maxName {
		return "", fmt.Errorf("name: %d bytes; a name has at most %d", len(name), maxName)
	}
	done, err := s.ops.enter()
	if err != nil {
		return "", fmt.Errorf("name: %w", err)
	}
	defer done()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.w == nil {
		return "", fmt.Errorf("name: %w", ErrNotRecorded)
	}
	if err := s.writeLocked([]sessionlog.Entry{sessionlog.SessionInfoEntry(name)}, nil); err != nil {
		return "", fmt.Errorf("name: %w", err)
	}
	return name, nil
}

// Name is the session's name (SetName), or "": from its log.
func (s *Session) Name() (string, error) {
	t, err := s.Tree()
	if err != nil {
		return "", err
	}
	return t.Name()
}
