// Command env tells the model where it runs: the working directory, the
// platform, whether that directory is in a git repository (and on which
// branch) and today's date, as one system block starting "Environment:".
//
// The block is one section of the prompt, set at every session start:
// panto records it only when it changed (another day, another branch),
// in place, so an unchanged environment records nothing and keeps the
// provider's prompt cache.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/panto-dev/panto/sdk"
)

// gitTimeout bounds each git command.
const gitTimeout = 2 * time.Second

// header starts every block this extension writes.
const header = "Environment:"

type ext struct {
	sdk.Base
	dir      string
	platform string
	now      func() time.Time
}

var (
	_ sdk.SessionStarter = (*ext)(nil)
	_ sdk.Describer      = (*ext)(nil)
)

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "env", Version: "1.0.0", Description: "working directory, platform, git and date in the system prompt"}
}

// sectionKey is the env extension's one section.
const sectionKey = "environment"

// SessionStart sets the environment section. panto records nothing when
// it holds exactly this already (an unchanged resume keeps the provider's
// prompt cache), and updates it in place when something changed (another
// day, another branch): the prompt never holds two.
func (e *ext) SessionStart(ctx context.Context, h sdk.Host, _ sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	block := buildBlock(e.dir, e.platform, gitInfo(ctx, e.dir), e.now())
	// The block is data (a path, a branch name), never a template.
	if err := h.SetSection(ctx, sectionKey, sdk.Literal(block)); err != nil {
		return sdk.SessionStartResponse{}, fmt.Errorf("env: %w", err)
	}
	return sdk.SessionStartResponse{}, nil
}

// git is what the block says about git.
type git struct {
	repo   bool
	branch string // empty when detached or unknown
}

// gitInfo asks git whether dir is inside a work tree and which branch is
// checked out. No git binary, not a repository, or a timeout: not a repo.
func gitInfo(ctx context.Context, dir string) git {
	run := func(args ...string) (string, bool) {
		ctx, cancel := context.WithTimeout(ctx, gitTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	if out, ok := run("rev-parse", "--is-inside-work-tree"); !ok || out != "true" {
		return git{}
	}
	branch, _ := run("branch", "--show-current")
	return git{repo: true, branch: branch}
}

// buildBlock is the text of the environment block.
func buildBlock(dir, platform string, g git, now time.Time) string {
	repo := "no"
	switch {
	case g.repo && g.branch != "":
		repo = fmt.Sprintf("yes (branch %s)", g.branch)
	case g.repo:
		repo = "yes (detached HEAD)"
	}
	return fmt.Sprintf("%s\n- Working directory: %s\n- Platform: %s\n- Git repository: %s\n- Date: %s",
		header, dir, platform, repo, now.Format(time.DateOnly))
}

func main() {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "env: cannot determine the working directory:", err)
		os.Exit(1)
	}
	if err := sdk.Serve(&ext{dir: dir, platform: runtime.GOOS + "/" + runtime.GOARCH, now: time.Now}); err != nil {
		log.Fatal(err)
	}
}
