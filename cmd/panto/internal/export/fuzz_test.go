package export

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/stretchr/testify/require"
)

// FuzzExport builds a log from random texts and checks the exports: the
// HTML parses to a page with no script, image, event attribute or outside
// URL, its links resolve, and each text shows as written (a block panto
// added to a user message folded as panto's); the Markdown
// leaves no code block open and puts every message heading outside code.
func FuzzExport(f *testing.F) {
	f.Add("hi", "hello", "ok", "seed", "project /p/.panto/SYSTEM.md", "tools:guidance", "label", false)
	f.Add(hostile, hostile, hostile, hostile, hostile, "k", hostile, true)
	f.Add("```\nopen", "~~~~\n<!--", "``````", "]]>", `" onload="x`, "a/b.c-d_e", "<b>", false)
	f.Add("- x\n  ```\n  y\n```", "> ```\n", "\r\n\x00\r", "", "", "", "", true)
	f.Add("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<svg onload=alert(1)>", "<iframe src=https://x>", "javascript:alert(1)", "x", "<!--", false)
	f.Fuzz(func(t *testing.T, user, assistant, result, system, source, key, label string, isErr bool) {
		// Valid UTF-8 from here, as the log's JSON makes it (each bad byte
		// a U+FFFD).
		for _, s := range []*string{&user, &assistant, &result, &system, &source, &key, &label} {
			*s = string([]rune(*s))
		}
		var nonce [8]byte
		_, _ = rand.Read(nonce[:])
		mark := "n" + hex.EncodeToString(nonce[:])
		b := newBuilder(t, "/p")
		b.msg("", conversation.SystemMessage(system, conversation.ModeAppend).WithSource(source))
		if key != "" {
			b.msg("", conversation.KeyedSystemMessage(key, system).WithSource(source))
		}
		b.add("lifecycle", "", map[string]any{"event": "started", "reseeded": false, "extensions": []string{source}})
		// As recorded with a USER_PROMPT.md: panto's block first, marked.
		u := b.msg("", conversation.Message{Role: conversation.RoleUser, Content: []conversation.Block{
			conversation.AddedText(system, source), conversation.Text(user)}})
		b.msg("", conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
			conversation.Thinking(assistant, ""),
			conversation.Text(assistant),
			conversation.ToolUse("t1", "tool "+label, []byte(`{"x":`+mustJSON(result)+`}`)),
		}})
		tr := b.msg("", toolResult("t1", result, isErr))
		b.add("compaction", "", map[string]any{"summary": "s " + result, "first_kept_id": u})
		b.add("x-"+label, "", map[string]any{"summary": label})
		if key != "" {
			b.msg("", conversation.KeyedSystemMessage(key, "").WithSource(source))
		}
		b.msg("", conversation.SystemMessage(result, conversation.ModeReplace))
		left := b.msg("", conversation.AssistantText(assistant))
		// Back to the tool result, with a summary of what was left: the
		// replace and the answer stay on the other branch.
		b.move(tr)
		b.summary("s "+assistant, left)
		last := b.msg("", conversation.AssistantText(user))
		// Every message labelled (after a label that the next one
		// replaces or removes).
		var msgs []string
		for _, id := range b.ids {
			b.label(id, "old "+label)
			if id == left {
				b.label(id, "")
				continue
			}
			b.label(id, label+" "+mark)
			msgs = append(msgs, id)
		}
		l, err := b.log()
		if err != nil {
			return // a key or type the log refuses
		}

		for _, opt := range []Options{{Title: label}, {All: true, Title: label}} {
			d := parseHTML(t, exportHTML(t, l, opt))
			checkSafe(t, d, false)
			checkLinks(t, d)
			checkPrompts(t, l, d, l.Leaf().ID)
			if opt.All {
				checkPrompts(t, l, d, left)
				require.Empty(t, all(d.ids[anchorOf(l, left)], "mark", ""))
			}
			want := browserText
			n := d.ids[anchorOf(l, last)]
			require.Equal(t, want(user), text(all(n, "div", "t")[0]))
			require.Equal(t, want(label+" "+mark), text(all(n, "mark", "")[0]))
			// What was typed is the message; panto's block is folded as
			// panto's.
			un := d.ids[anchorOf(l, u)]
			added := all(un, "details", "added")
			require.Len(t, added, 1)
			require.Equal(t, want(system), text(all(added[0], "div", "t")[0]))
			divs := all(un, "div", "t")
			require.Equal(t, want(user), text(divs[len(divs)-1]))
			res := all(d.ids[anchorOf(l, tr)], "details", "result")[0]
			require.Equal(t, want(result), text(all(res, "pre", "")[0]))
			require.Equal(t, isErr, hasClass(res, "error"))
			for _, id := range msgs {
				n := d.ids[anchorOf(l, id)]
				if n == nil {
					continue // on the branch not exported
				}
				if m := all(n, "mark", ""); len(m) > 0 {
					require.Equal(t, want(label+" "+mark), text(m[0]))
				}
			}

			md := string(exportMarkdown(t, l, opt))
			outside := strings.Join(mdOutside(t, md), "\n")
			for _, role := range []string{"user", "assistant", "tool", "assistant"} {
				head := "### " + role + " · 09:00 · label: " + mdInline(label+" "+mark)
				require.Contains(t, outside, head)
			}
		}
	})
}

// anchorOf returns the HTML id of the entry id.
func anchorOf(l *sessionlog.Log, id string) string {
	for i := range l.Entries {
		if l.Entries[i].ID == id {
			return anchor(i)
		}
	}
	return ""
}
