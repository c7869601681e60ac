package main

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

var day = time.Date(2026, 11, 29, 10, 0, 0, 0, time.Local)

// added returns the texts of the system blocks the extension added.
func added(h *sdktest.Harness) []string {
	var out []string
	for _, e := range h.Edits() {
		out = append(out, e.Text)
	}
	return out
}

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
			h := sdktest.New(t, &ext{dir: dir, platform: "linux/amd64", now: func() time.Time { return day }}).WithSystem(tc.prompt...)
			require.NoError(t, h.SessionStart(tc.ev))
			require.Equal(t, tc.want, added(h))
		})
	}
}

func TestSessionStartHostError(t *testing.T) {
	t.Parallel()
	e := &ext{dir: t.TempDir(), platform: "linux/amd64", now: func() time.Time { return day }}
	h := sdktest.New(t, e).WithHostFuncs(sdktest.HostFuncs{
		SystemPrompt: func(context.Context) ([]string, error) { return nil, errors.New("boom") },
	})
	require.ErrorContains(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true}), "env: boom")
	require.Empty(t, h.Edits())
}
