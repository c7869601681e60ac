package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// hostile is text that would be markup, a comment, a CDATA end or an
// attribute break if it were not escaped.
const hostile = `</script><img src=x onerror=alert(1)><!-- ]]> " ' & <script>alert(2)</script> <a href="https://evil.example/x">x</a> <style>*{background:url(https://evil.example/y)}</style> javascript:alert(3)`

// hostileLog puts hostile text in every field a log lets one write.
func hostileLog(t *testing.T) *builder {
	b := newForkBuilder(t, "/tmp/"+hostile, hostile, hostile)
	b.msg("", conversation.SystemMessage(hostile, conversation.ModeAppend).WithSource(hostile))
	b.msg("", conversation.KeyedSystemMessage("k:x", hostile).WithSource(hostile))
	b.add("lifecycle", "", map[string]any{"event": hostile, "reseeded": true, "extensions": []string{hostile}})
	b.add("model_change", "", map[string]any{"provider": hostile, "model": hostile})
	user := b.msg(`u" onmouseover="alert(1)`, conversation.UserText(hostile))
	b.msg("", conversation.Message{Role: conversation.RoleAssistant, Content: []conversation.Block{
		conversation.Thinking(hostile, hostile),
		conversation.RedactedThinking(hostile),
		conversation.Text(hostile),
		conversation.ToolUse(hostile, hostile, json.RawMessage(`{"cmd":`+mustJSON(hostile)+`}`)),
	}})
	b.msg("", toolResult(hostile, hostile, true))
	b.add("extension_data", "", map[string]any{"extension": hostile, "data": map[string]string{hostile: hostile}})
	b.add("compaction", "", map[string]any{"summary": hostile, "first_kept_id": hostile, "tokens_before": 5})
	b.add(hostile, "", map[string]any{"summary": hostile})
	b.msg("", conversation.KeyedSystemMessage("k:x", "").WithSource(hostile))
	b.msg("", conversation.SystemMessage(hostile, conversation.ModeReplace))
	b.msg("", conversation.AssistantText("```\n"+hostile+"\n<!--\n"))
	b.label(user, hostile)                             // e14
	b.label("e2", hostile)                             // e15
	b.label("e3", hostile)                             // e16
	b.label("e3", "")                                  // e17
	b.summary(hostile, hostile)                        // e18
	b.add("move", "", map[string]any{"from": hostile}) // e19: to e18, from an entry the log does not hold
	return b
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Every text is escaped: hostile text creates no element, attribute or
// comment, and shows as written.
func TestHTMLEscapes(t *testing.T) {
	t.Parallel()
	l := hostileLog(t).mustLog()
	out := exportHTML(t, l, Options{All: true, Title: hostile})
	s := string(out)
	for _, bad := range []string{"<script", "<img", "<!--", "]]>", "<a href=\"http", "onmouseover=\""} {
		require.NotContains(t, s, bad)
	}
	d := parseHTML(t, out)
	checkSafe(t, d, false)
	checkLinks(t, d)

	// The hostile text is there as text, whole, in each place.
	var texts int
	walk(d.root, func(n *html.Node) {
		if n.Type == html.TextNode && strings.Contains(n.Data, hostile) {
			texts++
		}
	})
	require.GreaterOrEqual(t, texts, 20)
	require.Equal(t, hostile, text(all(d.root, "title", "")[0]))
	require.Equal(t, hostile, text(all(d.root, "h1", "")[0]))
	user := d.ids["e-5"]
	require.Equal(t, "entry 5 · id u\" onmouseover=\"alert(1)", attr(all(user, "a", "a")[0], "title"))
	require.Equal(t, hostile, text(all(user, "div", "t")[0]))
	require.Equal(t, hostile, text(all(user, "mark", "")[0]))
	require.Contains(t, text(d.ids["e-1"]), hostile)                    // the source
	require.Contains(t, text(all(d.ids["e-1"], "pre", "")[0]), hostile) // the text
	require.Contains(t, oneLine(d.ids["e-3"]), "lifecycle "+strings.Join(strings.Fields(hostile), " "))
	require.Contains(t, text(d.ids["e-10"]), `entry of type "`+strings.ReplaceAll(hostile, `"`, `\"`)+`"`)
	require.Equal(t, "```\n"+hostile+"\n<!--\n", text(all(d.ids["e-13"], "div", "t")[0]))
	one := strings.Join(strings.Fields(hostile), " ")
	require.Contains(t, oneLine(all(d.root, "header", "")[0]), "forked fromsession "+one+" at its entry "+one)
	require.Equal(t, hostile, text(all(d.ids["e-2"], "mark", "")[0]))
	require.Contains(t, text(d.ids["e-14"]), "label “"+hostile+"” on entry 5")
	require.Contains(t, text(d.ids["e-16"]), "(replaced by a later label entry)")
	require.Contains(t, text(d.ids["e-18"]), "summary of the branch left at entry "+hostile+" (not in this log)")
	require.Equal(t, hostile, text(all(d.ids["e-18"], "div", "t")[0]))
	require.Contains(t, text(d.ids["e-19"]), "leaving entry "+hostile+" (not in this log)")
	for _, pre := range all(d.root, "pre", "") {
		if hasClass(pre, "diff") {
			// A diff's lines are spans, their changed words ins or del.
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode {
						require.Contains(t, []string{"span", "ins", "del"}, c.Data, "a diff holds only its lines")
						walk(c)
					} else {
						require.Equal(t, html.TextNode, c.Type, "a diff holds only its lines")
					}
				}
			}
			walk(pre)
			continue
		}
		for c := pre.FirstChild; c != nil; c = c.NextSibling {
			require.Equal(t, html.TextNode, c.Type, "a <pre> holds only text")
		}
	}
}

// In Markdown, hostile text cannot leave its fence or open one that
// swallows what follows.
func TestMarkdownEscapes(t *testing.T) {
	t.Parallel()
	b := hostileLog(t)
	b.msg("", conversation.UserText("````\nfour ticks, never closed"))
	b.msg("", toolResult("t", "``````\nsix ticks\n```", false))
	b.msg("", conversation.UserText("- a list\n  ```\n  fenced in the item\n```\n# not a heading of ours"))
	md := string(exportMarkdown(t, b.mustLog(), Options{Title: hostile}))
	outside := mdOutside(t, md)
	var heads int
	for _, l := range outside {
		if strings.HasPrefix(l, "### ") {
			heads++
		}
	}
	require.Equal(t, 7, heads) // every message heading is outside code
	require.Contains(t, md, "\n````\nfour ticks, never closed\n````\n")
	require.Contains(t, md, "\n```````text\n``````\nsix ticks\n```\n```````\n")
	require.Contains(t, md, "````text\n- a list\n  ```\n  fenced in the item\n```\n# not a heading of ours\n````\n")
	// The hostile title, label and source are inline text, on one line.
	require.Contains(t, md, "# \\</script\\>\\<img src=x onerror=alert(1)\\>\\<\\!-- \\]\\]\\> \" ' \\& ")
	for _, l := range outside {
		require.False(t, strings.HasPrefix(strings.TrimLeft(l, "> "), "<"), "a line outside code opens raw HTML: %q", l)
	}
}
