package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog"
)

// Markdown writes the session log as Markdown, for pasting into an issue:
// the active branch, or with opt.All the whole tree, one section per
// branch; the system prompt at the end of each exported branch comes last
// (see the package comment).
func Markdown(w io.Writer, log *sessionlog.Log, opt Options) error {
	p, err := newPlan(log, opt)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	md := &mdWriter{w: bw, p: p}
	md.page()
	if err := bw.Flush(); err != nil { // bufio keeps the first write error
		return fmt.Errorf("export session log %s as Markdown: %w", log.Path, err)
	}
	return nil
}

type mdWriter struct {
	w *bufio.Writer
	p *plan
	// started is set once a block is written.
	started bool
}

// para writes s as a block, after a blank line if it is not the first:
// every block ends at a blank line, which ends what a message's text may
// have left open there (a list, a quote, a table, an HTML block).
func (m *mdWriter) para(s string) {
	if m.started {
		m.w.WriteString("\n")
	}
	m.started = true
	m.w.WriteString(strings.TrimRight(conversation.ValidText(s), "\n"))
	m.w.WriteString("\n")
}

func (m *mdWriter) page() {
	p, h := m.p, m.p.log.Header
	m.para("# " + mdInline(p.title()))
	var sb strings.Builder
	fmt.Fprintf(&sb, "- session: %s\n", mdCode(h.ID))
	fmt.Fprintf(&sb, "- created: %s\n", h.Created.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&sb, "- cwd: %s\n", mdCode(h.Cwd))
	if h.ParentSession != "" || h.ParentEntry != "" {
		fmt.Fprintf(&sb, "- forked from: %s\n", m.forkedFrom())
	}
	fmt.Fprintf(&sb, "- exported: %s; times in UTC\n", mdInline(p.scope()))
	if p.used > 0 {
		fmt.Fprintf(&sb, "- used: %s (%s)\n", usageText(p.total), plural(p.used, "request", "requests"))
	}
	if p.extData > 0 {
		fmt.Fprintf(&sb, "- not shown: %s\n", plural(p.extData, "extension_data entry", "extension_data entries"))
	}
	if !p.opt.Prompt && p.hasGuidance() {
		sb.WriteString("- not shown: the tool guidance in the system prompt (`--prompt` includes it)\n")
	}
	for _, w := range p.log.Warnings {
		fmt.Fprintf(&sb, "- warning: %s\n", mdInline(w))
	}
	m.para(sb.String())
	multi := len(p.branches) > 1
	for k, b := range p.branches {
		if multi {
			head := "## Branch " + strconv.Itoa(k+1)
			if k == 0 {
				head += " (active)"
			} else if !p.hasMessage(b) {
				head += " (no messages)"
			}
			m.para(head)
			if b.fork >= 0 {
				m.para(fmt.Sprintf("_forks after entry %d of branch %d (%s)_", entryNumber(b.fork), p.inBranch[b.fork], mdInline(p.describe(b.fork))))
			}
		}
		c := newClock(h.Created, "15:04")
		for _, i := range b.entries {
			if failed(m.w) {
				return // the writer is gone (a cancelled export): stop now
			}
			m.entry(i, c)
		}
	}
	m.prompts()
}

// prompts writes the system prompt at the end of each exported branch.
func (m *mdWriter) prompts() {
	p := m.p
	shown := map[int]int{} // state -> the branch it was shown for
	for k, b := range p.branches {
		if len(b.entries) == 0 {
			continue
		}
		s := p.state[b.entries[len(b.entries)-1]]
		switch {
		case len(p.branches) == 1:
			m.para("## System prompt at the end of the branch")
		case shown[s] > 0:
			m.para(fmt.Sprintf("Branch %d ends with the same system prompt as branch %d.", k+1, shown[s]))
			continue
		default:
			m.para(fmt.Sprintf("## System prompt at the end of branch %d", k+1))
		}
		shown[s] = k + 1
		blocks := p.states[s-1].blocks
		if len(blocks) == 0 {
			m.para("_(empty: no system prompt)_")
		}
		for n, blk := range blocks {
			line := fmt.Sprintf("**%d.** %s", n+1, mdInline(sourceOrNone(blk.Source)))
			if blk.Key != "" {
				line += " · section " + mdCode(blk.Key)
			}
			m.para(line)
			if isGuidance(blk.Key) && !p.opt.Prompt {
				m.para(guidanceLeftOut(blk.Text))
				continue
			}
			m.para(fence(blk.Text, "text"))
		}
	}
}

func (m *mdWriter) entry(i int, c *clock) {
	p := m.p
	e := &p.log.Entries[i]
	t := c.format(e.Time)
	suffix := ""
	if l := p.label(i); l != "" {
		suffix = " · label: " + mdInline(l)
	}
	switch msg := e.Message; {
	case msg != nil && msg.Role == conversation.RoleSystem:
		counts, changed := p.lines(i)
		for k, ch := range p.changes[i] {
			line := "**system**"
			if t != "" {
				line += " · " + t
			}
			line += " · **" + mdInline(strings.TrimSpace(ch.sourceText())) + "** " + ch.verb()
			if ch.hasKey() {
				line += " " + mdCode(ch.key)
			}
			if n := ch.note(); n != "" {
				line += " " + n
			}
			if k == 0 {
				line += " · " + counts
			}
			line += suffix
			switch {
			case ch.text == "":
				m.para(quote(line))
			case isGuidance(ch.key) && !p.opt.Prompt:
				m.para(quote(line + "\n\n" + guidanceLeftOut(ch.text)))
			default:
				m.para(quote(line + "\n\n" + fence(ch.text, "text")))
			}
		}
		if hunks := p.mdPromptDiff(i); changed && len(hunks) > 0 {
			m.para(quote("what changed in the prompt:\n\n" + mdDiff(hunks, false)))
		}
	case msg != nil:
		head := "### " + string(msg.Role)
		if t != "" {
			head += " · " + t
		}
		m.para(head + suffix)
		for _, b := range msg.Content {
			m.block(b)
		}
	default:
		m.event(i, t, suffix)
	}
	if tu, ok := p.turns[i]; ok {
		m.para(quote("_" + tu.text() + "_"))
	}
	for _, k := range p.forks[i] {
		m.para(quote(fmt.Sprintf("↳ branch %d forks after this entry", k)))
	}
	for _, k := range p.leftBy[i] {
		if p.inBranch[k] != 0 {
			m.para(quote("↩ left by the move at " + m.ref(p.log.Entries[k].ID, false)))
		}
	}
}

// ref is a reference to the entry id: "entry N", with its branch when the
// document has several and with describe what it is; or, when it is not
// exported, why the reader will not find it.
func (m *mdWriter) ref(id string, describe bool) string {
	p := m.p
	k := p.find(id)
	if k < 0 {
		if k = p.at(id); k >= 0 {
			return "entry " + strconv.Itoa(entryNumber(k)) + elsewhere(k)
		}
		return "entry " + mdCode(id) + elsewhere(k)
	}
	s := "entry " + strconv.Itoa(entryNumber(k))
	if len(p.branches) > 1 {
		s += " of branch " + strconv.Itoa(p.inBranch[k])
	}
	if describe {
		s += " (" + mdInline(p.describe(k)) + ")"
	}
	return s
}

// forkedFrom says where a forked session comes from: the session and the
// entry of its log, which the fork keeps (id and all).
func (m *mdWriter) forkedFrom() string {
	h := m.p.log.Header
	s := "session " + mdCode(orUnrecorded(h.ParentSession))
	if h.ParentEntry == "" {
		return s
	}
	s += " at its entry " + mdCode(h.ParentEntry)
	if m.p.at(h.ParentEntry) >= 0 {
		s += ", here " + m.ref(h.ParentEntry, false)
	}
	return s
}

func (m *mdWriter) event(i int, t, suffix string) {
	e := &m.p.log.Entries[i]
	if t != "" {
		t += " · "
	}
	switch {
	case e.Type == sessionlog.TypeLifecycle && e.Lifecycle != nil:
		m.para(quote(t + mdInline(lifecycleText(e.Lifecycle)) + suffix))
	case e.Type == sessionlog.TypeModelChange && e.ModelChange != nil:
		m.para(quote(t + mdInline(modelText(e.ModelChange)) + suffix))
	case e.Type == sessionlog.TypeCompaction && e.Compaction != nil:
		c := e.Compaction
		line := t + "**compaction**: the messages before " + m.ref(c.FirstKeptID, true) + " were summarised"
		if c.TokensBefore > 0 {
			line += " (about " + groupDigits(c.TokensBefore) + " tokens)"
		}
		m.para(quote(line + suffix + "\n\n" + fence(c.Summary, "text")))
	case e.Type == sessionlog.TypeMove && e.Move != nil:
		m.para(quote(t + "**" + strings.TrimSpace(m.p.moveVerb(i)) + "** " + m.ref(e.ParentID, true) + ", leaving " + m.ref(e.Move.From, false) + suffix))
	case e.Type == sessionlog.TypeBranchSummary && e.BranchSummary != nil:
		bs := e.BranchSummary
		line := t + "**summary of the branch left** at " + m.ref(bs.From, false) + " · sent to the model as a user message here"
		m.para(quote(line + suffix + "\n\n" + fence(bs.Summary, "text")))
	case e.Type == sessionlog.TypeLabel && e.Label != nil:
		lb := e.Label
		line := t + "**removed the label** of "
		if lb.Text != "" {
			line = t + "**label** “" + mdInline(lb.Text) + "” on "
		}
		m.para(quote(line + m.ref(lb.Target, true) + m.p.labelNote(lb.Target, lb.Text) + suffix))
	case e.Type == sessionlog.TypeRequestSettings && e.RequestSettings != nil:
		m.para(quote(t + mdInline(requestText(e.RequestSettings)) + suffix))
	case e.Type == sessionlog.TypePermissions && e.Permissions != nil:
		m.para(quote(t + mdInline(permissionsText(e.Permissions)) + suffix))
	case e.Type == sessionlog.TypeTools && e.Tools != nil:
		m.para(quote(t + mdInline(toolsText(e.Tools)) + suffix))
	case e.Type == sessionlog.TypeSessionInfo && e.SessionInfo != nil:
		m.para(quote(t + mdInline(sessionInfoText(e.SessionInfo)) + suffix))
	case e.Type == sessionlog.TypeExtensionData:
		// Left out: counted in the header.
	default:
		m.para(quote(t + "entry of type " + mdCode(string(e.Type)) + " (not known to this panto)" + suffix))
	}
}

func (m *mdWriter) block(b conversation.Block) {
	switch b.Type {
	case conversation.TypeText:
		if b.Added != "" {
			// Not typed: panto put it there (a USER_PROMPT.md).
			m.para(quote("_added by panto, not typed:_ **" + mdInline(strings.TrimSpace(b.Added)) + "**\n\n" + fence(b.Text, "text")))
			return
		}
		if strings.TrimSpace(b.Text) != "" {
			m.para(mdText(b.Text))
		}
	case conversation.TypeThinking:
		m.para("**thinking**")
		m.para(fence(b.Thinking, "text"))
	case conversation.TypeRedactedThinking:
		m.para("_redacted thinking (" + sizeText(len(b.Data)) + ")_")
	case conversation.TypeToolUse:
		m.para("**tool call** " + mdCode(b.Name) + " · " + mdCode(b.ID))
		m.para(fence(indentJSON(b.Input), "json"))
	case conversation.TypeToolResult:
		line := "**result** of " + mdCode(orQuestion(m.p.toolName(b.ToolUseID))) + " · " + mdCode(b.ToolUseID)
		if b.IsError {
			line += " · **error**"
		}
		m.para(line)
		if len(b.Content) == 0 {
			m.para("_(no output)_")
		}
		if head, hunks, cutShort, ok := resultDiff(m.p.toolName(b.ToolUseID), b); ok {
			m.para(fence(head, "text"))
			m.para(mdDiff(hunks, cutShort))
			return
		}
		for _, c := range b.Content {
			switch c.Type {
			case conversation.TypeImage:
				m.para(imagePlaceholder(c))
			default:
				m.para(fence(c.Text, "text"))
			}
		}
	case conversation.TypeImage:
		m.para(imagePlaceholder(b))
	default:
		m.para("_" + mdInline(string(b.Type)) + " block_")
	}
}

func orQuestion(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func imagePlaceholder(b conversation.Block) string {
	return "_[image " + mdInline(b.MediaType) + ", " + sizeText(imageBytes(b.Data)) + ": not included]_"
}

// normalizeNewlines makes \r\n and a lone \r (both line endings to
// Markdown) into \n, so that every line the writer prefixes is one line.
func normalizeNewlines(s string) string {
	if !strings.ContainsRune(s, '\r') {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// fence returns s as a fenced code block: its fence is a run of backticks
// longer than any in s (three at least), so no line of s can close it.
func fence(s, info string) string {
	s = normalizeNewlines(s)
	n := max(3, longestRun(s, '`')+1)
	f := strings.Repeat("`", n)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return f + info + "\n" + s + f
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// quote returns s as a blockquote: each line prefixed with "> ".
func quote(s string) string {
	lines := strings.Split(normalizeNewlines(s), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

// mdEscaped are the characters mdInline escapes: those that could start
// emphasis, code, a link or image, raw HTML or an entity, strikethrough,
// math, a table cell, or close a heading.
const mdEscaped = "\\`*_[]<>&!|~$#"

// mdInline returns s as inline Markdown text that shows as written: on one
// line, its Markdown characters escaped.
func mdInline(s string) string {
	var sb strings.Builder
	for i, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			sb.WriteByte(' ')
		case r == '_' && i > 0 && i+1 < len(s) && alnum(s[i-1]) && alnum(s[i+1]):
			sb.WriteByte('_') // inside a word it emphasises nothing: APPEND_SYSTEM.md
		case r < 0x80 && strings.ContainsRune(mdEscaped, r):
			sb.WriteByte('\\')
			sb.WriteRune(r)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// mdCode returns s as a code span, its delimiter longer than any run of
// backticks in s.
func mdCode(s string) string {
	s = strings.Join(strings.Fields(normalizeNewlines(s)), " ")
	if s == "" {
		return "(none)"
	}
	d := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.Contains(s, "`") {
		return d + " " + s + " " + d
	}
	return d + s + d
}

// mdText returns a message's text for Markdown: as written, since it is
// Markdown itself, but such that it cannot swallow what follows it. A
// fenced code block it leaves open is closed after it; a line that would
// open an HTML block (which can run past a blank line: a comment, <pre>,
// <script>, ...) has its "<" escaped. That reasoning holds for fences at
// the start of a line; a text with a fence line anywhere else (indented,
// in a list item or a blockquote, where Markdown's nesting rules decide
// what it belongs to) is shown in a fenced code block instead.
func mdText(s string) string {
	s = normalizeNewlines(s)
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if fenceLike(l) && !strings.HasPrefix(l, "```") && !strings.HasPrefix(l, "~~~") {
			return fence(s, "text")
		}
	}
	var open string // the fence of the open code block, "" when none
	for i, l := range lines {
		switch {
		case open != "":
			if closesFence(l, open) {
				open = ""
			}
		case opensFence(l) != "":
			open = opensFence(l)
		default:
			lines[i] = escapeHTMLStart(l)
		}
	}
	out := strings.Join(lines, "\n")
	if open != "" {
		out = strings.TrimRight(out, "\n") + "\n" + open
	}
	return out
}

// fenceLike reports whether l, past any indentation and the markers of
// blockquotes and list items, starts with a code fence.
func fenceLike(l string) bool {
	l = strings.TrimLeft(l, " \t>*+-.)0123456789")
	return strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~")
}

// opensFence returns the fence that l, at the start of a line, opens (the
// run of backticks or tildes), or "": three or more, and for backticks no
// backtick after them.
func opensFence(l string) string {
	if l == "" || (l[0] != '`' && l[0] != '~') {
		return ""
	}
	n := longestPrefix(l, l[0])
	if n < 3 || (l[0] == '`' && strings.Contains(l[n:], "`")) {
		return ""
	}
	return l[:n]
}

// closesFence reports whether l closes the code block opened by fence: a
// run of the same character at least as long, then only spaces.
func closesFence(l, fence string) bool {
	n := longestPrefix(l, fence[0])
	return n >= len(fence) && strings.TrimRight(l[n:], " \t") == ""
}

// longestPrefix returns how many bytes at the start of l are c.
func longestPrefix(l string, c byte) int {
	n := 0
	for n < len(l) && l[n] == c {
		n++
	}
	return n
}

// escapeHTMLStart escapes the "<" of a line that starts with one after at
// most three spaces, where Markdown would open an HTML block.
func escapeHTMLStart(l string) string {
	i := longestPrefix(l, ' ')
	if i <= 3 && i < len(l) && l[i] == '<' {
		return l[:i] + `\` + l[i:]
	}
	return l
}
