package export

import (
	"github.com/panto-dev/panto/conversation"
)

// This file writes the HTML page's sidebar: the session tree and the
// prompt states, a map of the page that links into it.

// htmlSide writes the sidebar: the exported branches as a tree (each
// under the branch it forks from), each with its user messages and its
// labelled entries; then the prompt states, each linking to its section.
// Beside the page on a wide screen, above it on a narrow one; not
// printed.
func (p *plan) htmlSide(h *htmlWriter) {
	if len(p.branches) == 0 && len(p.states) == 0 {
		return
	}
	h.m("<aside class=\"side\">\n<nav aria-label=\"session tree\">\n<h2>Session tree</h2>\n")
	if len(p.branches) > 0 {
		h.m(`<ul class="tree">` + "\n")
		p.sideBranch(h, 1)
		for k := range p.branches {
			// A branch whose fork point is not exported heads a tree
			// of its own (not with All: every fork point is exported).
			if b := p.branches[k]; k > 0 && (b.fork < 0 || p.inBranch[b.fork] == 0) {
				p.sideBranch(h, k+1)
			}
		}
		h.m("</ul>\n")
	}
	if !p.opt.All && p.leaves > 1 {
		h.m(`<p class="h">`)
		h.text(plural(p.leaves-1, "other branch", "other branches") + " not shown (panto session export --all shows the whole tree)")
		h.m("</p>\n")
	}
	h.m("</nav>\n")
	if len(p.states) > 0 {
		h.m("<nav aria-label=\"prompt states\">\n<h2>System prompt states</h2>\n<p class=\"h\">each message links to the prompt in force at it</p>\n<ol class=\"states\">\n")
		for n, s := range p.states {
			size := 0
			for _, b := range s.blocks {
				size += len(b.Text)
			}
			h.m("<li>")
			h.link("", "prompt-", n+1)
			h.m("prompt v")
			h.num(n + 1)
			h.m("</a> ")
			h.text("· " + plural(len(s.blocks), "block", "blocks") + ", " + sizeText(size) + " · from ")
			p.entryLink(h, s.first)
			h.m("</li>\n")
		}
		h.m("</ol>\n</nav>\n")
	}
	h.m("</aside>\n")
}

// sideBranch writes branch k (1-based) of the tree: a link to its
// section, its user messages and labelled entries, and the branches that
// fork from it, nested.
func (p *plan) sideBranch(h *htmlWriter, k int) {
	b := p.branches[k-1]
	h.m("<li>")
	h.link("", "branch-", k)
	h.m("branch ")
	h.num(k)
	h.m("</a>")
	switch {
	case k == 1:
		h.m(" (active)")
	case b.fork >= 0:
		h.m(" · after ")
		p.entryLink(h, b.fork)
	}
	var items []int
	for _, i := range b.entries {
		e := &p.log.Entries[i]
		if p.label(i) != "" || e.Message != nil && e.Message.Role == conversation.RoleUser {
			items = append(items, i)
		}
	}
	if len(items) > 0 {
		h.m("\n<ul class=\"entries\">\n")
		for _, i := range items {
			h.m("<li>")
			p.entryLink(h, i)
			if l := p.label(i); l != "" {
				h.m(` <span class="lbl">`) // not a <mark>: those are the entries' own
				h.text(l)
				h.m("</span>")
			}
			if m := p.log.Entries[i].Message; m != nil && m.Role == conversation.RoleUser {
				h.m(` <span class="pv">`)
				h.text(excerpt(m.Typed(), 40))
				h.m("</span>")
			}
			h.m("</li>\n")
		}
		h.m("</ul>")
	}
	var children []int
	for c := k + 1; c <= len(p.branches); c++ {
		if f := p.branches[c-1].fork; f >= 0 && p.inBranch[f] == k {
			children = append(children, c)
		}
	}
	if len(children) > 0 {
		h.m("\n<ul>\n")
		for _, c := range children {
			p.sideBranch(h, c)
		}
		h.m("</ul>")
	}
	h.m("</li>\n")
}
