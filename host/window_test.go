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
		{"a re-seed moves the anchor", []sessionlog.Entry{
			sys("seed", a), life(), user("hi"), sys("seed2", r), sys("p2", a), life()}, []string{"seed2", "p2"}},
		{"an extension's replace moves it too", []sessionlog.Entry{
			sys("seed", a), life(), user("hi"), sys("persona", r)}, []string{"persona"}},
		{"a log that starts with a message has an empty window", []sessionlog.Entry{user("hi"), sys("x", a)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ConfigWindow(tt.entries))
		})
	}
}
