package main

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

var day = time.Date(2026, 11, 29, 10, 0, 0, 0, time.Local)

// added returns the texts of the system blocks the extension added.
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
	section := func(text string) conversation.Message {
		return conversation.KeyedSystemMessage("env:environment", text)
	}
	for _, tc := range []struct {
		name  string
		ev    sdk.SessionStartEvent
		prior []conversation.Message
		// edits is what is recorded: the section's new text, or nothing.
		edits []sdktest.Edit
	}{
		{"fresh", sdk.SessionStartEvent{}, nil, []sdktest.Edit{{Mode: "append", Key: "environment", Text: now}}},
		{"resume, unchanged: nothing recorded", sdk.SessionStartEvent{Resumed: true},
			[]conversation.Message{conversation.SystemMessage("base", "append"), section(now)}, nil},
		{"resume, changed date: set in place", sdk.SessionStartEvent{Resumed: true},
			[]conversation.Message{section(yesterday), conversation.SystemMessage("after", "append")}, []sdktest.Edit{{Mode: "append", Key: "environment", Text: now}}},
		{"resume, changed branch", sdk.SessionStartEvent{Resumed: true},
			[]conversation.Message{section(otherBranch)}, []sdktest.Edit{{Mode: "append", Key: "environment", Text: now}}},
		{"a log from before sections: an unkeyed block is not the section", sdk.SessionStartEvent{Resumed: true},
			[]conversation.Message{conversation.SystemMessage(now, "append")}, []sdktest.Edit{{Mode: "append", Key: "environment", Text: now}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := sdktest.New(t, &ext{dir: dir, platform: "linux/amd64", now: func() time.Time { return day }}).AddMessages(tc.prior...)
			require.NoError(t, h.SessionStart(tc.ev))
			require.Equal(t, tc.edits, h.Edits())
			envBlocks := 0
			for _, b := range h.Prompt() {
				if strings.HasPrefix(b, header) {
					envBlocks++
				}
			}
			if tc.name != "a log from before sections: an unkeyed block is not the section" {
				require.Equal(t, 1, envBlocks, "one environment block, never two")
			}
			secs := h.Sections()
			require.Len(t, secs, 1)
			require.Equal(t, "environment", secs[0].Key)
			require.Equal(t, now, secs[0].Text)
		})
	}
}

func TestSessionStartHostError(t *testing.T) {
	t.Parallel()
	e := &ext{dir: t.TempDir(), platform: "linux/amd64", now: func() time.Time { return day }}
	h := sdktest.New(t, e).WithHostFuncs(sdktest.HostFuncs{
		SetSection: func(context.Context, string, string) error { return errors.New("boom") },
	})
	require.ErrorContains(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true}), "env: boom")
	require.Empty(t, h.Edits())
}
