package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Spec amendment 6, through the real binary and real extensions: in the
// line loop, sysprompt's /system-replace and then a message; the request
// that follows carries the persona and, still, the tools extension's
// guidance — on both wire formats — because panto recorded the live
// sections again right after the replace. /system-replace-bare
// (sdk.Bare) records nothing after it: the request carries the persona
// alone. Both in one run, so no session start sets the sections again
// in between.
func TestReplaceKeepsTheToolGuidance(t *testing.T) {
	t.Parallel()
	for _, wire := range []string{"anthropic", "openai"} {
		for _, bare := range []bool{false, true} {
			name := wire
			if bare {
				name += " bare"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t)
				var fake *fakeProvider
				url := ""
				if wire == "anthropic" {
					fake = newFake(t, anthropicText("REPLY-DONE"))
					h.env["ANTHROPIC_API_KEY"] = "k"
					url = fake.srv.URL
				} else {
					fake = newFake(t, openaiText("REPLY-DONE"))
					h.env["OPENAI_API_KEY"] = "k"
					url = fake.srv.URL + "/v1"
				}
				log := filepath.Join(h.root, "s.jsonl")
				p := h.lineTermStart("--plain", "--session", log, "--provider", wire, "--model", "m", "--base-url", url,
					"--extension", filepath.Join(pluginDir, "tools"), "--extension", filepath.Join(pluginDir, "sysprompt"))
				p.waitFor(t, "> ")
				command, done := "/system-replace", "replaced"
				if bare {
					command, done = "/system-replace-bare", "replaced, bare"
				}
				p.typeIn(t, command+" You are Ada, a terse reviewer.\r")
				p.waitFor(t, done)
				p.typeIn(t, "hi\r")
				p.waitFor(t, "REPLY-DONE")
				p.waitCount(t, "> ", 3)
				p.typeIn(t, "\x04")
				require.Equal(t, 0, p.wait(t), p.out.String())

				require.Equal(t, 1, fake.count())
				system := wireSystem(t, wire, fake.request(t, 0).body)
				if bare {
					require.Equal(t, "You are Ada, a terse reviewer.", system, "a bare replace: the text alone")
					return
				}
				sep := "\n\n---\n\n"
				if wire == "openai" {
					sep = "\x00" // wireSystem's join of the leading system messages
				}
				require.True(t, strings.HasPrefix(system, "You are Ada, a terse reviewer."+sep+"# Tools from the tools extension"),
					"the persona, then the tools' guidance: %q", system)
				require.NotContains(t, system, "You are panto", "the prose is replaced")

				// In the log: the replace, then the guidance again, recorded
				// for its owner.
				entries := systemEntries(t, log)
				i := len(entries) - 2
				require.Equal(t, "replace:You are Ada, a terse reviewer.", entries[i])
				require.True(t, strings.HasPrefix(entries[i+1], "append:# Tools from the tools extension"), entries[i+1])
				var sources []string
				for _, l := range logLines(t, log) {
					if m, ok := l["message"].(map[string]any); ok && m["role"] == "system" {
						sources = append(sources, m["source"].(string)+" "+replaceKeyOf(m["key"]))
					}
				}
				require.Equal(t, []string{"extension sysprompt ", "extension tools tools:guidance"}, sources[len(sources)-2:])
			})
		}
	}
}

// replaceKeyOf is v as a string ("" when it is not one).
func replaceKeyOf(v any) string {
	s, _ := v.(string)
	return s
}
