package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// panto skills: the skills and prompt templates a session here finds
// (internal/skills finds them, the app says which places count).

const skillsLong = `List the skills and prompt templates a session started here finds.

Skills (the Agent Skills format, agentskills.io) are folders holding a
SKILL.md whose front matter has a name (the folder's) and a description.
panto looks in each layer's skills/ folder — base, then user — then, for
a project whose settings you trusted (panto trust), in .agents/skills/,
.claude/skills/ and .panto/skills/; a later place's skill of the same
name wins. Their index (name, description, path) is the skills:index
section of the system prompt, so the model reads a skill's SKILL.md when
a task matches it; /skill:NAME [args] loads one into your message.

Prompt templates are prompts/NAME.md in each layer (and a project's
.claude/commands/NAME.md): /NAME args sends the template, $1…$9, $@ and
$ARGUMENTS replaced by the arguments.

A file that cannot be read, or has bad front matter, is skipped with a
notice on stderr naming the file and line. See docs/system-prompt.md.`

func skillsCommand(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List the skills and prompt templates found here",
		Long:  skillsLong,
		Example: `  panto skills           each skill and template, where it comes from
  panto skills --json    {"skills": [...], "templates": [...]}`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runSkills(e, asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"skills": [{"name", "description", "path", "layer"}], "templates": [{"name", "description", "argument_hint", "model", "path", "layer"}]}`)
	return cmd
}

type skillJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"`
	Layer       string `json:"layer"`
}

type templateJSON struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	ArgumentHint string `json:"argument_hint,omitempty"`
	Model        string `json:"model,omitempty"`
	Path         string `json:"path"`
	Layer        string `json:"layer"`
}

func runSkills(e *env, asJSON bool) error {
	a, err := app.Load(e.appEnv(e.tell), app.Flags{})
	if err != nil {
		return err
	}
	defer a.Close()
	ss, ts := a.FindSkills()
	for _, n := range append(ss.Notices, ts.Notices...) {
		e.tell(n)
	}
	if asJSON {
		out := struct {
			Skills    []skillJSON    `json:"skills"`
			Templates []templateJSON `json:"templates"`
		}{[]skillJSON{}, []templateJSON{}}
		for _, s := range ss.Items {
			out.Skills = append(out.Skills, skillJSON{s.Name, s.Description, s.Path, string(s.Layer)})
		}
		for _, t := range ts.Items {
			out.Templates = append(out.Templates, templateJSON{t.Name, t.Description, t.ArgumentHint, t.Model, t.Path, string(t.Layer)})
		}
		enc := json.NewEncoder(e.jsonStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(ss.Items) == 0 {
		fmt.Fprintln(e.stdout, "no skills (panto skills --help says where panto looks)")
	} else {
		fmt.Fprintln(e.stdout, "Skills (the model reads one when a task matches; /skill:NAME loads one):")
	}
	for _, s := range ss.Items {
		fmt.Fprintf(e.stdout, "  %s\n      %s\n      %s %s\n", termtext.Line(s.Name),
			termtext.Line(strings.Join(strings.Fields(s.Description), " ")), s.Layer, termtext.Line(s.Path))
	}
	if len(ts.Items) > 0 {
		fmt.Fprintln(e.stdout, "Prompt templates (/NAME args):")
	}
	for _, t := range ts.Items {
		usage := "/" + t.Name
		if t.ArgumentHint != "" {
			usage += " " + t.ArgumentHint
		}
		desc := t.Description
		if t.Model != "" {
			desc += " (model " + t.Model + ")"
		}
		fmt.Fprintf(e.stdout, "  %s\n      %s\n      %s %s\n", termtext.Line(usage), termtext.Line(strings.TrimSpace(desc)), t.Layer, termtext.Line(t.Path))
	}
	return nil
}
