// Package describe says in words what a recorded change of the system
// prompt did — "persona replaced the system prompt", "tools updated its
// guidance section", "re-seeded: project /p/.panto/SYSTEM.md changed" —
// the same words in every front end: the line loop, the full-screen UI,
// the tree views and panto prompt --at. A description is one line, with
// the outside text in it (names, keys, paths) escaped.
package describe

import (
	"strconv"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/conversation"
)

// reseed starts the source of a re-seed's block (host.ReseedSource).
const reseed = "panto re-seed: "

// Change is one recorded system block: who recorded it (an extension's
// name, "panto", or "" to tell from Source), its mode, its section key,
// its text and its source.
type Change struct {
	By     string
	Mode   conversation.Mode
	Key    string
	Text   string
	Source string
}

// FromBlock is the change a system block of a log records.
func FromBlock(b conversation.Block) Change {
	return Change{Mode: b.Mode, Key: b.Key, Text: b.Text, Source: b.Source}
}

// Who is who made the change: By, or what Source says.
func (c Change) Who() string {
	if c.By != "" {
		return c.By
	}
	if name, ok := strings.CutPrefix(c.Source, "extension "); ok && name != "" {
		return name
	}
	return "panto"
}

// String says what the change did, in one line: the names, keys and
// paths in it are outside text, so what in them would break the line or
// drive a terminal is shown escaped (termtext.Line).
func (c Change) String() string { return termtext.Line(c.words()) }

func (c Change) words() string {
	who := c.Who()
	if rest, ok := strings.CutPrefix(c.Source, reseed); ok {
		return "re-seeded: " + rest + " changed"
	}
	if c.Key != "" {
		name := c.Key
		own := strings.HasPrefix(c.Key, who+":")
		if own {
			name = strings.TrimPrefix(c.Key, who+":")
		}
		switch {
		case c.Text == "" && own:
			return who + " removed its " + name + " section"
		case c.Text == "":
			return who + " removed section " + c.Key
		case own:
			return who + " updated its " + name + " section"
		}
		return who + " updated section " + c.Key
	}
	if c.Mode == conversation.ModeReplace {
		return who + " replaced the system prompt"
	}
	if who == "panto" && c.Source != "" {
		return "panto added " + c.Source
	}
	return who + " added a block to the system prompt"
}

// Message describes a system message: its blocks' changes, joined by
// "; " (a message usually holds one).
func Message(m conversation.Message) string {
	var out []string
	for _, b := range m.Content {
		if b.Type == conversation.TypeSystem {
			out = append(out, FromBlock(b).String())
		}
	}
	return strings.Join(out, "; ")
}

// ToolName is how the views name a tool: an MCP server's tool
// (mcp__SERVER__TOOL) as "SERVER › TOOL", any other by its name.
func ToolName(name string) string {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return name
	}
	server, tool, ok := strings.Cut(rest, "__")
	if !ok || server == "" || tool == "" {
		return name
	}
	return server + " › " + tool
}

// ToolsChange says in words what a change of an extension's tools did:
// "tools: mcp server docs: its tools changed (+2 −1)".
func ToolsChange(reason string, added, removed, changed []string) string {
	var n []string
	if len(added) > 0 {
		n = append(n, "+"+itoa(len(added)))
	}
	if len(removed) > 0 {
		n = append(n, "−"+itoa(len(removed)))
	}
	if len(changed) > 0 {
		n = append(n, "~"+itoa(len(changed)))
	}
	s := "tools changed"
	if reason != "" {
		s = "tools: " + reason
	}
	if len(n) > 0 {
		s += " (" + strings.Join(n, " ") + ")"
	}
	return termtext.Line(s)
}

func itoa(n int) string { return strconv.Itoa(n) }
