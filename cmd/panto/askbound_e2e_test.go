package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
)

// Issue 15 item 9 (questions are bounded) and item 10 (extension
// names), at the host's side, with the real panto and the askbound test
// extension (cmd/panto/testdata/askbound), which misuses the user calls.

// askBoundArgs load askbound (or the file at path, when given) on the
// echo provider.
func askBoundArgs(path string, extra ...string) []string {
	if path == "" {
		path = filepath.Join(pluginDir, "askbound")
	}
	return append([]string{"--provider", "echo", "--extension", path}, extra...)
}

// askBoundAsked starts every question of askbound in the line loop.
const askBoundAsked = "? askbound asks: "

// askBoundEnd is what askbound's session_end recorded in the session
// log.
func askBoundEnd(t *testing.T, h *harness) (errText string, closing bool) {
	t.Helper()
	files := h.sessionFiles()
	require.Len(t, files, 1)
	for _, e := range entriesOfType(t, files[0], "extension_data") {
		if e["extension"] != "askbound" {
			continue
		}
		if end, ok := e["data"].(map[string]any)["session_end"].(map[string]any); ok {
			return end["error"].(string), end["closing"].(bool)
		}
	}
	t.Fatal("askbound recorded nothing in session_end")
	return "", false
}

// 1,000 Confirms at once: the user is asked a handful, one at a time, and
// the rest fail at once with an error the extension tells apart.
func TestAskBoundFloodAsksAFew(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.lineTermStart(append([]string{"--plain", "--no-session"}, askBoundArgs("")...)...)
	p.waitFor(t, "> ")
	p.typeIn(t, `tool:askbound {"what":"flood"}`+"\r")
	asked := 0
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(p.out.String(), "answered="); {
		require.True(t, time.Now().Before(deadline), "the flood never ended:\n%s", p.out.String())
		if n := strings.Count(p.out.String(), askBoundAsked); n > asked {
			asked = n
			require.LessOrEqual(t, asked, 5, "the user is asked a handful, not a thousand")
			time.Sleep(2 * lineloop.Grace)
			p.typeIn(t, "no\r")
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.waitCount(t, "> ", 2)
	out := p.out.String()
	var answered, tooMany, other int
	i := strings.Index(out, "answered=")
	_, err := fmt.Sscanf(out[i:], "answered=%d too_many=%d other=%d", &answered, &tooMany, &other)
	require.NoError(t, err, out[i:])
	require.Equal(t, 1000, answered+tooMany+other)
	require.GreaterOrEqual(t, tooMany, 990, "refused at once with sdk.ErrTooManyQuestions")
	require.LessOrEqual(t, answered, 5)
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), out)
}

// A hook that hangs while its extension keeps a question on the screen
// is disabled in bounded time (the hook deadline stops for a few
// questions only), and the turn goes on without it.
func TestAskBoundHungHookIsDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "config.toml"), "hook_timeout = \"300ms\"\n")
	p := h.lineTermStart(append([]string{"--plain", "--no-session"}, askBoundArgs("")...)...)
	p.waitFor(t, "> ")
	p.typeIn(t, "askbound:hang\r")
	p.waitFor(t, askBoundAsked)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.out.String(), "extension askbound disabled for this session: it did not answer within the hook deadline") {
		require.True(t, time.Now().Before(deadline), "the hook was never disabled:\n%s", p.out.String())
		time.Sleep(20 * time.Millisecond)
	}
	p.waitFor(t, `echo: you said "askbound:hang"`)
	p.waitCount(t, "> ", 2)
	p.typeIn(t, "\x04")
	require.Equal(t, 0, p.wait(t), p.out.String())
}

// A question asked in session_end never waits: panto is closing, and the
// extension learns so at once (sdk.ErrClosing) — in the line loop, in
// print mode and in --mode json alike.
func TestAskBoundSessionEndNeverWaits(t *testing.T) {
	t.Parallel()
	t.Run("line loop", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		p := h.lineTermStart(append([]string{"--plain"}, askBoundArgs("")...)...)
		p.waitFor(t, "> ")
		p.typeIn(t, "hi\r")
		p.waitCount(t, "> ", 2)
		p.typeIn(t, "/quit\r")
		require.Equal(t, 0, p.wait(t), p.out.String())
		require.NotContains(t, p.out.String(), "Save your work?", "no question on the way out")
		errText, closing := askBoundEnd(t, h)
		require.True(t, closing, errText)
		require.Contains(t, errText, "the session is closing")
	})
	for _, mode := range [][]string{{"-p", "hi"}, {"--mode", "json", "-p", "hi"}} {
		t.Run(strings.Join(mode, " "), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			r := h.run("", askBoundArgs("", mode...)...)
			require.Equal(t, 0, r.code, r.stderr)
			errText, closing := askBoundEnd(t, h)
			require.True(t, closing, errText)
		})
	}
}

// A flood of notices from one extension: a burst is shown, then panto
// says how many it dropped.
func TestAskBoundNotifyFloodIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const sent = 5000
	r := h.run("", askBoundArgs("", "--mode", "json", "--no-session", "-p", `tool:askbound {"what":"notify","n":`+itoa(sent)+`}`)...)
	require.Equal(t, 0, r.code, r.stderr)
	shown, dropped := 0, 0
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["type"] != "notice" {
			continue
		}
		text, _ := m["text"].(string)
		switch {
		case m["by"] == "askbound":
			shown++
		case strings.Contains(text, "notices from askbound dropped"):
			var n int
			_, err := fmt.Sscanf(text, "%d notices", &n)
			require.NoError(t, err, text)
			dropped += n
		}
	}
	require.Contains(t, r.stdout, "sent 5000 notices")
	require.Less(t, shown, sent/10, "a burst and a few a second, not all %d", sent)
	require.Equal(t, sent, shown+dropped, "each shown, or counted as dropped")
}

// An extension that names itself panto, or gives a name with a newline
// in it, does not start: the error names its file, and no line of its
// can pose as panto's.
func TestAskBoundNamesFollowTheToolNameRule(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"panto", "PANTO", "askbound\npanto: all clear"} {
		t.Run(strings.ReplaceAll(name, "\n", `\n`), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			link := filepath.Join(h.root, name)
			require.NoError(t, os.Symlink(filepath.Join(pluginDir, "askbound"), link))
			r := h.run("", askBoundArgs(link, "--no-session", "-p", `tool:askbound {"what":"notify","n":1}`)...)
			require.Equal(t, 0, r.code, r.stderr)
			shown := link
			if strings.Contains(link, "\n") {
				shown = strconv.Quote(link) // a file name cannot break the line
			}
			require.Contains(t, r.stderr, "panto: extension did not start: "+shown+" (--extension): init: its name ", "the error names the file")
			require.NotContains(t, r.stdout+r.stderr, "\npanto: all clear")
			require.NotContains(t, r.stdout+r.stderr, "notice 0", "it never ran")
		})
	}
}
