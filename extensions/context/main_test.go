package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testio"
	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

// added returns the texts of the system blocks the extension added.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// project is a scratch repository: .git at repo/, instruction files at
// the root, in a/ and a/b/ (the working directory), a CLAUDE.md beside
// a/AGENTS.md, an empty one, a sibling whose AGENTS.md must stay out,
// and a user layer with its own AGENTS.md. Above the repository there is
// an AGENTS.md that must stay out too.
func project(t *testing.T) (user, repo, cwd string) {
	t.Helper()
	top := t.TempDir()
	writeFiles(t, top, map[string]string{
		"AGENTS.md":                 "outside the repository\n",
		"config/panto/AGENTS.md":    "user rules\n",
		"repo/.git/HEAD":            "ref: refs/heads/main\n",
		"repo/AGENTS.md":            "root rules\n\n",
		"repo/a/AGENTS.md":          "a rules\n",
		"repo/a/CLAUDE.md":          "a claude rules\n",
		"repo/a/b/AGENTS.md":        "b rules\n",
		"repo/a/b/CLAUDE.md":        " \n\n",
		"repo/sibling/AGENTS.md":    "sibling rules\n",
		"repo/a/sibling/AGENTS.md":  "a sibling rules\n",
		"repo/a/b/c/AGENTS.md":      "below cwd\n",
		"config/panto/CLAUDE.md.bk": "not an instruction file\n",
	})
	return filepath.Join(top, "config/panto"), filepath.Join(top, "repo"), filepath.Join(top, "repo/a/b")
}

func blockOf(path, text string) string { return "Instructions from " + path + ":\n\n" + text }

func TestCollect(t *testing.T) {
	t.Parallel()
	user, repo, cwd := project(t)
	want := []string{
		blockOf(filepath.Join(user, "AGENTS.md"), "user rules"),
		blockOf(filepath.Join(repo, "AGENTS.md"), "root rules"),
		blockOf(filepath.Join(repo, "a/AGENTS.md"), "a rules"),
		blockOf(filepath.Join(repo, "a/CLAUDE.md"), "a claude rules"),
		blockOf(filepath.Join(repo, "a/b/AGENTS.md"), "b rules"),
	}
	files, problems := collect(user, cwd)
	require.Empty(t, problems)
	var got []string
	for _, f := range files {
		got = append(got, f.block())
	}
	require.Equal(t, want, got)

	// No user layer; the working directory is the root.
	files, _ = collect("", repo)
	require.Len(t, files, 1)
	require.Equal(t, filepath.Join(repo, "AGENTS.md"), files[0].path)

	// No repository: only the working directory counts, not its parents.
	plain := t.TempDir()
	writeFiles(t, plain, map[string]string{"AGENTS.md": "parent\n", "x/AGENTS.md": "x\n"})
	files, _ = collect(filepath.Join(plain, "nowhere"), filepath.Join(plain, "x"))
	require.Len(t, files, 1)
	require.Equal(t, blockOf(filepath.Join(plain, "x/AGENTS.md"), "x"), files[0].block())
}

func TestCollectCapAndProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 1000) // 100,000 bytes
	writeFiles(t, dir, map[string]string{".git/HEAD": "x", "AGENTS.md": big})
	require.NoError(t, os.Mkdir(filepath.Join(dir, "CLAUDE.md"), 0o755)) // not a file
	files, problems := collect("", dir)
	require.Len(t, problems, 1)
	require.ErrorContains(t, problems[0], "CLAUDE.md: not a regular file")
	require.Len(t, files, 1)
	b := files[0].block()
	require.True(t, strings.HasSuffix(b, "x\n\n[Cut at 64 KB: the file is 100000 bytes; read it for the rest.]"), b[len(b)-100:])
	require.LessOrEqual(t, len(files[0].text), maxFileBytes)
	require.Equal(t, 655, strings.Count(files[0].text, "\n")+1) // whole lines only
}

func TestCut(t *testing.T) {
	t.Parallel()
	require.Equal(t, "ab\n", string(cut([]byte("ab\ncdef"), 4)))
	require.Equal(t, "a\nbcd", string(cut([]byte("a\nbcdefgh"), 5))) // the newline is too early
	require.Equal(t, "abcé", string(cut([]byte("abcéé"), 6)))        // é is 2 bytes: 3+2 = 5
	require.Equal(t, "abc", string(cut([]byte("abcéé"), 4)))         // inside the first é
	require.Equal(t, "abcde", string(cut([]byte("abcdefg"), 5)))     // no newline
}

func TestUserLayer(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	require.Equal(t, "/x/panto", userLayer(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"})))
	require.Equal(t, "/h/.config/panto", userLayer(env(map[string]string{"HOME": "/h"})))
	require.Empty(t, userLayer(env(nil)))
}

func TestSessionStart(t *testing.T) {
	t.Parallel()
	user, _, cwd := project(t)
	all, _ := collect(user, cwd)
	sections := func(files []instruction) []conversation.Message {
		var out []conversation.Message
		for _, f := range files {
			out = append(out, conversation.KeyedSystemMessage("context:"+f.key(), f.block()))
		}
		return out
	}
	set := func(files ...instruction) []sdktest.Edit {
		var out []sdktest.Edit
		for _, f := range files {
			out = append(out, sdktest.Edit{Mode: "append", Key: f.key(), Text: f.block()})
		}
		return out
	}
	changed := all[1]
	changed.text = "old root rules"
	gone := instruction{path: filepath.Join(cwd, "gone", "AGENTS.md"), text: "removed since"}
	for _, tc := range []struct {
		name  string
		prior []conversation.Message
		want  []sdktest.Edit
	}{
		{"fresh: a section per file", nil, set(all...)},
		{"resume, unchanged: nothing recorded", sections(all), nil},
		{"resume, one new", sections(all[:4]), set(all[4:]...)},
		{"resume, one changed: set in place", sections(append([]instruction{all[0], changed}, all[2:]...)), set(all[1])},
		{"resume, one gone: removed", sections(append(append([]instruction{}, all...), gone)),
			[]sdktest.Edit{{Mode: "append", Key: gone.key(), Text: ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := sdktest.New(t, &ext{dir: cwd, userDir: user}).WithSystem("base").AddMessages(tc.prior...)
			require.NoError(t, h.SessionStart(sdk.SessionStartEvent{Resumed: tc.prior != nil}))
			require.Equal(t, tc.want, h.Edits())
			var texts []string
			for _, sec := range h.Sections() {
				texts = append(texts, sec.Text)
			}
			var want []string
			for _, f := range all {
				want = append(want, f.block())
			}
			require.ElementsMatch(t, want, texts, "after it, one section per file, and none for a file that is gone")
		})
	}

	h := sdktest.New(t, &ext{dir: cwd, userDir: user}).WithHostFuncs(sdktest.HostFuncs{
		Sections: func(context.Context) ([]sdk.Section, error) { return nil, errors.New("boom") },
	})
	require.ErrorContains(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true}), "context: boom")
	require.Empty(t, h.Edits())
}

// A FIFO named AGENTS.md is skipped at once (opening it would block), and
// a file that is not UTF-8 is recorded as panto records it, so an
// unchanged file is not added again on every resume.
func TestSpecialInstructionFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".git/HEAD": "x", "CLAUDE.md": "caf\xe9 rules\n"})
	testio.Mkfifo(t, filepath.Join(dir, "AGENTS.md"), 0o644)
	done := make(chan struct{})
	var files []instruction
	var problems []error
	go func() { files, problems = collect("", dir); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("collect hangs on a FIFO")
	}
	require.Len(t, problems, 1)
	require.ErrorContains(t, problems[0], "AGENTS.md: not a regular file")
	require.Len(t, files, 1)
	require.Equal(t, "caf\uFFFD rules", files[0].text)

	h := sdktest.New(t, &ext{dir: dir}).WithSystem("base").AddMessages(conversation.KeyedSystemMessage("context:"+files[0].key(), files[0].block()))
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{Resumed: true}))
	require.Empty(t, h.Edits(), "an unchanged Latin-1 file is not recorded again")
}

// A cloned repository's instruction file that is a symlink leading out
// of the project (~/.aws/credentials, /proc/self/environ) is skipped,
// with a notice naming it and its target; a link within the project is
// read, and so is a link in the user's own layer, wherever it leads.
func TestInstructionLinksStayInTheProject(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	secret := filepath.Join(top, "home", ".aws", "credentials")
	writeFiles(t, top, map[string]string{
		"home/.aws/credentials":    "aws_secret_access_key=SECRET\n",
		"home/src/repo/.git/HEAD":  "x",
		"home/src/repo/docs/ai.md": "in-repo rules\n",
		"home/my-rules.md":         "the user's own rules\n",
	})
	repo := filepath.Join(top, "home", "src", "repo")
	user := filepath.Join(top, "home", "config", "panto")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(user, 0o755))
	links := map[string]string{
		filepath.Join(repo, "AGENTS.md"):     "../../.aws/credentials",
		filepath.Join(repo, "CLAUDE.md"):     "docs/ai.md",
		filepath.Join(repo, "sub/CLAUDE.md"): "../../../.aws/credentials",
		filepath.Join(user, "AGENTS.md"):     "../../my-rules.md",
	}
	if runtime.GOOS == "linux" {
		links[filepath.Join(repo, "sub/AGENTS.md")] = "/proc/self/environ"
	}
	for link, to := range links {
		if err := os.Symlink(to, link); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	cwd := filepath.Join(repo, "sub")
	files, problems := collect(user, cwd)
	var got []string
	for _, f := range files {
		got = append(got, f.block())
	}
	require.Equal(t, []string{
		blockOf(filepath.Join(user, "AGENTS.md"), "the user's own rules"),
		blockOf(filepath.Join(repo, "CLAUDE.md"), "in-repo rules"),
	}, got)
	var outside []string
	for _, err := range problems {
		var out *outsideError
		require.ErrorAs(t, err, &out)
		outside = append(outside, err.Error())
	}
	realRepo, err := filepath.EvalSymlinks(repo)
	require.NoError(t, err)
	realSecret, err := filepath.EvalSymlinks(secret)
	require.NoError(t, err)
	require.Len(t, outside, len(links)-2)
	require.Contains(t, outside, "skipped "+filepath.Join(repo, "AGENTS.md")+": it leads to "+realSecret+", outside the project "+realRepo+"; an instruction file the project holds must stay in it")
	if runtime.GOOS == "linux" {
		require.Contains(t, outside[1], filepath.Join(repo, "sub/AGENTS.md")+": it leads to /proc/")
	}

	h := sdktest.New(t, &ext{dir: cwd, userDir: user}).WithSystem("base")
	require.NoError(t, h.SessionStart(sdk.SessionStartEvent{}))
	var notices []string
	for _, n := range h.Notices() {
		require.Equal(t, "warning", n.Level)
		notices = append(notices, n.Text)
	}
	require.Equal(t, outside, notices, "the user is told of each file skipped")
	for _, sec := range h.Sections() {
		require.NotContains(t, sec.Text, "SECRET")
	}
}
