package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/panto-dev/panto/sessionlog"
)

// The session tree end to end: the real panto, the real sysprompt
// extension, the fake providers.

// entryIDs are the ids of a log's message entries by their text (the
// last one with that text wins), for picking where to branch.
func entryIDs(t *testing.T, path string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, e := range entriesOfType(t, path, "message") {
		msg := e["message"].(map[string]any)
		var text strings.Builder
		for _, c := range msg["content"].([]any) {
			if s, ok := c.(map[string]any)["text"].(string); ok {
				text.WriteString(s)
			}
		}
		ids[text.String()] = e["id"].(string)
	}
	return ids
}

// requestField is one top-level field of a request body, as raw JSON.
func requestField(t *testing.T, body []byte, name string) json.RawMessage {
	t.Helper()
	var req map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &req))
	return req[name]
}

// messagesOf is a request's messages, each as raw JSON.
func messagesOf(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal(requestField(t, body, "messages"), &msgs))
	return msgs
}

// Branching from before an extension's edit sends, on both wires, the
// prompt exactly as it was there: the request body's prompt is byte for
// byte the one sent before the edit, and its messages the path's.
func TestBranchBeforeAnExtensionEditOnTheWire(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			text := anthropicText
			if provider == "openai" {
				text = openaiText
			}
			h := newHarness(t)
			h.write(filepath.Join(h.projectDir(), "SYSTEM.md"), "Be brief.")
			fake := newFake(t, text("a1"), text("a2"), text("a3"))
			h.env["ANTHROPIC_API_KEY"], h.env["OPENAI_API_KEY"] = "k", "k"
			base := fake.srv.URL
			if provider == "openai" {
				base += "/v1"
			}
			args := func(more ...string) []string {
				return append([]string{"--provider", provider, "--base-url", base, "--extension", filepath.Join(pluginDir, "sysprompt")}, more...)
			}
			h.ok(args("-p", "u1")...)
			h.ok(args("-c", "-p", "/system-append Answer in French.")...)
			h.ok(args("-c", "-p", "u2")...)
			log := h.sessionFiles()[0]
			a1 := entryIDs(t, log)["a1"]
			r := h.ok(args("-c", "-p", "u3", "--from", a1[:8])...)
			require.Contains(t, r.stderr, "continuing from entry "+a1[:8])

			first, edited, branched := fake.request(t, 0).body, fake.request(t, 1).body, fake.request(t, 2).body
			require.Contains(t, string(edited), "Answer in French.")
			require.NotContains(t, string(branched), "Answer in French.")
			if provider == "anthropic" {
				require.JSONEq(t, string(requestField(t, first, "system")), string(requestField(t, branched, "system")), "the prompt as it was before the edit")
			} else {
				require.JSONEq(t, string(messagesOf(t, first)[0]), string(messagesOf(t, branched)[0]), "the system message as it was before the edit")
			}
			em, bm := nonSystem(t, messagesOf(t, edited)), nonSystem(t, messagesOf(t, branched))
			require.Len(t, bm, 3, "u1, a1, u3")
			// u1 and a1 exactly as the edited request sent them; then u3.
			require.JSONEq(t, string(em[0]), string(bm[0]))
			require.JSONEq(t, string(em[1]), string(bm[1]))
			require.Contains(t, string(bm[2]), `"u3"`)

			// The tree shows both branches, and who changed the prompt.
			tree := h.ok("session", "tree").stdout
			require.Contains(t, tree, "⚙ prompt   sysprompt added a block to the system prompt")
			require.Contains(t, tree, "├─ ")
			require.Contains(t, tree, "u3")
			require.Contains(t, tree, "← here")

			// panto prompt --at the branch point and at the old branch's end.
			at := h.ok("prompt", "-c", "--at", a1[:8]).stdout
			require.Contains(t, at, "Be brief.")
			require.NotContains(t, at, "French")
			require.Contains(t, h.ok("prompt", "-c", "--at", entryIDs(t, log)["a2"]).stdout, "· extension sysprompt · entry ")
		})
	}
}

// nonSystem drops a request's system messages (OpenAI's wire).
func nonSystem(t *testing.T, msgs []json.RawMessage) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, m := range msgs {
		var head struct{ Role string }
		require.NoError(t, json.Unmarshal(m, &head))
		if head.Role != "system" && head.Role != "developer" {
			out = append(out, m)
		}
	}
	return out
}

// A move made in the line loop and left without typing is in the log: a
// resume continues from there.
func TestMovedLeafPersistsAcrossQuit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t, anthropicText("a1"), anthropicText("a2"), anthropicText("a3"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	args := []string{"--provider", "anthropic", "--base-url", fake.srv.URL}
	h.ok(append(args, "-p", "u1")...)
	h.ok(append(args, "-c", "-p", "u2")...)
	log := h.sessionFiles()[0]
	a1 := entryIDs(t, log)["a1"]

	out, _ := h.lineLoop(strings.NewReader("/tree "+a1[:8]+"\n/quit\n"), append(args, "-c")...)
	require.Contains(t, out, "moved to "+a1[:8]+"; the next message continues from there (the branch left, 2 message(s), stays in the log")
	require.Len(t, entriesOfType(t, log, "move"), 1)

	h.ok(append(args, "-c", "-p", "u3")...)
	var texts []string
	for _, m := range messagesOf(t, fake.request(t, 2).body) {
		var msg struct{ Content []struct{ Text string } }
		require.NoError(t, json.Unmarshal(m, &msg))
		texts = append(texts, msg.Content[0].Text)
	}
	require.Equal(t, []string{"u1", "a1", "u3"}, texts)
}

// /tree on a user message continues from before it and shows its text
// to send again; /tree --summary asks the model (the compaction model)
// for a branch summary, sent as a user message on the new path.
func TestBranchSummaryAndRetype(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t, anthropicText("a1"), anthropicText("a2"), anthropicText("tried u2; a2 was wrong"), anthropicText("a3"))
	h.env["ANTHROPIC_API_KEY"] = "k"
	h.write(filepath.Join(h.userDir(), "config.toml"), "compaction_model = \"claude-summariser\"\n")
	args := []string{"--provider", "anthropic", "--base-url", fake.srv.URL}
	h.ok(append(args, "-p", "u1")...)
	h.ok(append(args, "-c", "-p", "u2")...)
	log := h.sessionFiles()[0]
	u2 := entryIDs(t, log)["u2"]

	out, errs := h.lineLoop(strings.NewReader("/tree --summary "+u2[:8]+"\nu2, better\n"), append(args, "-c")...)
	require.Empty(t, strings.TrimSpace(strings.ReplaceAll(errs, "panto: summarising the branch left (2 messages)…", "")), errs)
	require.Contains(t, out, "branch summary recorded: tried u2; a2 was wrong")
	require.Contains(t, out, "your message there was:\n  u2\n")

	sum := fake.request(t, 2).body
	require.Equal(t, `"claude-summariser"`, string(requestField(t, sum, "model")))
	require.Contains(t, string(sum), "a2")
	// Anthropic's wire has one user turn for the summary and the message
	// after it: two blocks.
	var texts [][]string
	for _, m := range messagesOf(t, fake.request(t, 3).body) {
		var msg struct{ Content []struct{ Text string } }
		require.NoError(t, json.Unmarshal(m, &msg))
		var blocks []string
		for _, c := range msg.Content {
			blocks = append(blocks, c.Text)
		}
		texts = append(texts, blocks)
	}
	require.Len(t, texts, 3)
	require.Equal(t, [][]string{{"u1"}, {"a1"}}, texts[:2])
	require.Len(t, texts[2], 2)
	require.Contains(t, texts[2][0], "tried u2; a2 was wrong")
	require.Equal(t, "u2, better", texts[2][1])
	require.Len(t, entriesOfType(t, log, "branch_summary"), 1)
	require.Contains(t, h.ok("session", "tree").stdout, "summary    summary of the branch left: tried u2; a2 was wrong")
}

// Labels from the line loop and from panto session label show in the
// tree and the list; a running session's log cannot be labelled from
// outside.
func TestLabels(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "u1", "--provider", "echo")
	log := h.sessionFiles()[0]
	out, _ := h.lineLoop(strings.NewReader("/label first try\n"), "--provider", "echo", "-c")
	require.Contains(t, out, `labelled `)
	ids := entryIDs(t, log)
	var u1 string
	for text, id := range ids {
		if text == "u1" {
			u1 = id
		}
	}
	h.ok("session", "label", log, u1[:6], "the question")
	tree := h.ok("session", "tree", log).stdout
	require.Contains(t, tree, "u1  [the question]")
	require.Contains(t, tree, "[first try]  ← here")
	require.Contains(t, h.ok("session", "list").stdout, "first try, the question")

	h.ok("session", "label", log, u1[:6], "")
	require.NotContains(t, h.ok("session", "tree", log).stdout, "the question")

	r := h.run("", "session", "label", log, "zzzz", "x")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `no entry "zzzz"`)
	r = h.run("", "session", "label", log, u1)
	require.Equal(t, 2, r.code, "a usage error")

	var tj struct {
		Session  string
		Branches int
		Rows     []struct {
			ID, Kind, Text, Label string
			Here                  bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("session", "tree", "--json").stdout), &tj))
	require.Equal(t, 1, tj.Branches)
	require.Equal(t, "first try", tj.Rows[len(tj.Rows)-1].Label)
	require.True(t, tj.Rows[len(tj.Rows)-1].Here)
}

// Fork: a new log with the path up to the entry, its header naming the
// parent; -c then continues the fork, under the parent's prompt there.
func TestFork(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sysprompt := filepath.Join(pluginDir, "sysprompt")
	h.ok("-p", "u1", "--provider", "echo", "--extension", sysprompt)
	h.ok("-c", "-p", "/system-append Later.", "--provider", "echo", "--extension", sysprompt)
	h.ok("-c", "-p", "u2", "--provider", "echo", "--extension", sysprompt)
	src := h.sessionFiles()[0]
	srcHeader, err := sessionlog.ReadHeader(src)
	require.NoError(t, err)
	var a1 string
	for text, id := range entryIDs(t, src) {
		if strings.HasPrefix(text, `echo: you said "u1"`) {
			a1 = id
		}
	}
	before, err := os.ReadFile(src)
	require.NoError(t, err)

	dst := filepath.Join(h.root, "fork.jsonl")
	r := h.ok("session", "fork", src, "--at", a1[:8], "-o", dst)
	require.Contains(t, r.stdout, "forked "+srcHeader.ID+" at "+a1[:8])
	after, err := os.ReadFile(src)
	require.NoError(t, err)
	require.Equal(t, before, after, "the source is only read")

	fh, err := sessionlog.ReadHeader(dst)
	require.NoError(t, err)
	require.Equal(t, srcHeader.ID, fh.ParentSession)
	require.Equal(t, a1, fh.ParentEntry)
	fl, err := sessionlog.Read(dst)
	require.NoError(t, err)
	require.Equal(t, a1, fl.Leaf().ID)
	require.NotContains(t, h.ok("prompt", "--session", dst).stdout, "Later.")

	// Beside the source, the fork is the directory's newest session: -c
	// continues it.
	r = h.ok("session", "fork", src, "--at", a1)
	fork2 := strings.TrimSpace(strings.Split(r.stdout, "\n")[1])
	// Its name carries its id, as every session's does (--resume ID
	// and the listing agree).
	h2, err := sessionlog.ReadHeader(fork2)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(fork2, "_"+h2.ID+".jsonl"), "%s is not named for its id %s", fork2, h2.ID)
	h.ok("-c", "-p", "u3", "--provider", "echo")
	require.Contains(t, string(mustRead(t, fork2)), `"u3"`)
	require.NotContains(t, string(mustRead(t, src)), `"u3"`)

	// /fork in the line loop switches to the fork.
	out, _ := h.lineLoop(strings.NewReader("/fork "+a1[:8]+"\nu4\n/session\n"), "--provider", "echo", "--session", src)
	require.Contains(t, out, "forked at "+a1[:8]+" into session ")
	require.NotContains(t, string(mustRead(t, src)), `"u4"`)
	require.Contains(t, out, "(the session you left is "+srcHeader.ID)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// Export: one HTML file that parses, shows the prompt's changes with
// their source, links each message to the prompt as of it, and escapes
// what the session holds.
func TestExportHTML(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sysprompt := filepath.Join(pluginDir, "sysprompt")
	hostile := `</script><img src=x onerror=alert(1)><script>alert(2)</script>`
	h.ok("-p", hostile, "--provider", "echo", "--extension", sysprompt)
	h.ok("-c", "-p", "/system-append Answer in French.", "--provider", "echo", "--extension", sysprompt)
	h.ok("-c", "-p", "second", "--provider", "echo")
	out := filepath.Join(h.root, "s.html")
	h.ok("session", "export", "--format", "html", "-o", out)
	page := mustRead(t, out)

	// -o never writes over a session log: the one exported, by its path
	// or a link to it, or another.
	log := h.sessionFiles()[0]
	before := mustRead(t, log)
	link := filepath.Join(h.root, "link.jsonl")
	require.NoError(t, os.Symlink(log, link))
	other := filepath.Join(h.root, "other.jsonl")
	require.NoError(t, os.WriteFile(other, before, 0o600))
	for _, dst := range []string{log, link, other} {
		r := h.run("", "session", "export", "--format", "md", "-o", dst)
		require.Equal(t, 1, r.code, dst)
		require.Contains(t, r.stderr, "write the export elsewhere", dst)
	}
	require.Equal(t, string(before), string(mustRead(t, log)))
	require.Equal(t, string(before), string(mustRead(t, other)))
	doc, err := html.Parse(bytes.NewReader(page))
	require.NoError(t, err)

	var text strings.Builder
	var links []string
	ids := map[string]bool{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "img", "iframe", "object", "embed":
				t.Errorf("the export holds a <%s> element", n.Data)
			case "link":
				t.Errorf("the export loads something: %v", n.Attr)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("an event handler attribute %s=%q", a.Key, a.Val)
				}
				if a.Key == "href" {
					links = append(links, a.Val)
				}
				if a.Key == "id" {
					ids[a.Val] = true
				}
			}
		}
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	s := text.String()
	require.Contains(t, s, hostile, "the message shows as written")
	require.Contains(t, s, "Answer in French.")
	require.Contains(t, s, "extension sysprompt", "the change's source")
	prompts := 0
	for _, l := range links {
		require.True(t, strings.HasPrefix(l, "#"), "no outside link: %s", l)
		require.True(t, ids[strings.TrimPrefix(l, "#")], "a link to nothing: %s", l)
		if strings.HasPrefix(l, "#prompt-") {
			prompts++
		}
	}
	require.Positive(t, prompts, "messages link to the prompt as of them")

	md := h.ok("session", "export", "--format", "md").stdout
	require.Contains(t, md, "Answer in French.")
	require.Equal(t, 2, h.run("", "session", "export", "--format", "pdf").code)
}

// Bad trees: each a clear error naming the file and line, or a warning
// that leaves the session usable; nothing already recorded is lost, and
// repair is by appending.
func TestBadTreeInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "u1", "--provider", "echo")
	log := h.sessionFiles()[0]
	good := mustRead(t, log)
	last := lastID(t, log)
	appendLine := func(path, line string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString(line + "\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	copyLog := func(name string) string {
		p := filepath.Join(h.root, name)
		require.NoError(t, os.WriteFile(p, good, 0o600))
		return p
	}
	lines := strings.Count(string(good), "\n")

	// A message whose parent names no entry: an error with file and line.
	orphan := copyLog("orphan.jsonl")
	appendLine(orphan, `{"type":"message","id":"00000000000000f1","parent_id":"ffffffffffffffff","time":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"lost"}]}}`)
	r := h.run("", "session", "tree", orphan)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, orphan)
	require.Contains(t, r.stderr, "line "+itoa(lines+1))
	r = h.run("", "-p", "x", "--provider", "echo", "--session", orphan)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "line "+itoa(lines+1))

	// A parent on a later line (what a cycle needs): refused alike.
	cycle := copyLog("cycle.jsonl")
	appendLine(cycle, `{"type":"message","id":"00000000000000c1","parent_id":"00000000000000c2","time":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"a"}]}}`)
	appendLine(cycle, `{"type":"message","id":"00000000000000c2","parent_id":"00000000000000c1","time":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"b"}]}}`)
	r = h.run("", "session", "tree", cycle)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "line "+itoa(lines+1))

	// A move (the leaf) to an unknown entry: skipped with a warning naming
	// the file and line; the session goes on by appending after it, and
	// nothing before it changed.
	badMove := copyLog("move.jsonl")
	appendLine(badMove, `{"type":"move","id":"00000000000000d1","parent_id":"ffffffffffffff00","time":"2026-01-01T00:00:00Z","from":"`+last+`"}`)
	r = h.run("", "-p", "go on", "--provider", "echo", "--session", badMove)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "line "+itoa(lines+1))
	after := mustRead(t, badMove)
	require.True(t, bytes.HasPrefix(after, good), "nothing recorded was rewritten")
	require.Contains(t, string(after), `"go on"`)
	require.Contains(t, h.ok("session", "tree", badMove).stdout, "go on")

	// A torn last line: navigation behaves as on resume (the tree reads,
	// a move repairs the tail and appends).
	torn := copyLog("torn.jsonl")
	f, err := os.OpenFile(torn, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"message","id":"00000000000000e1","parent_id":"` + last)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Contains(t, h.ok("session", "tree", torn).stdout, "u1")
	u1 := entryIDs(t, copyLog("ids.jsonl"))["u1"]
	r = h.run("", "-p", "again", "--provider", "echo", "--session", torn, "--from", u1)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "torn")
	require.Len(t, entriesOfType(t, torn, "move"), 1)

	// --from names no entry, or a session that does not exist yet: a
	// failed --from records nothing (no lifecycle entry, no re-seed, no
	// new log).
	before := mustRead(t, log)
	r = h.run("", "-p", "x", "--provider", "echo", "--session", log, "--from", "nope")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `--from nope: move: `)
	require.Equal(t, string(before), string(mustRead(t, log)), "a failed --from leaves the log as it was")
	fresh := filepath.Join(h.root, "fresh.jsonl")
	r = h.run("", "-p", "x", "--provider", "echo", "--session", fresh, "--from", u1)
	require.NotEqual(t, 0, r.code)
	require.NoFileExists(t, fresh)
	r = h.run("", "-p", "x", "--provider", "echo", "--from", "abcd")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "name the session to continue")
}

// Extensions see a move before it is recorded (and may veto it, or give
// the branch summary) and after (their edits land on the new path).
func TestExtensionsSeeMoves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mover := filepath.Join(pluginDir, "mover")
	h.ok("-p", "u1", "--provider", "echo")
	h.ok("-c", "-p", "u2", "--provider", "echo")
	log := h.sessionFiles()[0]
	var a1 string
	for text, id := range entryIDs(t, log) {
		if strings.HasPrefix(text, `echo: you said "u1"`) {
			a1 = id
		}
	}

	h.env["PANTO_MOVER_VETO"] = "1"
	_, errs := h.lineLoop(strings.NewReader("/tree "+a1[:8]+"\n"), "--provider", "echo", "-c", "--extension", mover)
	require.Contains(t, errs, "the mover extension vetoed the move: moves are frozen here")
	require.Empty(t, entriesOfType(t, log, "move"), "a vetoed move records nothing")
	r := h.run("", "-p", "x", "--provider", "echo", "-c", "--from", a1, "--extension", mover)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "vetoed")

	delete(h.env, "PANTO_MOVER_VETO")
	out, errs := h.lineLoop(strings.NewReader("/tree --summary "+a1[:8]+"\n/prompt\n"), "--provider", "echo", "-c", "--extension", mover)
	require.NotContains(t, errs, "summarising", "the extension's summary: no model request")
	require.Contains(t, out, "branch summary recorded: mover's summary of what was left")
	require.Contains(t, out, "The leaf moved to "+a1+".", "after_move's section is in the prompt")
	sums := entriesOfType(t, log, "branch_summary")
	require.Len(t, sums, 1)
	require.Equal(t, "mover's summary of what was left", sums[0]["summary"])
}

// /resume lists this directory's sessions and switches to one.
func TestResumePickerInTheLineLoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "the first session", "--provider", "echo")
	h.ok("-p", "the second session", "--provider", "echo")
	files := h.sessionFiles()
	require.Len(t, files, 2)
	out, errs := h.lineLoop(strings.NewReader("/resume\n/resume 2\n/resume 9\nhello again\n"), "--provider", "echo", "-c")
	require.Contains(t, out, " 1. ")
	require.Contains(t, out, "the second session")
	require.Contains(t, out, "the first session")
	require.Contains(t, out, "resumed session ")
	require.Contains(t, errs, "/resume 9: want 1 to 2")
	// The older session got the message.
	var got string
	for _, f := range files {
		if strings.Contains(string(mustRead(t, f)), "hello again") {
			got = string(mustRead(t, f))
		}
	}
	require.Contains(t, got, "the first session")
}

// A /resume that fails from a session not recorded stays in it (it could
// not be opened again): its extensions still run, the next message is
// answered.
func TestResumeThatFailsFromNoSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "a session", "--provider", "echo")
	log := h.sessionFiles()[0]
	require.NoError(t, os.WriteFile(log, []byte("not a header\n"), 0o600))
	out, errs := h.lineLoop(strings.NewReader("/resume 1\n/system-append Still loaded.\n/prompt\nhello\n"),
		"--provider", "echo", "--no-session", "--extension", filepath.Join(pluginDir, "sysprompt"))
	require.Contains(t, errs, "/resume: ")
	require.Contains(t, out, "Still loaded.", "the extensions still run")
	require.Contains(t, out, `you said "hello"`)
}

// A label with line breaks — in a hand-made or shared log; panto's own
// /label and session label keep one line — is shown on one line in the
// tree, as session list shows it (the sixth adversary pass's S10: panto
// session tree printed its line breaks, and so a row that does not
// exist).
func TestTreeShowsALabelOnOneLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("-p", "u1", "--provider", "echo")
	log := h.sessionFiles()[0]
	lines := logLines(t, log)
	last := lines[len(lines)-1]["id"].(string)
	entry, err := json.Marshal(map[string]any{"type": "label", "id": "a00000000000000a", "parent_id": last, "time": "2026-02-01T10:00:09Z",
		"target": last, "label": "AAA\nCCC\n* 99999999  user       FAKE ROW injected"})
	require.NoError(t, err)
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(entry, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	const one = "[AAA CCC * 99999999 user FAKE ROW injected]"
	tree := h.ok("session", "tree", log).stdout
	require.Contains(t, tree, one)
	require.NotContains(t, tree, "\n* 99999999", "no row that is not in the log")
	require.Contains(t, h.ok("session", "list").stdout, "AAA CCC * 99999999")

	out, _ := h.lineLoop(strings.NewReader("/tree\n"), "--provider", "echo", "-c")
	require.Contains(t, out, one)
	require.NotContains(t, out, "\n* 99999999")
}
