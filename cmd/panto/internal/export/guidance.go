package export

import (
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/promptlog"
	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/linediff"
)

// This file says which parts of the system prompt are tool guidance,
// which Markdown leaves out unless Options.Prompt asks for it.

// guidanceSuffix ends the key of the section an extension records its
// tools' guidance in: NAME:guidance (host/extension.GuidanceKey, set
// through the extension's own SetSection).
const guidanceSuffix = ":guidance"

// isGuidance reports whether a block with the key is an extension's tool
// guidance.
func isGuidance(key string) bool {
	return len(key) > len(guidanceSuffix) && strings.HasSuffix(key, guidanceSuffix)
}

// withoutGuidance returns blocks without the tool guidance sections.
func withoutGuidance(blocks []conversation.SystemText) []conversation.SystemText {
	out := make([]conversation.SystemText, 0, len(blocks))
	for _, b := range blocks {
		if !isGuidance(b.Key) {
			out = append(out, b)
		}
	}
	return out
}

// hasGuidance reports whether any exported prompt state holds tool
// guidance, or any exported system entry set some.
func (p *plan) hasGuidance() bool {
	for _, s := range p.states {
		for _, b := range s.blocks {
			if isGuidance(b.Key) {
				return true
			}
		}
	}
	for _, chs := range p.changes {
		for _, ch := range chs {
			if isGuidance(ch.key) && ch.text != "" {
				return true
			}
		}
	}
	return false
}

// promptBefore is the prompt in effect before the entry at position i:
// its parent's state (every ancestor of an exported entry is exported).
func (p *plan) promptBefore(i int) []conversation.SystemText {
	if par := p.parent[i]; par >= 0 && p.state[par] > 0 {
		return p.states[p.state[par]-1].blocks
	}
	return nil
}

// mdPromptDiff is what the system entry at position i changed in the
// prompt, for Markdown: the whole prompt's diff with Options.Prompt, else
// the diff of the prompt without its tool guidance.
func (p *plan) mdPromptDiff(i int) []linediff.Hunk {
	if p.opt.Prompt {
		return p.diffs[i]
	}
	return promptlog.Diff(withoutGuidance(p.promptBefore(i)), withoutGuidance(p.states[p.state[i]-1].blocks))
}

// guidanceLeftOut is what Markdown writes in place of a tool guidance
// text it leaves out.
func guidanceLeftOut(text string) string {
	return "_(tool guidance, " + plural(strings.Count(strings.TrimRight(text, "\n"), "\n")+1, "line", "lines") + ", " +
		sizeText(len(text)) + ": left out; `--prompt` includes it)_"
}
