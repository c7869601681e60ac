package main

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk"
)

var day = time.Date(2026, 11, 29, 10, 0, 0, 0, time.Local)

// fakeHost is an sdk.Host whose methods run its func fields; it records
// every AddSystemMessage.
type fakeHost struct {
	mu     sync.Mutex
	added  []string
	prompt func(ctx context.Context) ([]string, error)
}

var _ sdk.Host = (*fakeHost)(nil)

func (h *fakeHost) AddSystemMessage(_ context.Context, text string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.added = append(h.added, text)
	return nil
}
func (h *fakeHost) ReplaceSystemMessage(context.Context, string) error { panic("unexpected") }
func (h *fakeHost) SystemPrompt(ctx context.Context) ([]string, error) {
	if h.prompt == nil {
		return nil, nil
	}
	return h.prompt(ctx)
}
func (h *fakeHost) Messages(context.Context) ([]conversation.Message, error) { panic("unexpected") }
func (h *fakeHost) AppendData(context.Context, any) error                    { panic("unexpected") }
func (h *fakeHost) Logger() hclog.Logger                                     { return hclog.NewNullLogger() }

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	dir := t.TempDir()
	out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	return dir
}

func TestBuildBlock(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	plain := t.TempDir()
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"git repository", repo, "Environment:\n- Working directory: " + repo +
			"\n- Platform: linux/amd64\n- Git repository: yes (branch main)\n- Date: 2026-11-29"},
		{"not a repository", plain, "Environment:\n- Working directory: " + plain +
			"\n- Platform: linux/amd64\n- Git repository: no\n- Date: 2026-11-29"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := buildBlock(tc.dir, "linux/amd64", gitInfo(context.Background(), tc.dir), day)
			require.Equal(t, tc.want, got)
		})
	}
	require.Equal(t, "Environment:\n- Working directory: /p\n- Platform: linux/arm64\n- Git repository: yes (detached HEAD)\n- Date: 2026-11-29",
		buildBlock("/p", "linux/arm64", git{repo: true}, day))
}

func TestSessionStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // not a repository
	now := buildBlock(dir, "linux/amd64", git{}, day)
	yesterday := buildBlock(dir, "linux/amd64", git{}, day.AddDate(0, 0, -1))
	otherBranch := buildBlock(dir, "linux/amd64", git{repo: true, branch: "feature"}, day)
	for _, tc := range []struct {
		name   string
		ev     sdk.SessionStartEvent
		prompt []string
		want   []string
	}{
		{"fresh", sdk.SessionStartEvent{}, nil, []string{now}},
		{"reseeded", sdk.SessionStartEvent{Resumed: true, Reseeded: true}, []string{"base"}, []string{now}},
		{"resume, unchanged", sdk.SessionStartEvent{Resumed: true}, []string{"base", now, "other"}, nil},
		{"resume, changed date", sdk.SessionStartEvent{Resumed: true}, []string{"base", yesterday}, []string{now}},
		{"resume, changed branch", sdk.SessionStartEvent{Resumed: true}, []string{otherBranch}, []string{now}},
		{"resume, the latest block counts", sdk.SessionStartEvent{Resumed: true}, []string{now, yesterday}, []string{now}},
		{"resume, changed back", sdk.SessionStartEvent{Resumed: true}, []string{yesterday, now}, nil},
		{"resume, no block yet", sdk.SessionStartEvent{Resumed: true}, []string{"base"}, []string{now}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &fakeHost{prompt: func(context.Context) ([]string, error) { return tc.prompt, nil }}
			e := &ext{dir: dir, platform: "linux/amd64", now: func() time.Time { return day }}
			require.NoError(t, e.SessionStart(context.Background(), h, tc.ev))
			require.Equal(t, tc.want, h.added)
		})
	}
}

func TestSessionStartHostError(t *testing.T) {
	t.Parallel()
	h := &fakeHost{prompt: func(context.Context) ([]string, error) { return nil, errors.New("boom") }}
	e := &ext{dir: t.TempDir(), platform: "linux/amd64", now: func() time.Time { return day }}
	require.ErrorContains(t, e.SessionStart(context.Background(), h, sdk.SessionStartEvent{Resumed: true}), "env: boom")
	require.Empty(t, h.added)
}
