package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

func sys(text string, mode conversation.Mode) sessionlog.Entry {
	return sessionlog.MessageEntry(conversation.SystemMessage(text, mode))
}

func sysFrom(text string, mode conversation.Mode, source string) sessionlog.Entry {
	return sessionlog.MessageEntry(conversation.SystemMessage(text, mode).WithSource(source))
}

func reseed() sessionlog.Entry {
	return sessionlog.LifecycleEntry(sessionlog.LifecycleResumed, true, nil)
}

func life() sessionlog.Entry {
	return sessionlog.LifecycleEntry(sessionlog.LifecycleStarted, false, nil)
}

func user(text string) sessionlog.Entry { return sessionlog.MessageEntry(conversation.UserText(text)) }

// The window rule of docs/system-prompt.md, case by case.
func TestConfigWindow(t *testing.T) {
	t.Parallel()
	a, r := conversation.ModeAppend, conversation.ModeReplace
	tests := []struct {
		name    string
		entries []sessionlog.Entry
		want    []string
	}{
		{"empty log", nil, nil},
		{"fresh: the leading run", []sessionlog.Entry{sys("seed", a), sys("p", a), life(), user("hi")}, []string{"seed", "p"}},
		{"extension edits after the lifecycle entry are outside", []sessionlog.Entry{
			sys("seed", a), life(), sys("ext", a), user("hi"), sys("later", a)}, []string{"seed"}},
		{"a re-seed moves the anchor (a log written before sources: its lifecycle entry says so)", []sessionlog.Entry{
			sys("seed", a), life(), user("hi"), sys("seed2", r), sys("p2", a), reseed()}, []string{"seed2", "p2"}},
		{"an extension's replace does not move it", []sessionlog.Entry{
			sys("seed", a), life(), user("hi"), sysFrom("persona", r, "extension persona")}, []string{"seed"}},
		{"an extension's replace without a source does not either", []sessionlog.Entry{
			sys("seed", a), life(), user("hi"), sys("persona", r)}, []string{"seed"}},
		{"a re-seed's replace is found by its source", []sessionlog.Entry{
			sys("seed", a), life(), user("hi"), sysFrom("seed2", r, ReseedSource+"project /p/SYSTEM.md"), sys("p2", a), user("x")}, []string{"seed2", "p2"}},
		{"a keyed replace is not a re-seed", []sessionlog.Entry{
			sys("seed", a), life(), sysFrom("x", r, "extension x"), life()}, []string{"seed"}},
		{"a log that starts with a message has an empty window", []sessionlog.Entry{user("hi"), sys("x", a)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ConfigWindow(tt.entries, nil))
		})
	}
}
