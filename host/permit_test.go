package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/host/permissions"
	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/sessionlog"
)

// permSession is a session whose calls go through the permission
// policy, run by a fake that records each call and the sandbox it got.
type permSession struct {
	s   *Session
	mu  sync.Mutex
	ran []string
	sbs []*extension.Sandbox
	// blocked, when set, is what the sandbox blocks of a sandboxed call
	// without the network.
	blocked string
}

func rule(t *testing.T, text, source string) permissions.Rule {
	t.Helper()
	r, err := permissions.ParseRule(text)
	require.NoError(t, err)
	r.Source = source
	return r
}

func openPerm(t *testing.T, path string, interactive bool, perm Permissions, replies ...conversation.Message) *permSession {
	t.Helper()
	ps := &permSession{}
	exts := &fakeExtensions{runToolIn: func(_ context.Context, call conversation.Block, sb *extension.Sandbox) extension.ToolRun {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		ps.ran = append(ps.ran, string(call.Input))
		ps.sbs = append(ps.sbs, sb)
		if ps.blocked != "" && sb != nil && !sb.Network {
			return extension.ToolRun{Result: conversation.ToolResult(call.ID, "curl: (7) Couldn't connect", true), SandboxBlocked: ps.blocked}
		}
		return extension.ToolRun{Result: conversation.ToolResult(call.ID, "ran", false)}
	}}
	cfg := config(path, "seed")
	cfg.Provider = &script{replies: replies}
	cfg.startExtensions = exts.start
	cfg.Interactive = interactive
	cfg.Permissions = &perm
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	ps.s = s
	return ps
}

func bashCall(id, command string) conversation.Block {
	in, _ := json.Marshal(map[string]string{"command": command})
	return conversation.ToolUse(id, "bash", in)
}

// answering runs a turn, answering each question with the option whose
// text starts with the next of picks, and returns the questions and the
// tool results.
func answering(t *testing.T, s *Session, picks ...string) (qs []Question, results []string) {
	t.Helper()
	sub, stop := context.WithCancel(context.Background())
	defer stop()
	events := s.Subscribe(sub)
	require.NoError(t, s.Turn(context.Background(), "go"))
	for ev := range events {
		switch e := ev.(type) {
		case Question:
			qs = append(qs, e)
			require.NotEmpty(t, picks, "an unexpected question: %s %s", e.Title, e.Message)
			idx := -1
			for i, o := range e.Options {
				if strings.HasPrefix(o, picks[0]) {
					idx = i
				}
			}
			if e.Type == "input" {
				e.Answer(extension.Answer{Text: picks[0]})
			} else {
				require.GreaterOrEqual(t, idx, 0, "no option %q in %q", picks[0], e.Options)
				e.Answer(extension.Answer{Index: idx})
			}
			picks = picks[1:]
		case ToolEnd:
			results = append(results, e.Result)
		case TurnEnd:
			require.NoError(t, e.Err)
			require.Empty(t, picks, "questions not asked")
			return qs, results
		}
	}
	return qs, results
}

func lastPermissions(t *testing.T, path string) *sessionlog.Permissions {
	t.Helper()
	l, err := sessionlog.Load(path)
	require.NoError(t, err)
	var p *sessionlog.Permissions
	for _, e := range l.Entries {
		if e.Permissions != nil {
			p = e.Permissions
		}
	}
	return p
}

// With nobody to ask, an ask is a denial that says who asked and how to
// allow the call; a deny rule names itself and its file; nothing runs.
func TestPermissionAskWithNobodyIsADenial(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	perm := Permissions{Policy: permissions.Policy{Mode: permissions.ModeDefault,
		Deny: []permissions.Rule{rule(t, "bash(rm *)", "config /u/config.toml")}}, Env: permissions.Env{Workspace: "/p", Home: "/h"}}
	ps := openPerm(t, path, false, perm,
		calls(bashCall("c1", "git status"), bashCall("c2", "rm -rf build"), conversation.ToolUse("c3", "read", json.RawMessage(`{"path":"main.go"}`))),
		conversation.AssistantText("done"))
	_, results := answering(t, ps.s)
	require.Len(t, results, 3)
	joined := strings.Join(results, "\n")
	require.Contains(t, joined, "not run: bash: git status: bash is asked about (permission mode default), and there is nobody to ask here (print mode)")
	require.Contains(t, joined, "--allow 'bash(git status)'")
	require.Contains(t, joined, "not run: denied by the permission rule bash(rm *) denies rm -rf build (config /u/config.toml).")
	require.Equal(t, []string{`{"path":"main.go"}`}, ps.ran, "only the read ran: default mode allows reads")
	require.Equal(t, "start", lastPermissions(t, path).Reason, "the policy is recorded as the session opens")
}

// Allowed for the session, a call like it runs without asking again —
// and after a resume too, since the grant is recorded on the branch.
func TestPermissionGrantSurvivesAResume(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	ws := t.TempDir()
	perm := Permissions{Policy: permissions.Policy{Mode: permissions.ModeDefault}, Env: permissions.Env{Workspace: ws, Home: "/h"},
		Sandbox: &sessionlog.SandboxPolicy{Mode: "workspace-write", WritableRoots: []string{ws}}}
	ps := openPerm(t, path, true, perm,
		calls(bashCall("c1", "go test ./...")), calls(bashCall("c2", "go test ./...")), conversation.AssistantText("done"))
	qs, results := answering(t, ps.s, "Allow for this session")
	require.Len(t, qs, 1, "asked once")
	require.Equal(t, "panto", qs[0].By)
	require.Equal(t, "Allow bash?", qs[0].Title)
	require.Contains(t, qs[0].Message, "bash: go test ./...")
	require.Contains(t, qs[0].Message, "permission mode default")
	require.Equal(t, []PermissionKind{AllowOnce, AllowAlways, RejectOnce, RejectOnce}, qs[0].Permission)
	require.Equal(t, "c1", qs[0].ToolCallID)
	require.Equal(t, []string{"ran", "ran"}, results)
	require.Equal(t, []string{"bash(go test ./...)"}, lastPermissions(t, path).Grants)

	// Each call ran in the sandbox, with the session's own TMPDIR, which
	// Close removes.
	sb := ps.sbs[0]
	require.NotNil(t, sb)
	require.Equal(t, "workspace-write", sb.Mode)
	require.False(t, sb.Network)
	require.Equal(t, []string{ws}, sb.WritableRoots)
	require.DirExists(t, sb.TmpDir)
	require.NoError(t, ps.s.Close(context.Background()))
	require.NoDirExists(t, sb.TmpDir)

	ps = openPerm(t, path, true, perm, calls(bashCall("c3", "go test ./...")), conversation.AssistantText("done"))
	qs, results = answering(t, ps.s)
	require.Empty(t, qs, "the grant holds after the resume")
	require.Equal(t, []string{"ran"}, results)
	st, _, ok := ps.s.PermissionState()
	require.True(t, ok)
	require.Equal(t, []string{"bash(go test ./...)"}, st.Grants)
}

// Deny with a note: the model reads the note; nothing runs. A rule that
// asks is not offered a grant (an allow rule would not beat it).
func TestPermissionDenyWithANote(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	perm := Permissions{Policy: permissions.Policy{Mode: permissions.ModeBypass,
		Ask: []permissions.Rule{rule(t, "bash(git push *)", "config /u/config.toml")}}, Env: permissions.Env{Workspace: "/p", Home: "/h"}}
	ps := openPerm(t, path, true, perm, calls(bashCall("c1", "git push origin main")), conversation.AssistantText("done"))
	qs, results := answering(t, ps.s, "Deny, with a note", "push to a branch of your own")
	require.Equal(t, []string{"Allow once", "Deny", "Deny, with a note to the model"}, qs[0].Options)
	require.Contains(t, qs[0].Message, "asked by the rule bash(git push *) (config /u/config.toml)")
	require.Equal(t, []string{"not run: the user denied it, and says: push to a branch of your own"}, results)
	require.Empty(t, ps.ran)
}

// Plan mode runs bash read-only and never edits; a call the sandbox
// blocked on the network may run again with the network on for the
// session, which is recorded.
func TestPermissionPlanModeAndSandboxRerun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	ws := t.TempDir()
	perm := Permissions{Policy: permissions.Policy{Mode: permissions.ModePlan, Allow: []permissions.Rule{rule(t, "bash(curl *)", ""), rule(t, "edit", "")}},
		Env: permissions.Env{Workspace: ws, Home: "/h"}, Sandbox: &sessionlog.SandboxPolicy{Mode: "workspace-write", WritableRoots: []string{ws}}}
	ps := openPerm(t, path, true, perm,
		calls(bashCall("c1", "curl https://example.com"), conversation.ToolUse("c2", "edit", json.RawMessage(`{"path":"a.go"}`))),
		conversation.AssistantText("done"))
	ps.blocked = "network is off (sandbox.network = false)"
	qs, results := answering(t, ps.s, "Turn the network on")
	require.Len(t, qs, 1)
	require.Contains(t, qs[0].Message, "blocked by the sandbox: network is off")
	require.ElementsMatch(t, []string{"ran", "not run: edit changes files, which permission mode plan never does."}, results,
		"the curl ran again with the network on; the edit did not run, though a rule allows it")
	require.Len(t, ps.sbs, 2)
	require.Equal(t, "read-only", ps.sbs[0].Mode, "plan mode: bash runs read-only")
	require.True(t, ps.sbs[1].Network)
	require.True(t, lastPermissions(t, path).Sandbox.Network, "the network is on for the rest of the session, recorded")
	_, err := os.Stat(ps.sbs[0].TmpDir)
	require.NoError(t, err)
}

// A mode switch is recorded, and calls follow it at once.
func TestPermissionModeSwitchIsRecorded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	ps := openPerm(t, path, false, Permissions{Policy: permissions.Policy{Mode: permissions.ModeDefault}, Env: permissions.Env{Workspace: "/p", Home: "/h"}},
		calls(bashCall("c1", "make")), conversation.AssistantText("done"))
	require.NoError(t, ps.s.SetPermissionMode(permissions.ModeBypass))
	require.Error(t, ps.s.SetPermissionMode("yolo"))
	_, results := answering(t, ps.s)
	require.Equal(t, []string{"ran"}, results)
	p := lastPermissions(t, path)
	require.Equal(t, "bypass", p.Mode)
	require.Equal(t, "mode", p.Reason)
}

// The rules "allow for this session" suggests cover the call and no
// more: each command of a bash line as written, the workspace for a
// file tool's path in it (~ read as the home), the exact path outside,
// the host of a fetch's URL.
func TestSuggestedGrants(t *testing.T) {
	t.Parallel()
	env := permissions.Env{Workspace: "/home/u/p", Home: "/home/u"}
	for _, tc := range []struct {
		call conversation.Block
		want []string
	}{
		{bashCall("c", "go test ./... && git status"), []string{"bash(go test ./...)", "bash(git status)"}},
		{bashCall("c", "ls *.go"), nil},
		{bashCall("c", `eval "$x"`), nil},
		{conversation.ToolUse("c", "edit", json.RawMessage(`{"path":"main.go"}`)), []string{"edit(./**)"}},
		{conversation.ToolUse("c", "write", json.RawMessage(`{"path":"~/p/x.go"}`)), []string{"edit(./**)"}},
		{conversation.ToolUse("c", "edit", json.RawMessage(`{"path":"~/notes.txt"}`)), []string{"edit(/home/u/notes.txt)"}},
		{conversation.ToolUse("c", "read", json.RawMessage(`{"path":"/etc/hosts"}`)), []string{"read(/etc/hosts)"}},
		{conversation.ToolUse("c", "mcp__docs__search", json.RawMessage(`{}`)), []string{"mcp__docs__search"}},
		{conversation.ToolUse("c", "fetch", json.RawMessage(`{"url":"https://Go.dev:443/doc/"}`)), []string{"fetch(go.dev)"}},
		{conversation.ToolUse("c", "fetch", json.RawMessage(`{"url":"nonsense"}`)), []string{"fetch"}},
	} {
		require.Equal(t, tc.want, suggestGrants(tc.call, env), string(tc.call.Input))
	}
}

// Plan mode offers the model no tool that changes files; the others
// stay, and switching out of plan mode offers them again.
func TestPlanModeOffersNoEdits(t *testing.T) {
	t.Parallel()
	prov := &script{replies: []conversation.Message{conversation.AssistantText("one"), conversation.AssistantText("two")}}
	exts := &fakeExtensions{tools: []serializers.Tool{{Name: "bash"}, {Name: "edit"}, {Name: "read"}, {Name: "write"}}}
	cfg := config(filepath.Join(t.TempDir(), "s.jsonl"), "seed")
	cfg.Provider, cfg.startExtensions = prov, exts.start
	cfg.Permissions = &Permissions{Policy: permissions.Policy{Mode: permissions.ModePlan}, Env: permissions.Env{Workspace: "/p", Home: "/h"}}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	defer s.Close(context.Background())
	names := func(i int) []string {
		var out []string
		for _, tl := range prov.requests[i].Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	answering(t, s)
	require.Equal(t, []string{"bash", "read"}, names(0))
	require.NoError(t, s.SetPermissionMode(permissions.ModeDefault))
	answering(t, s)
	require.Equal(t, []string{"bash", "edit", "read", "write"}, names(1))
}
