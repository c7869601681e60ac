package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/mdhtml"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// HTML writes the session log as one self-contained HTML file: the active
// branch, or with opt.All the whole tree (see the package comment for the
// layout). It reads nothing but log and writes only to w.
func HTML(w io.Writer, log *sessionlog.Log, opt Options) error {
	p, err := newPlan(log, opt)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	h := &htmlWriter{w: bw}
	p.writeHTML(h)
	if err := bw.Flush(); err != nil { // bufio keeps the first write error
		return fmt.Errorf("export session log %s as HTML: %w", log.Path, err)
	}
	return nil
}

// markup is HTML that this package wrote. Only a constant converts to it
// without a conversion, so a string from the log can reach the page only
// through htmlWriter.text or attr, which escape it, or through mdhtml,
// which escapes every text of a reply's Markdown and writes only its own
// elements. There is no conversion to markup outside this package's
// constants.
//
// The page is written by hand rather than with html/template: the
// template's reflection made a 20,000-message export take ten times as
// long as the Markdown one, with 2.2 million allocations. The escaping it
// needs is simple, as every value is element text or a double-quoted
// attribute value, and no URL comes from the log (links are fragments of
// ids made of numbers; an image's data: URL is checked to be base64).
type markup string

// htmlWriter writes a page.
type htmlWriter struct{ w *bufio.Writer }

// textEscaper escapes element text; attrEscaper a double-quoted attribute
// value as well (html/template's escaping; quotes mean nothing in text,
// and a tool's JSON is full of them).
var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\x00", "\uFFFD")
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "\x00", "\uFFFD")
)

// failed reports whether a write to w has failed: bufio keeps the first
// error, and rendering the rest of a long session for nothing would keep
// a cancelled export running.
func failed(w *bufio.Writer) bool {
	_, err := w.Write(nil)
	return err != nil
}

// m writes markup.
func (h *htmlWriter) m(s markup) { h.w.WriteString(string(s)) }

// text writes s as text (bytes that are not UTF-8 as U+FFFD, so the page
// is UTF-8 whatever a label holds).
func (h *htmlWriter) text(s string) { textEscaper.WriteString(h.w, conversation.ValidText(s)) }

// num writes n.
func (h *htmlWriter) num(n int) { h.w.WriteString(strconv.Itoa(n)) }

// attr writes ` name="value"`, value escaped.
func (h *htmlWriter) attr(name markup, value string) {
	h.m(" " + name + `="`)
	attrEscaper.WriteString(h.w, conversation.ValidText(value))
	h.m(`"`)
}

// pre writes s in a <pre>. The newline after <pre> is the one an HTML
// parser drops, so a text that starts with a newline keeps it.
func (h *htmlWriter) pre(s string) {
	h.m("<pre>\n")
	h.text(s)
	h.m("</pre>")
}

// link writes <a href="#ID">, ID being prefix and n.
func (h *htmlWriter) link(class markup, prefix markup, n int) {
	h.m("<a")
	if class != "" {
		h.m(` class="` + class + `"`)
	}
	h.m(` href="#` + prefix)
	h.num(n)
	h.m(`">`)
}

func (p *plan) writeHTML(h *htmlWriter) {
	hd := p.log.Header
	h.m("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
		"<meta name=\"generator\" content=\"panto export\">\n<title>")
	h.text(p.title())
	h.m("</title>\n<style>\n" + css + "</style>\n</head>\n<body>\n<header>\n<h1>")
	h.text(p.title())
	h.m("</h1>\n<dl class=\"hd\">\n<dt>session</dt><dd><code>")
	h.text(hd.ID)
	h.m("</code></dd>\n<dt>created</dt><dd>")
	h.text(hd.Created.UTC().Format("2006-01-02 15:04:05 UTC"))
	h.m("</dd>\n<dt>cwd</dt><dd><code>")
	h.text(hd.Cwd)
	h.m("</code></dd>\n")
	if hd.ParentSession != "" || hd.ParentEntry != "" {
		h.m("<dt>forked from</dt><dd>")
		p.htmlForkedFrom(h)
		h.m("</dd>\n")
	}
	h.m("<dt>exported</dt><dd>")
	h.text(p.scope())
	h.m("; times in UTC</dd>\n")
	if p.used > 0 {
		h.m("<dt>used</dt><dd>")
		h.text(usageText(p.total) + " (" + plural(p.used, "request", "requests") + ")")
		h.m("</dd>\n")
	}
	if len(p.log.Warnings) > 0 {
		h.m("<dt>warnings</dt><dd>")
		for _, w := range p.log.Warnings {
			h.m("<div>")
			h.text(w)
			h.m("</div>")
		}
		h.m("</dd>\n")
	}
	h.m("</dl>\n")
	h.m("</header>\n")
	p.htmlSide(h)
	h.m("<main>\n")
	multi := len(p.branches) > 1
	for k, b := range p.branches {
		h.m(`<section class="branch" id="branch-`)
		h.num(k + 1)
		h.m("\">\n")
		if multi {
			h.m("<h2>Branch ")
			h.num(k + 1)
			if k == 0 {
				h.m(" (active: it ends at the log's last entry)")
			} else if !p.hasMessage(b) {
				h.m(" (no messages)")
			}
			h.m("</h2>\n")
			if b.fork >= 0 {
				h.m(`<p class="fork">forks after `)
				p.entryLink(h, b.fork)
				h.m(" of branch ")
				h.num(p.inBranch[b.fork])
				h.m(" (")
				h.text(p.describe(b.fork))
				h.m(")</p>\n")
			}
		}
		c := newClock(hd.Created, time.TimeOnly)
		for _, i := range b.entries {
			if failed(h.w) {
				return // the writer is gone (a cancelled export): stop now
			}
			p.htmlEntry(h, i, c)
		}
		h.m("</section>\n")
	}
	h.m("</main>\n")
	p.htmlStates(h)
	h.m("</body>\n</html>\n")
}

// entryLink writes a link to the entry at position i: "entry N".
func (p *plan) entryLink(h *htmlWriter, i int) {
	h.link("", "e-", entryNumber(i))
	h.m("entry ")
	h.num(entryNumber(i))
	h.m("</a>")
}

// htmlRef writes a reference to the entry id: a link "entry N" (with its
// branch when the page has several, and with describe, what it is) when
// it is exported; else its number, or its id when the log has no such
// entry, and why there is no link.
func (p *plan) htmlRef(h *htmlWriter, id string, describe bool) {
	k := p.find(id)
	if k < 0 {
		if k = p.at(id); k >= 0 {
			h.m("entry ")
			h.num(entryNumber(k))
		} else {
			h.m("entry <code>")
			h.text(id)
			h.m("</code>")
		}
		h.text(elsewhere(k))
		return
	}
	p.entryLink(h, k)
	if len(p.branches) > 1 {
		h.m(" of branch ")
		h.num(p.inBranch[k])
	}
	if describe {
		h.m(" (")
		h.text(p.describe(k))
		h.m(")")
	}
}

// htmlForkedFrom writes where a forked session comes from: the session
// and the entry of its log (which a fork keeps, id and all: a link to it
// when it is exported).
func (p *plan) htmlForkedFrom(h *htmlWriter) {
	hd := p.log.Header
	h.m("session <code>")
	h.text(orUnrecorded(hd.ParentSession))
	h.m("</code>")
	if hd.ParentEntry == "" {
		return
	}
	h.m(" at its entry <code>")
	h.text(hd.ParentEntry)
	h.m("</code>")
	if k := p.at(hd.ParentEntry); k >= 0 {
		h.m(", here ")
		p.htmlRef(h, hd.ParentEntry, false)
	}
}

// htmlStates writes each distinct prompt state once, as the section
// prompt-N that messages link to.
func (p *plan) htmlStates(h *htmlWriter) {
	if len(p.states) == 0 {
		return
	}
	h.m("<section class=\"prompts\">\n<h2>System prompt states</h2>\n")
	for k, s := range p.states {
		h.m(`<section class="prompt" id="prompt-`)
		h.num(k + 1)
		h.m("\">\n<h3>prompt v")
		h.num(k + 1)
		h.m("</h3>\n<p class=\"h\">first in effect at ")
		p.entryLink(h, s.first)
		n := 0
		for _, b := range s.blocks {
			n += len(b.Text)
		}
		h.m("; ")
		h.text(plural(len(s.blocks), "block", "blocks") + ", " + sizeText(n))
		h.m("</p>\n")
		if len(s.blocks) == 0 {
			h.m("<p>(empty: no system prompt)</p>\n")
		} else {
			h.m("<ol>\n")
			for _, b := range s.blocks {
				h.m(`<li><div class="h"><span class="src">`)
				h.text(sourceOrNone(b.Source))
				h.m("</span>")
				if b.Key != "" {
					h.m(" · section <code>")
					h.text(b.Key)
					h.m("</code>")
				}
				h.m("</div>")
				h.pre(b.Text)
				h.m("</li>\n")
			}
			h.m("</ol>\n")
		}
		h.m("</section>\n")
	}
	h.m("</section>\n")
}

func sourceOrNone(s string) string {
	if s == "" {
		return "(source not recorded)"
	}
	return s
}

// htmlEntry writes the entry at position i: a message as an <article>, a
// system message as one event line per change, anything else as an event
// line.
func (p *plan) htmlEntry(h *htmlWriter, i int, c *clock) {
	e := &p.log.Entries[i]
	when := func() bool { // the time, if recorded
		t := c.format(e.Time)
		if t != "" {
			h.m("<time")
			h.attr("datetime", e.Time.UTC().Format(time.RFC3339Nano))
			h.m(">")
			h.text(t)
			h.m("</time>")
		}
		return t != ""
	}
	label := func() {
		if l := p.label(i); l != "" {
			h.m(" <mark>")
			h.text(l)
			h.m("</mark>")
		}
	}
	meta := func() { // after the role: the time and the label
		if !e.Time.IsZero() {
			h.m(" ")
		}
		when()
		label()
	}
	permalink := func() {
		h.m(` <a class="a" href="#e-`)
		h.num(entryNumber(i))
		h.m(`"`)
		h.attr("title", "entry "+strconv.Itoa(entryNumber(i))+" · id "+e.ID)
		h.m(">#</a>")
	}
	switch m := e.Message; {
	case m != nil && m.Role == conversation.RoleSystem:
		p.htmlSystem(h, i, meta, permalink)
	case m != nil:
		role := string(m.Role) // one of four in a log as Read it, but escaped anyway
		h.m(`<article class="m `)
		h.text(role)
		h.m(`" id="e-`)
		h.num(entryNumber(i))
		h.m("\">\n<div class=\"h\"><b class=\"role\">")
		h.text(role)
		h.m("</b>")
		meta()
		h.m(" ")
		h.link("p", "prompt-", p.state[i])
		h.m("prompt v")
		h.num(p.state[i])
		h.m("</a>")
		permalink()
		h.m("</div>\n")
		for _, b := range m.Content {
			p.htmlBlock(h, m.Role, b)
		}
		h.m("</article>\n")
	default:
		p.htmlEvent(h, i, when, label, permalink)
	}
	if tu, ok := p.turns[i]; ok {
		h.m(`<p class="ev use">`)
		h.text(tu.text())
		h.m("</p>\n")
	}
	if forks := p.forks[i]; len(forks) > 0 {
		h.m(`<p class="fork">↳`)
		for _, k := range forks {
			h.m(" ")
			h.link("", "branch-", k)
			h.m("branch ")
			h.num(k)
			h.m("</a>")
		}
		h.m(" forks after this entry</p>\n")
	}
	for _, k := range p.leftBy[i] {
		if p.inBranch[k] == 0 {
			continue
		}
		h.m(`<p class="fork">↩ left by the move at `)
		p.htmlRef(h, p.log.Entries[k].ID, false)
		h.m("</p>\n")
	}
}

// htmlSystem writes a system entry: per change, its source and what it
// did, a link to the prompt it made, and its text folded.
func (p *plan) htmlSystem(h *htmlWriter, i int, meta, permalink func()) {
	h.m(`<div class="ev sys" id="e-`)
	h.num(entryNumber(i))
	h.m("\">\n")
	counts, changed := p.lines(i)
	for k, ch := range p.changes[i] {
		line := func() {
			h.m("system")
			meta()
			h.m(` · <span class="src">`)
			h.text(ch.sourceText())
			h.m("</span> ")
			h.text(ch.verb())
			if ch.hasKey() {
				h.m(" <code>")
				h.text(ch.key)
				h.m("</code>")
			}
			if n := ch.note(); n != "" {
				h.m(" ")
				h.text(n)
			}
			if k == 0 {
				h.m(` · <span class="lines">`)
				h.text(counts)
				h.m("</span>")
			}
			h.m(" ")
			h.link("p", "prompt-", p.state[i])
			h.m("→ prompt v")
			h.num(p.state[i])
			h.m("</a>")
			permalink()
		}
		if ch.text == "" {
			h.m("<div>")
			line()
			h.m("</div>\n")
			continue
		}
		h.m("<details><summary>")
		line()
		h.m("</summary>")
		h.pre(ch.text)
		h.m("</details>\n")
	}
	if changed {
		h.m("<details><summary>what changed in the prompt</summary>")
		htmlDiff(h, p.diffs[i], false)
		h.m("</details>\n")
	}
	h.m("</div>\n")
}

// htmlEvent writes an entry that is not a message as an event line, with
// what it holds folded.
func (p *plan) htmlEvent(h *htmlWriter, i int, when func() bool, label, permalink func()) {
	e := &p.log.Entries[i]
	var line func()
	var detail string
	pre := true
	say := func(s string) func() { return func() { h.text(s) } }
	switch {
	case e.Type == sessionlog.TypeLifecycle && e.Lifecycle != nil:
		line = say(lifecycleText(e.Lifecycle))
	case e.Type == sessionlog.TypeModelChange && e.ModelChange != nil:
		line = say(modelText(e.ModelChange))
	case e.Type == sessionlog.TypeCompaction && e.Compaction != nil:
		cp := e.Compaction
		detail, pre = cp.Summary, false
		line = func() {
			h.m("compaction: the messages before ")
			p.htmlRef(h, cp.FirstKeptID, false)
			h.m(" were summarised")
			if cp.TokensBefore > 0 {
				h.text(" (about " + groupDigits(cp.TokensBefore) + " tokens)")
			}
		}
	case e.Type == sessionlog.TypeMove && e.Move != nil:
		line = func() {
			h.text(p.moveVerb(i))
			p.htmlRef(h, e.ParentID, true)
			h.m(", leaving ")
			p.htmlRef(h, e.Move.From, false)
		}
	case e.Type == sessionlog.TypeBranchSummary && e.BranchSummary != nil:
		bs := e.BranchSummary
		detail, pre = bs.Summary, false
		line = func() {
			h.m("summary of the branch left at ")
			p.htmlRef(h, bs.From, false)
			h.m(" · sent to the model as a user message here")
		}
	case e.Type == sessionlog.TypeLabel && e.Label != nil:
		lb := e.Label
		line = func() {
			if lb.Text == "" {
				h.m("removed the label of ")
			} else {
				h.text("label “" + lb.Text + "” on ")
			}
			p.htmlRef(h, lb.Target, true)
			h.text(p.labelNote(lb.Target, lb.Text))
		}
	case e.Type == sessionlog.TypeRequestSettings && e.RequestSettings != nil:
		line = say(requestText(e.RequestSettings))
	case e.Type == sessionlog.TypePermissions && e.Permissions != nil:
		line = say(permissionsText(e.Permissions))
	case e.Type == sessionlog.TypeTools && e.Tools != nil:
		line = say(toolsText(e.Tools))
	case e.Type == sessionlog.TypeSessionInfo && e.SessionInfo != nil:
		line = say(sessionInfoText(e.SessionInfo))
	case e.Type == sessionlog.TypeExtensionData && e.ExtensionData != nil:
		line = say("extension data of " + e.ExtensionData.Extension)
		if detail = indentJSON(e.ExtensionData.Data); detail == "" {
			detail = "null"
		}
	default:
		line = say("entry of type " + strconv.Quote(string(e.Type)) + " (not known to this panto)")
		detail = indentJSON(e.Raw)
	}
	whole := func() {
		if when() {
			h.m(" · ")
		}
		line()
		label()
		permalink()
	}
	h.m(`<div class="ev" id="e-`)
	h.num(entryNumber(i))
	h.m(`">`)
	switch {
	case detail == "":
		whole()
	case pre:
		h.m("<details><summary>")
		whole()
		h.m("</summary>")
		h.pre(detail)
		h.m("</details>")
	default:
		h.m("<details><summary>")
		whole()
		h.m(`</summary><div class="t">`)
		h.text(detail)
		h.m("</div></details>")
	}
	h.m("</div>\n")
}

// htmlBlock writes a content block of a message of the role.
func (p *plan) htmlBlock(h *htmlWriter, role conversation.Role, b conversation.Block) {
	switch b.Type {
	case conversation.TypeText:
		if b.Added != "" {
			// Not typed: panto put it there (a USER_PROMPT.md). Folded,
			// and said so, so the message reads as what was typed.
			h.m(`<details class="added"><summary>added by panto, not typed: <span class="src">`)
			h.text(b.Added)
			h.m(`</span></summary><div class="t">`)
			h.text(b.Text)
			h.m("</div></details>\n")
			return
		}
		if role == conversation.RoleAssistant {
			htmlReply(h, b.Text)
			return
		}
		h.m(`<div class="t">`)
		h.text(b.Text)
		h.m("</div>\n")
	case conversation.TypeThinking:
		h.m(`<details class="think"><summary>thinking</summary><div class="t">`)
		h.text(b.Thinking)
		h.m("</div></details>\n")
	case conversation.TypeRedactedThinking:
		h.m(`<div class="ev">redacted thinking (`)
		h.text(sizeText(len(b.Data)))
		h.m(")</div>\n")
	case conversation.TypeToolUse:
		h.m(`<details class="call"><summary>tool call <b>`)
		h.text(b.Name)
		h.m("</b> <code>")
		h.text(b.ID)
		h.m(`</code> <span class="pv">`)
		h.text(excerpt(string(b.Input), 80))
		h.m("</span></summary>")
		h.pre(indentJSON(b.Input))
		h.m("</details>\n")
	case conversation.TypeToolResult:
		h.m(`<details class="result`)
		if b.IsError {
			h.m(" error")
		}
		h.m(`"><summary>`)
		if b.IsError {
			h.m(`<span class="err">✗ error</span> · `)
		}
		h.m("result of <b>")
		h.text(orQuestion(p.toolName(b.ToolUseID)))
		h.m("</b> <code>")
		h.text(b.ToolUseID)
		h.m(`</code> <span class="pv">`)
		h.text(excerpt(b.ResultText(), 80))
		h.m("</span></summary>")
		if len(b.Content) == 0 {
			h.m(`<div class="ev">(no output)</div>`)
		}
		if head, hunks, cutShort, ok := resultDiff(p.toolName(b.ToolUseID), b); ok {
			h.pre(head)
			htmlDiff(h, hunks, cutShort)
			h.m("</details>\n")
			return
		}
		for _, c := range b.Content {
			if c.Type == conversation.TypeImage {
				htmlImage(h, c)
			} else {
				h.pre(c.Text)
			}
		}
		h.m("</details>\n")
	case conversation.TypeImage:
		htmlImage(h, b)
		h.m("\n")
	default:
		h.m(`<div class="ev">`)
		h.text(string(b.Type) + " block")
		h.m("</div>\n")
	}
}

// htmlReply writes a reply's text: its Markdown rendered (mdhtml, from
// the parse the UI renders), and the text as written folded after it, to
// copy whole.
func htmlReply(h *htmlWriter, text string) {
	h.m(`<div class="md">` + "\n")
	mdhtml.Render(h.w, conversation.ValidText(text))
	h.m(`</div>` + "\n" + `<details class="src"><summary>as written</summary><div class="t">`)
	h.text(text)
	h.m("</div></details>\n")
}

// htmlImage writes an image as its own data: URL, or a placeholder when
// that would not be a plain raster image (see imageURL).
func htmlImage(h *htmlWriter, b conversation.Block) {
	alt := "image " + b.MediaType + ", " + sizeText(imageBytes(b.Data))
	if u := imageURL(b); u != "" {
		h.m("<img")
		h.attr("src", u)
		h.attr("alt", alt)
		h.m(">")
		return
	}
	h.m(`<div class="ev">[`)
	h.text(alt)
	h.m(": not shown]</div>")
}

// imageURL returns the data: URL of an image block, or "" when its media
// type is not PNG, JPEG, GIF or WebP or its data is not base64: such an
// image is shown as a placeholder (an SVG could hold a script or fetch).
func imageURL(b conversation.Block) string {
	switch b.MediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return ""
	}
	if b.Data == "" {
		return ""
	}
	for i := 0; i < len(b.Data); i++ {
		switch c := b.Data[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '=':
		default:
			return ""
		}
	}
	return "data:" + b.MediaType + ";base64," + b.Data
}
