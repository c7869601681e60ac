package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sessionlog"
)

// The full-screen UI end to end: the real panto binary in a tmux pane
// (keys sent with send-keys, pastes bracketed with paste-buffer -p, the
// screen read with capture-pane), with a fresh HOME, the echo provider
// or an httptest fake one. .ci/run installs tmux; without it these tests
// skip.

// tmuxUI is panto running in a detached tmux session of its own server.
type tmuxUI struct {
	t    *testing.T
	h    *harness
	sock string
	dir  string
}

// tmuxPanto starts panto full screen in a cols×rows tmux pane. When it
// exits the pane stays, showing "EXIT=N".
// altScreen makes the UI draw on the alternate screen (config screen =
// "alt").
func (h *harness) altScreen() {
	h.write(filepath.Join(h.userDir(), "config.toml"), "screen = \"alt\"\n")
}

func (h *harness) tmuxPanto(cols, rows int, env map[string]string, args ...string) *tmuxUI {
	t := h.t.(*testing.T)
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the full-screen end-to-end tests run panto in tmux (.ci/run installs it)")
	}
	dir, err := os.MkdirTemp("", "pt") // a short path: a socket path is at most ~100 bytes
	require.NoError(t, err)
	u := &tmuxUI{t: t, h: h, sock: filepath.Join(dir, "s"), dir: dir}
	var script strings.Builder
	fmt.Fprintf(&script, "#!/bin/sh\ncd %q || exit 9\nexec 2>%q\nenv -i", h.project, filepath.Join(dir, "stderr"))
	vars := map[string]string{"TERM": "screen-256color"}
	for k, v := range h.env {
		vars[k] = v
	}
	for k, v := range env {
		vars[k] = v
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&script, " %s=%q", k, vars[k])
	}
	fmt.Fprintf(&script, " %q", pantoBin)
	for _, a := range args {
		fmt.Fprintf(&script, " %q", a)
	}
	script.WriteString("\necho \"EXIT=$?\"\nsleep 120\n")
	sh := filepath.Join(dir, "run.sh")
	require.NoError(t, os.WriteFile(sh, []byte(script.String()), 0o755))
	u.tmux("-f", "/dev/null", "new-session", "-d", "-s", "p", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), sh)
	t.Cleanup(func() {
		exec.Command("tmux", "-S", u.sock, "kill-server").Run()
		os.RemoveAll(dir)
	})
	return u
}

func (u *tmuxUI) tmux(args ...string) string {
	u.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", u.sock}, args...)...).CombinedOutput()
	require.NoError(u.t, err, "tmux %v: %s", args, out)
	return string(out)
}

// keys sends tmux key names (Enter, Up, C-c, Escape, ...).
func (u *tmuxUI) keys(keys ...string) {
	u.t.Helper()
	u.tmux(append([]string{"send-keys", "-t", "p"}, keys...)...)
}

// typ sends text as typed, character by character.
func (u *tmuxUI) typ(s string) {
	u.t.Helper()
	u.tmux("send-keys", "-t", "p", "-l", s)
}

// paste pastes text as a terminal does: bracketed.
func (u *tmuxUI) paste(text string) {
	u.t.Helper()
	f := filepath.Join(u.dir, "paste")
	require.NoError(u.t, os.WriteFile(f, []byte(text), 0o600))
	u.tmux("load-buffer", "-b", "x", f)
	u.tmux("paste-buffer", "-p", "-b", "x", "-t", "p")
}

// screen is what the pane shows.
func (u *tmuxUI) screen() string { return u.tmux("capture-pane", "-p", "-t", "p") }

// screenEscapes is what the pane shows, with its styles as escapes.
func (u *tmuxUI) screenEscapes() string { return u.tmux("capture-pane", "-p", "-e", "-t", "p") }

// wait waits until the screen holds want, and returns the screen.
func (u *tmuxUI) wait(want string) string {
	u.t.Helper()
	return u.waitUntil(func(s string) bool { return strings.Contains(s, want) }, want)
}

func (u *tmuxUI) waitUntil(ok func(string) bool, what string) string {
	u.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := u.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			stderr, _ := os.ReadFile(filepath.Join(u.dir, "stderr"))
			u.t.Fatalf("the screen never showed %s:\n%s\nstderr: %s", what, s, stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ready waits for the session to be open (the status line names the
// model).
func (u *tmuxUI) ready(model string) {
	u.t.Helper()
	u.wait(model)
	u.waitUntil(func(s string) bool { return !strings.Contains(s, "starting extensions") }, "the extensions started")
}

// quit quits with Ctrl-D on an empty editor and returns the exit status.
func (u *tmuxUI) quit() int {
	u.t.Helper()
	u.keys("C-u")
	u.keys("C-d")
	return u.exitCode()
}

func (u *tmuxUI) exitCode() int {
	u.t.Helper()
	s := u.wait("EXIT=")
	m := regexp.MustCompile(`EXIT=(\d+)`).FindStringSubmatch(s)
	var n int
	fmt.Sscan(m[1], &n)
	return n
}

// userMessages are the texts of the user messages of the project's one
// session log.
func (h *harness) userMessages(t *testing.T) []string {
	t.Helper()
	files := h.sessionFiles()
	require.Len(t, files, 1)
	log, err := sessionlog.Read(files[0])
	require.NoError(t, err)
	var out []string
	for _, m := range log.Messages() {
		if m.Role == "user" {
			out = append(out, m.Content[len(m.Content)-1].Text)
		}
	}
	return out
}

// A pasted block — tabs, indentation, a 6,000-character line — is one
// message, recorded byte for byte (newcomer defects: four requests, lost
// indentation, a cut at 4,095).
func TestUIPasteStaysOneMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo")
	u.ready("echo/echo")
	fn := "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}"
	long := strings.Repeat("0123456789", 620) + "END"
	u.paste(fn + "\n" + long)
	u.wait("[paste #1 +6 lines]")
	u.typ(" and more")
	u.keys("Enter")
	u.wait("END and more")
	u.wait("system prompt: 1 block(s)")
	require.Equal(t, 0, u.quit())
	require.Equal(t, []string{fn + "\n" + long + " and more"}, h.userMessages(t))
}

// Up recalls the last message, across runs; Up and Ctrl-L are never sent
// as text (newcomer defect: "\x1b[A" and "\x0c" reached the model).
func TestUIHistoryUpAndCtrlL(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo")
	u.ready("echo/echo")
	u.keys("Up") // nothing to recall yet
	u.keys("C-l")
	u.typ("first message")
	u.keys("Enter")
	u.wait(`you said "first message"`)
	require.Equal(t, 0, u.quit())

	u = h.tmuxPanto(100, 30, nil, "--provider", "echo", "-c")
	u.ready("echo/echo")
	u.keys("Up")
	u.wait("❯ first message")
	u.keys("Enter")
	u.wait("resumed")
	u.waitUntil(func(s string) bool { return strings.Count(s, `you said "first message"`) == 2 }, "the second reply")
	require.Equal(t, 0, u.quit())
	msgs := h.userMessages(t)
	require.Equal(t, []string{"first message", "first message"}, msgs)
	for _, m := range msgs {
		require.NotContains(t, m, "\x1b")
		require.NotContains(t, m, "\x0c")
	}
}

// Esc stops a reply mid-stream: the session goes on, and the log holds
// the message but nothing of the half reply.
func TestUIEscMidStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv, started := slowProvider(t, 5000, 20*time.Millisecond, func(i int) string { return fmt.Sprintf("word%d ", i) })
	env := map[string]string{"ANTHROPIC_API_KEY": "k"}
	u := h.tmuxPanto(100, 30, env, "--provider", "anthropic", "--base-url", srv.URL)
	u.ready("anthropic/")
	u.typ("tell me a long story")
	u.keys("Enter")
	<-started
	s := u.wait("word20 ")
	require.Regexp(t, `[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working`, s, "the spinner runs (newcomer defect: none)")
	u.keys("Escape")
	u.wait("interrupted: nothing of this half reply was recorded")
	require.Equal(t, 0, u.quit())
	files := h.sessionFiles()
	require.Len(t, files, 1)
	log, err := sessionlog.Read(files[0])
	require.NoError(t, err)
	msgs := log.Messages()
	require.Equal(t, "user", string(msgs[len(msgs)-1].Role), "no half reply was recorded")
	// The log resumes.
	r := h.run("", "-p", "go on", "--provider", "echo", "-c")
	require.Equal(t, 0, r.code, r.stderr)
}

// A tool turn: the edit shows as a diff, the bash call its exit code.
func TestUIToolTurnWithDiff(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.project, "x.go"), "package x\n\nfunc f() int {\n\treturn 1\n}\n")
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
	u.ready("echo/echo")
	u.typ(`tool:edit {"path":"x.go","edits":[{"old_text":"return 1","new_text":"return 2"}]}`)
	u.keys("C-j")
	u.typ(`tool:bash {"command":"echo out; exit 3"}`)
	u.keys("Enter")
	// The reply can stream into the frame before the settled tool blocks
	// are printed above it (prints are ordered and may be held briefly),
	// so wait for both.
	s := u.waitUntil(func(s string) bool {
		return strings.Contains(s, "echo: 2 tool result(s)") && strings.Contains(s, "✓ edit x.go") && strings.Contains(s, "│ out")
	}, "the reply and both tool blocks")
	require.Regexp(t, `4 -\s+return 1`, s, "the file's line, numbered")
	require.Regexp(t, `4 \+\s+return 2`, s)
	require.Contains(t, s, "✗ bash echo out; exit 3 · exit 3")
	require.Contains(t, s, "│ out")
	data, err := os.ReadFile(filepath.Join(h.project, "x.go"))
	require.NoError(t, err)
	require.Contains(t, string(data), "return 2")
	require.Equal(t, 0, u.quit())
}

// The guard extension's confirm is a dialog: y runs the command, n
// blocks it.
func TestUIGuardConfirmDialog(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{"y", "n"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			victim := h.victim()
			u := h.tmuxPanto(100, 30, nil, guardArgs(h)...)
			u.ready("echo/echo")
			u.typ(rmVictim)
			u.keys("Enter")
			s := u.wait("guard asks: Run this command?")
			require.Contains(t, s, "rm -rf victim")
			require.Contains(t, s, "[y] yes   [n] no")
			// A key in the dialog's first 300 ms, or within a second of
			// the last key typed (the Enter), is not an answer.
			time.Sleep(1200 * time.Millisecond)
			u.typ(answer)
			if answer == "y" {
				u.wait("yes? Enter runs it")
				time.Sleep(150 * time.Millisecond) // a person's y and Enter are two presses, not one burst
				u.keys("Enter")
				u.wait("✓ bash rm -rf victim")
				require.NoDirExists(t, victim)
			} else {
				u.wait("guard: blocked: rm -rf victim")
				require.DirExists(t, victim)
			}
			u.wait("guard: ")
			require.Equal(t, 0, u.quit())
		})
	}
}

// -c redraws the conversation (newcomer defect: nothing was redrawn);
// Markdown is rendered, so a reply's "> quote" is not panto's prompt
// (newcomer defect); the status line counts tokens.
func TestUIResumeRedrawsAndRendersMarkdown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t, anthropicText("# Heading\n\n> a quoted line\n\n- a **bold** item\n"), anthropicText("again"))
	env := map[string]string{"ANTHROPIC_API_KEY": "k"}
	u := h.tmuxPanto(100, 30, env, "--provider", "anthropic", "--base-url", fake.srv.URL)
	u.ready("anthropic/")
	u.typ("remember the heading")
	u.keys("Enter")
	s := u.wait("│ a quoted line")
	require.NotContains(t, s, "> a quoted line")
	require.Contains(t, s, "• a bold item")
	u.wait("↑10 ↓5")   // tokens in and out
	u.wait("/200k 0%") // the context used, of the window
	require.Equal(t, 0, u.quit())

	u = h.tmuxPanto(100, 30, env, "--provider", "anthropic", "--base-url", fake.srv.URL, "-c")
	s = u.wait("resumed: ")
	require.Contains(t, s, "▌ remember the heading")
	require.Contains(t, s, "│ a quoted line")
	require.Contains(t, s, "Heading")
	require.Equal(t, 0, u.quit())
}

// Changes of the system prompt show where they happen, saying who made
// them: an extension's replace; on a resume after a prompt file changed,
// the re-seed and which file.
func TestUISystemPromptChangesInline(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "Prefer small diffs.")
	args := []string{"--provider", "echo", "--extension", filepath.Join(pluginDir, "sysprompt")}
	u := h.tmuxPanto(100, 30, nil, args...)
	s := u.wait("⚙ system prompt: project .panto/APPEND_SYSTEM.md")
	require.Contains(t, s, "⚙ system prompt: built-in default")
	u.ready("echo/echo")
	u.typ("/system-replace You are a pirate.")
	u.keys("Enter")
	u.wait("⚙ sysprompt replaced the system prompt")
	require.Equal(t, 0, u.quit())

	h.write(filepath.Join(h.projectDir(), "APPEND_SYSTEM.md"), "Prefer big diffs.")
	u = h.tmuxPanto(100, 30, nil, append(args, "-c")...)
	u.wait("⚙ re-seeded: .panto/APPEND_SYSTEM.md changed")
	// The history goes into the scrollback a moment after the frame.
	s = u.waitUntil(func(s string) bool { return strings.Contains(s, "⚙ sysprompt replaced the system prompt") }, "the history shows the earlier change")
	require.Contains(t, s, "⚙ re-seeded: .panto/APPEND_SYSTEM.md changed")
	require.Equal(t, 0, u.quit())
}

// NO_COLOR (any value, not only those colorprofile reads as true): no
// colour escapes at all, the attributes kept.
func TestUINoColor(t *testing.T) {
	t.Parallel()
	// A colour: 30-38, 40-48, 90-97, 100-107 (39 and 49, the default
	// colours, are what tmux writes to reset).
	colour := regexp.MustCompile(`\x1b\[(?:[0-9]*;)*(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])[;m]`)
	for _, v := range []string{"", "1", "yes"} {
		t.Run("NO_COLOR="+v, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			env := map[string]string{}
			if v != "" {
				env["NO_COLOR"] = v
			}
			u := h.tmuxPanto(100, 30, env, "--provider", "echo", "--extension", filepath.Join(pluginDir, "tools"))
			u.ready("echo/echo")
			u.typ(`tool:ls {}`)
			u.keys("Enter")
			u.wait("echo: 1 tool result(s)")
			s := u.screenEscapes()
			if v == "" {
				require.Regexp(t, colour, s, "colour without NO_COLOR")
			} else {
				require.NotRegexp(t, colour, s)
				require.Contains(t, s, "\x1b[1m", "bold stays")
			}
			require.Equal(t, 0, u.quit())
		})
	}
}

// At 60 columns everything fits; a resize redraws at the new size.
func TestUINarrowAndResize(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.altScreen() // the frame fills the screen
	u := h.tmuxPanto(60, 20, nil, "--provider", "echo")
	u.ready("echo/echo")
	u.typ("a message long enough to wrap at sixty columns, and then some more words")
	u.keys("Enter")
	s := u.wait("system prompt: 1 block(s)")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	require.Len(t, lines, 20)
	require.Contains(t, lines[19], "echo/echo", "the status line is the last row")
	require.True(t, strings.HasPrefix(lines[17], "──"), "the activity bar above the editor")
	u.tmux("resize-window", "-t", "p", "-x", "100", "-y", "30")
	s = u.waitUntil(func(s string) bool {
		l := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return len(l) == 30 && strings.Contains(l[29], "echo/echo")
	}, "the frame at 100×30")
	require.Contains(t, s, "a message long enough to wrap at sixty columns, and then some more words", "one line now")
	u.tmux("resize-window", "-t", "p", "-x", "60", "-y", "20")
	u.waitUntil(func(s string) bool {
		l := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return len(l) == 20 && strings.Contains(l[19], "echo/echo")
	}, "the frame at 60×20 again")
	require.Equal(t, 0, u.quit())
}

// Ctrl-D with half-typed text deletes, never sends (newcomer defect);
// Ctrl-C clears, twice on an empty editor quits.
func TestUICtrlDAndCtrlC(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo")
	u.ready("echo/echo")
	u.typ("half typed")
	u.keys("C-a", "C-d")
	u.wait("❯ alf typed")
	u.keys("C-c")
	u.waitUntil(func(s string) bool { return !strings.Contains(s, "alf typed") }, "the editor cleared")
	u.keys("C-c")
	u.wait("Ctrl-C again to quit")
	u.keys("C-c")
	require.Equal(t, 0, u.exitCode())
	require.Empty(t, h.userMessages(t), "nothing was sent")
}

// SIGTERM ends panto as it does in every mode: exit status 143, the
// terminal given back.
func TestUISigterm(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo")
	u.ready("echo/echo")
	pid := strings.TrimSpace(u.tmux("display-message", "-p", "-t", "p", "#{pane_pid}"))
	// The pane runs the script; panto is its child.
	out, err := exec.Command("pgrep", "-P", pid, "-f", "panto").Output()
	require.NoError(t, err, "find panto")
	require.NoError(t, exec.Command("kill", "-TERM", strings.Fields(string(out))[0]).Run())
	require.Equal(t, 143, u.exitCode())
	require.NotContains(t, u.screen(), "❯", "the alternate screen is gone")
}

// /tree: the side pane shows the prompt as of the entry under the
// cursor (not today's); Enter continues from there, under that prompt;
// l labels an entry, f forks, and /resume goes back to the session left.
func TestUITreeJumpAndThePromptPane(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.altScreen() // what the screen shows after the jump: the new path only
	u := h.tmuxPanto(110, 32, nil, "--provider", "echo", "--extension", filepath.Join(pluginDir, "sysprompt"))
	u.ready("echo/echo")
	u.typ("before pirate")
	u.keys("Enter")
	u.wait(`you said "before pirate"`)
	u.typ("/system-replace You are a pirate.")
	u.keys("Enter")
	u.wait("⚙ sysprompt replaced the system prompt")
	u.typ("after pirate")
	u.keys("Enter")
	u.wait(`you said "after pirate"`)

	u.typ("/tree")
	u.keys("Enter")
	u.wait("/tree · ")
	s := u.wait("You are a pirate.") // the prompt pane reads the log in the background
	require.Contains(t, s, "● echo: you said \"after pirate\"", "the cursor starts where the conversation is")
	require.Contains(t, s, "· as now")
	// Up to the reply before the replace: the pane shows the prompt as
	// it was there.
	u.keys("Up", "Up", "Up")
	s = u.wait("differs from now")
	require.Contains(t, s, "You are panto, a coding agent")
	require.NotContains(t, s, "You are a pirate.")

	// l labels it.
	u.typ("l")
	u.wait("label: ")
	u.typ("the old prompt")
	u.keys("Enter")
	u.wait("[the old prompt] echo: you said")

	// Enter continues from it: the conversation after it is gone from the
	// screen, and the next reply is made under the prompt of that point.
	u.keys("Enter")
	s = u.wait("moved to ")
	require.NotContains(t, s, "after pirate")
	u.typ("on the old branch")
	u.keys("Enter")
	u.wait(`you said "on the old branch"`)
	u.waitUntil(func(s string) bool { return strings.Contains(s, "You are panto, a coding agent") }, "the reply under the old prompt")
	require.NotContains(t, u.screen(), "You are a pirate")

	// f forks the path there into a new session and switches to it.
	u.typ("/tree")
	u.keys("Enter")
	u.wait("/tree · ")
	u.typ("f")
	u.wait("forked into a new session")
	require.Len(t, h.sessionFiles(), 2)

	// /resume lists both; Enter on the other switches back.
	u.typ("/resume")
	u.keys("Enter")
	s = u.wait("Sessions in ")
	require.Contains(t, s, "* ", "this session is marked")
	u.keys("Down", "Enter")
	u.wait("resumed session ")
	u.wait(`you said "on the old branch"`)
	require.Equal(t, 0, u.quit())

	// What the log holds: the label, the move, both branches.
	var src string
	for _, f := range h.sessionFiles() {
		if hd, err := sessionlog.ReadHeader(f); err == nil && hd.ParentSession == "" {
			src = f
		}
	}
	log, err := sessionlog.Read(src)
	require.NoError(t, err)
	require.Contains(t, slices.Collect(maps.Values(log.Tree().Labels())), "the old prompt")
	require.Len(t, log.Tree().Branches(), 2)
}

// A session deleted after /resume listed it is not recreated: panto says
// it is gone and stays in the session it had.
func TestUIResumeOfAVanishedLog(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "the old one", "--provider", "echo")
	old := h.sessionFiles()[0]
	time.Sleep(1100 * time.Millisecond) // a newer session (names sort by second)
	h.ok("-p", "the new one", "--provider", "echo")
	u := h.tmuxPanto(100, 30, nil, "--provider", "echo", "-c")
	u.wait("the new one")
	u.ready("echo/echo")
	u.typ("/resume")
	u.keys("Enter")
	u.wait("Sessions in ")
	require.NoError(t, os.Remove(old))
	u.keys("Down", "Enter")
	u.wait("no longer exists")
	require.NoFileExists(t, old)
	u.typ("still here")
	u.keys("Enter")
	u.wait(`you said "still here"`)
	require.Equal(t, 0, u.quit())
	require.Len(t, h.sessionFiles(), 1)
}
