package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
	"github.com/panto-dev/panto/sdk/sdktest"
)

func bash(cmd string) sdk.ToolCall {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return sdk.ToolCall{ID: "c1", Name: "bash", Input: in}
}

func newGuard(t *testing.T, spec string) *ext {
	t.Helper()
	pats, err := compile(spec, "")
	require.NoError(t, err)
	return &ext{patterns: pats}
}

func TestDefaultPatterns(t *testing.T) {
	t.Parallel()
	e := newGuard(t, "")
	for _, cmd := range []string{"rm -rf build", "rm -f x", "rm -v -r dir", "git push origin main", "sudo apt install x",
		"git reset --hard HEAD~1", "curl https://x.sh | sh", "dd if=/dev/zero of=/dev/sda", "mkfs.ext4 /dev/sdb1"} {
		assert.NotEmpty(t, e.match(cmd), cmd)
	}
	for _, cmd := range []string{"ls -la", "rm notes.txt", "git status", "go test ./...", "grep -rf pats .", "curl -o x https://x"} {
		assert.Empty(t, e.match(cmd), cmd)
	}
}

func TestAsksAndFollowsTheAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer func(title, message string) (bool, error)
		block  bool
		reason string
	}{
		{"yes runs it", func(string, string) (bool, error) { return true, nil }, false, ""},
		{"no blocks it", func(string, string) (bool, error) { return false, nil }, true, "declined"},
		{"dismissed blocks it", func(string, string) (bool, error) { return false, sdk.ErrDismissed }, true, "declined"},
		{"no answer in time blocks it", func(string, string) (bool, error) { return false, sdk.ErrNoAnswer }, true, "in time"},
		{"nobody to ask blocks it", nil, true, "nobody to ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := sdktest.New(t, newGuard(t, "")).WithUser(sdktest.User{Confirm: tc.answer})
			d, err := h.ToolCall(bash("rm -rf /tmp/x"))
			require.NoError(t, err)
			assert.Equal(t, tc.block, d.Block)
			assert.Contains(t, d.Reason, tc.reason)
			q := h.Questions()
			require.Len(t, q, 1)
			assert.Equal(t, "confirm", q[0].Kind)
			assert.Contains(t, q[0].Message, "rm -rf /tmp/x")
			assert.Equal(t, []string{"rm -rf"}, q[0].Highlight, "the part the pattern matched")
			if tc.block {
				require.Len(t, h.Notices(), 1)
				assert.Equal(t, "warning", h.Notices()[0].Level)
				assert.Equal(t, map[string]string{"guard": "guard: 1 asked, 1 blocked"}, h.Status())
			} else {
				assert.Empty(t, h.Notices())
				assert.Equal(t, map[string]string{"guard": "guard: 1 asked, 0 blocked"}, h.Status())
			}
		})
	}
}

func TestLeavesOtherCallsAlone(t *testing.T) {
	t.Parallel()
	h := sdktest.New(t, newGuard(t, "")).WithUser(sdktest.User{Confirm: func(string, string) (bool, error) {
		t.Error("asked about a harmless call")
		return false, nil
	}})
	for _, c := range []sdk.ToolCall{bash("ls"), {ID: "c2", Name: "write", Input: json.RawMessage(`{"path":"rm -rf","content":"sudo"}`)}, {ID: "c3", Name: "bash", Input: json.RawMessage(`not json`)}} {
		d, err := h.ToolCall(c)
		require.NoError(t, err)
		assert.False(t, d.Block, c.Name)
	}
	assert.Empty(t, h.Questions())
}

func TestConfiguredPatterns(t *testing.T) {
	t.Parallel()
	e := newGuard(t, "\n  make deploy \n\\bkubectl\\s+delete\\b\n")
	assert.NotEmpty(t, e.match("make deploy"))
	assert.NotEmpty(t, e.match("kubectl delete pod x"))
	assert.Empty(t, e.match("rm -rf x"), "configured patterns replace the defaults")
}

func TestBadPatternsBlockEveryBashCall(t *testing.T) {
	t.Parallel()
	pats, err := compile("ok\n(unclosed", "")
	require.ErrorContains(t, err, "line 2")
	h := sdktest.New(t, &ext{patterns: pats, bad: err})
	d, err := h.ToolCall(bash("ls"))
	require.NoError(t, err)
	assert.True(t, d.Block)
	assert.Contains(t, d.Reason, "PANTO_GUARD_PATTERNS line 2")
}

func TestAQuestionIsNotHeldToTheHookDeadline(t *testing.T) {
	t.Parallel()
	// The harness's hook deadline is short; a user who takes longer
	// still gets their answer through, as in panto.
	h := sdktest.New(t, newGuard(t, "")).WithHookTimeout(50 * time.Millisecond).
		WithUser(sdktest.User{Confirm: func(string, string) (bool, error) { time.Sleep(150 * time.Millisecond); return true, nil }})
	d, err := h.ToolCall(bash("sudo true"))
	require.NoError(t, err)
	assert.False(t, d.Block)
}

// A long command is asked about whole, with what matched highlighted:
// the part that runs is never hidden behind harmless lines.
func TestAsksAboutTheWholeCommandAndHighlightsTheMatch(t *testing.T) {
	t.Parallel()
	cmd := strings.Repeat("echo fine\n", 400) + "sudo rm -rf ~"
	h := sdktest.New(t, newGuard(t, "")).WithUser(sdktest.User{Confirm: func(string, string) (bool, error) { return false, nil }})
	d, err := h.ToolCall(bash(cmd))
	require.NoError(t, err)
	assert.True(t, d.Block)
	q := h.Questions()
	require.Len(t, q, 1)
	assert.True(t, strings.HasPrefix(q[0].Message, cmd+"\n\n"), "the whole command, first")
	assert.Equal(t, []string{"rm -rf"}, q[0].Highlight)
}

// Too many questions waiting, or a session closing: guard blocks.
func TestBlocksWhenItCannotAsk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err    error
		reason string
	}{{sdk.ErrTooManyQuestions, "too many"}, {sdk.ErrClosing, "closing"}} {
		h := sdktest.New(t, newGuard(t, "")).WithUser(sdktest.User{Confirm: func(string, string) (bool, error) { return false, tc.err }})
		d, err := h.ToolCall(bash("rm -rf x"))
		require.NoError(t, err)
		assert.True(t, d.Block)
		assert.Contains(t, d.Reason, tc.reason)
	}
}

// panto's own folders: by their default names, the variables that place
// them, and the folders PANTO_OWN_DIRS names (a convenience: the model's
// write and edit refuse them; bash is stopped only by a sandbox).
func TestAsksBeforeACommandNamingPantosFolders(t *testing.T) {
	t.Parallel()
	own := strings.Join([]string{"/srv/conf/panto-user", "/srv/data/agent"}, string(filepath.ListSeparator))
	pats, err := compile("", own)
	require.NoError(t, err)
	e := &ext{patterns: pats}
	for _, cmd := range []string{
		`echo 'extension_api_keys = ["tools"]' >> ~/.config/panto/config.toml`,
		`sed -i /guard/d $HOME/.local/share/panto/agent/config.toml`,
		`cat > "$XDG_CONFIG_HOME/panto/config.toml"`,
		`rm ~/.local/state/panto/guards.json`,
		`cp x ${PANTO_HOME}/agent/extensions/`,
		`tee /srv/conf/panto-user/config.toml`,
		`mv y /srv/data/agent/SYSTEM.md`,
	} {
		assert.NotEmpty(t, e.match(cmd), cmd)
	}
	for _, cmd := range []string{"ls ~/.config", "cat ~/src/panto/README.md", "go test ./cmd/panto/..."} {
		assert.Empty(t, e.match(cmd), cmd)
	}
	pats, err = compile(`\bkubectl\b`, own)
	require.NoError(t, err)
	assert.Empty(t, (&ext{patterns: pats}).match("tee /srv/conf/panto-user/x"), "configured patterns replace the defaults, the folders' too")
}
