package tui

import (
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// promptTracker follows the effective system prompt as its changes come,
// to say each change in words: "persona replaced the system prompt",
// "tools updated its part of the system prompt (tools:guidance)", "re-seeded:
// .panto/APPEND_SYSTEM.md changed".
type promptTracker struct {
	cwd, home string
	blocks    []sysBlock
	// config is the configured blocks as last recorded (the seed, or
	// the last re-seed): what a re-seed is compared with.
	config []sysBlock
	// reseed is the re-seed being recorded: the configured blocks
	// before it, and those it recorded so far.
	reseed *reseed
}

type sysBlock struct{ key, source, text string }

type reseed struct {
	before, after []sysBlock
}

// apply takes one recorded change and says it. more is set when the
// change belongs to the re-seed before it: the caller amends that line.
func (p *promptTracker) apply(by string, mode conversation.Mode, key, text, source string) (says string, more bool) {
	configured := mode != conversation.ModeReplace && by == host.Panto && key == "" && !isExtensionSource(source)
	if configured && p.reseed != nil {
		// A configured block after a re-seed's replace: part of it.
		p.blocks = append(p.blocks, sysBlock{key, source, text})
		p.config = append(p.config, sysBlock{key, source, text})
		p.reseed.after = append(p.reseed.after, sysBlock{key, source, text})
		return p.reseedSays(), true
	}
	p.reseed = nil
	if configured {
		p.config = append(p.config, sysBlock{key, source, text})
	}
	if mode == conversation.ModeReplace {
		p.blocks = []sysBlock{{key, source, text}}
		if rest, ok := strings.CutPrefix(source, host.ReseedSource); ok {
			first := sysBlock{key, rest, text}
			p.reseed = &reseed{before: p.config, after: []sysBlock{first}}
			p.config = []sysBlock{first}
			return p.reseedSays(), false
		}
		if by == host.Panto {
			return "the system prompt was replaced (" + p.long(source) + ")", false
		}
		return by + " replaced the system prompt", false
	}
	if key != "" {
		owner, _, _ := strings.Cut(key, ":")
		i := p.find(key)
		switch {
		case text == "":
			if i >= 0 {
				p.blocks = append(p.blocks[:i], p.blocks[i+1:]...)
			}
			if by == host.Panto {
				return owner + "'s part of the system prompt removed (" + key + "): " + owner + " is not loaded", false
			}
			return owner + " removed its part of the system prompt (" + key + ")", false
		case i >= 0:
			p.blocks[i].text, p.blocks[i].source = text, source
			return owner + " updated its part of the system prompt (" + key + ")", false
		default:
			p.blocks = append(p.blocks, sysBlock{key, source, text})
			return owner + " added to the system prompt (" + key + ")", false
		}
	}
	p.blocks = append(p.blocks, sysBlock{key, source, text})
	if by == host.Panto {
		return "system prompt: " + p.long(source), false
	}
	return by + " added to the system prompt", false
}

func (p *promptTracker) find(key string) int {
	for i, b := range p.blocks {
		if b.key == key {
			return i
		}
	}
	return -1
}

// reseedSays says what the re-seed changed, by source: the files whose
// text changed, came or went (describe.Reseed, the tree's words too).
func (p *promptTracker) reseedSays() string {
	return describe.Reseed(seeded(p.reseed.before), seeded(p.reseed.after), p.short)
}

// seeded is blocks as describe compares them: the configured blocks have
// no section key.
func seeded(blocks []sysBlock) []describe.Block {
	out := make([]describe.Block, len(blocks))
	for i, b := range blocks {
		out[i] = describe.Block{Source: b.source, Text: b.text}
	}
	return out
}

func isExtensionSource(s string) bool { return strings.HasPrefix(s, "extension ") }

// short shortens a source for a line: a layer's file relative to the
// project (".panto/APPEND_SYSTEM.md") or to the home directory
// (describe.ShortSource, which the tree views use too).
func (p *promptTracker) short(source string) string {
	return describe.ShortSource(source, p.cwd, p.home)
}

// long is a source with its layer, the path shortened: "project
// .panto/SYSTEM.md".
func (p *promptTracker) long(source string) string {
	s := p.short(source)
	if layer, _, ok := strings.Cut(source, " "); ok && s != source {
		return layer + " " + s
	}
	return s
}

// shortPath writes path relative to cwd when under it, else with ~ for
// home.
func shortPath(path, cwd, home string) string {
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	if home != "" && (path == home || strings.HasPrefix(path, home+string(filepath.Separator))) {
		return "~" + path[len(home):]
	}
	return path
}
