package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Items 3 and 9 of issue 15 in the full-screen UI, with the real guard
// (examples/plugins/guard) and tools in tmux: keys typed for the next
// message as the guard's question comes up never answer it; questions
// cannot keep the user from leaving.

// Item 3: a y typed into the editor just before the guard's dialog
// popped up, or right after it appeared, answered it, and rm ran. Now
// those keys stay in the editor and the command waits, and so do keys
// typed on after the dialog's grace (issue 15's second adversary pass);
// a y typed after a pause in typing runs it.
func TestUIGuardQuestionIgnoresKeysTypedAsItAppears(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	victim := h.victim()
	u := h.tmuxPanto(100, 30, nil, guardArgs(h)...)
	u.ready("echo/echo")
	u.typ(rmVictim)
	u.keys("Enter")
	// Typing the next message: y's until the dialog shows, one more
	// right after.
	deadline := time.Now().Add(15 * time.Second)
	typed := 0
	for !strings.Contains(u.screen(), "guard asks: Run this command?") {
		require.True(t, time.Now().Before(deadline), "no dialog:\n%s", u.screen())
		u.typ("y")
		typed++
	}
	u.typ("y")
	typed++
	// As many as were typed: the dialog may be up before the first
	// (a fast start), never one fewer.
	s := u.wait("❯ " + strings.Repeat("y", typed))
	require.Contains(t, s, "[y] yes   [n] no", "the dialog is still up")
	require.DirExists(t, victim, "no y typed as it appeared answered it")

	// Typing on, after the grace: still the editor's (the adversary
	// pass's typist answered it with the y of "tidy").
	for range 5 {
		time.Sleep(150 * time.Millisecond)
		u.typ("y")
	}
	u.wait("❯ " + strings.Repeat("y", typed+5))
	require.DirExists(t, victim, "a y typed on answered it")

	time.Sleep(1200 * time.Millisecond) // the user stops typing and reads it
	u.wait("your message holds text: Tab answers this")
	u.keys("Tab")
	u.typ("y")
	u.wait("yes? Enter runs it")
	time.Sleep(150 * time.Millisecond) // a person's y and Enter are two presses, not one burst
	u.keys("Enter")
	u.wait("✓ bash rm -rf victim")
	require.NoDirExists(t, victim, "a y after a pause in typing answers")
	require.Equal(t, 0, u.quit())
}

// Item 9: a thousand questions at once, or one asked again as soon as
// it is dismissed, took every Ctrl-C. Ctrl-C twice leaves, at once, and
// the questions are dismissed.
func TestUIQuestionsCannotTrapTheUser(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"/many", "/nag"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			u := h.tmuxPanto(100, 30, nil, "--provider", "echo", "--extension", filepath.Join(pluginDir, "uihostile"))
			u.ready("echo/echo")
			u.typ(cmd)
			u.keys("Enter")
			u.wait("uihostile asks: ")
			start := time.Now()
			u.keys("C-c")
			u.wait("uihostile asks: ") // asked again, or the next of the thousand
			u.keys("C-c")
			require.Equal(t, 0, u.exitCode())
			require.Less(t, time.Since(start), 10*time.Second, "quitting waited on the questions")
		})
	}
}

// An extension that asks again as soon as its question is dismissed,
// from a goroutine of its own (no hook's bound holds it), put a new
// dialog up after every Esc for as long as the session ran (the sixth
// adversary pass's B4: "question 31" after 30 Esc). Three Esc in a row
// and panto shows its questions no more this session, and says so once:
// each fails at once as dismissed (a confirm is a no).
func TestUIDismissingThreeQuestionsInARowMutesTheExtension(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	u := h.tmuxPanto(200, 30, map[string]string{"PANTO_UIHOSTILE": "nagbg"}, "--provider", "echo", "--extension", filepath.Join(pluginDir, "uihostile"))
	for i := 1; i <= 3; i++ {
		u.wait(fmt.Sprintf("question %d of 50", i))
		u.keys("Escape")
	}
	u.wait("no more questions from uihostile in this session: you dismissed 3 of them in a row")
	s := u.wait("nagbg: 50 asked, 0 yes")
	require.NotContains(t, s, "uihostile asks:", "no dialog after the third Esc")
	require.Equal(t, 1, strings.Count(s, "no more questions from uihostile"), "said once")
	require.Equal(t, 0, u.quit())
}
