package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// What /resume's picker does with the sessions it lists besides opening
// one: finds them by any message's text, names one, deletes one.

// maxSearchText bounds the text of a session /resume searches, per
// session (its first messages').
const maxSearchText = 256 << 10

// SearchText is the text of every message of the current branch of the
// log at path, what the user typed and the replies, lowercased, at most
// maxSearchText bytes: what /resume's filter looks in beyond the first
// message.
func SearchText(path string) (string, error) {
	log, err := sessionlog.Read(path)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, m := range log.Messages() {
		var t string
		switch m.Role {
		case conversation.RoleUser:
			t = m.Typed()
		case conversation.RoleAssistant:
			t = m.Text()
		}
		if t == "" {
			continue
		}
		sb.WriteString(strings.ToLower(t))
		sb.WriteByte('\n')
		if sb.Len() >= maxSearchText {
			break
		}
	}
	return sb.String(), nil
}

// NameLog names the session of the log at path by appending a
// session_info entry ("" removes the name), taking the log's writer: it
// fails (sessionlog.ErrLocked) while a panto runs the session (which
// names itself with /name). It returns the name recorded.
func NameLog(path, name string) (string, error) {
	name = strings.Join(strings.Fields(conversation.ValidText(name)), " ")
	w, _, err := sessionlog.Open(path)
	if err != nil {
		return "", fmt.Errorf("name: %w", err)
	}
	defer w.Close()
	if _, err := w.Append(sessionlog.SessionInfoEntry(name)); err != nil {
		return "", fmt.Errorf("name %s: %w", path, err)
	}
	return name, w.Close()
}

// DeleteLog deletes the session log at path, the summary cached beside
// it and its images (sessionlog.ImageDir). It takes the log's writer first, so a session a panto is
// running is never deleted (sessionlog.ErrLocked).
func DeleteLog(path string) error {
	w, _, err := sessionlog.Open(path)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	defer w.Close()
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := os.Remove(path + ".summary"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete: %w", err)
	}
	if err := os.RemoveAll(sessionlog.ImageDir(path)); err != nil {
		return fmt.Errorf("delete the session's images: %w", err)
	}
	return nil
}

// ListAll returns the sessions of every directory, newest first: /resume's
// all-directories scope (SessionItem.Cwd says whose each is).
func (s *Store) ListAll() ([]SessionItem, error) {
	warn := s.once()
	dirs, err := filepath.Glob(filepath.Join(s.dirs.Sessions, "*"))
	if err != nil {
		return nil, err
	}
	var all []sessionFile
	for _, dir := range dirs {
		list, err := listSessions(dir, warn)
		if err != nil {
			return nil, err
		}
		for _, f := range list {
			f.header, f.headerErr = sessionlog.ReadHeader(f.path)
			all = append(all, f)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].modTime.After(all[j].modTime) })
	return items(all), nil
}

// AllSessions are every directory's sessions, newest first
// (Store.ListAll): /resume's all-directories scope.
func (a *App) AllSessions() ([]SessionItem, error) { return a.store.ListAll() }
