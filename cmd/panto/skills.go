package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/skills"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// panto skills: the skills and prompt templates a session here finds
// (internal/skills finds them, the app says which places count).

const skillsLong = `List the skills and prompt templates a session started here finds.

Skills (the Agent Skills format, agentskills.io) are folders holding a
SKILL.md whose front matter has a name (the folder's) and a description.
panto looks in each layer's skills/ folder — base, then user — then, for
a project whose skills you trusted (panto skills trust) or whose settings
you trusted (panto trust), in .agents/skills/, .claude/skills/ and
.panto/skills/; a later place's skill of the same
name wins. Their index (name, description, path) is the skills:index
section of the system prompt, so the model reads a skill's SKILL.md when
a task matches it; /skill:NAME [args] loads one into your message.

Prompt templates are prompts/NAME.md in each layer (and a project's
.claude/commands/NAME.md): /NAME args sends the template, $1…$9, $@ and
$ARGUMENTS replaced by the arguments.

A file that cannot be read, or has bad front matter, is skipped with a
notice on stderr naming the file and line. See docs/system-prompt.md.

A project's skills and templates come with every clone of its repository
and go into the system prompt, so they load only once you trust them:
panto skills trust shows them and trusts them as they are now, by a
sha256 of every file in their folders (the scripts a skill bundles
too); a change of any file untrusts them.`

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
	cmd.AddCommand(skillsTrustCommand(e))
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

func skillsTrustCommand(e *env) *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Show this project's skills and templates and trust them as they are now",
		Long: `Show the skills and templates of this project (.agents/skills/,
.claude/skills/, .claude/commands/, .panto/skills/, .panto/prompts/) and
trust them as they are now: panto loads them from then on, until any file
in those folders changes. --revoke untrusts them. A project whose
settings (.panto/config.toml) you trusted with panto trust loads them
without this.`,
		Example: `  panto skills trust            review and trust this project's skills
  panto skills trust --revoke   untrust them`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			a, err := app.Load(e.appEnv(e.tell), app.Flags{})
			if err != nil {
				return err
			}
			defer a.Close()
			if revoke {
				ok, err := a.RevokeSkills()
				switch {
				case err != nil:
					return err
				case ok:
					fmt.Fprintln(e.stdout, "Untrusted: this project's skills and templates no longer load.")
				default:
					fmt.Fprintln(e.stdout, "This project's skills and templates were not trusted.")
				}
				return nil
			}
			d := a.Dirs()
			ss := skills.FindSkills(skills.ProjectSkillPlaces(d), d.CWD)
			ts := skills.FindTemplates(skills.ProjectTemplatePlaces(d), d.CWD)
			for _, n := range append(ss.Notices, ts.Notices...) {
				e.tell(n)
			}
			for _, s := range ss.Items {
				fmt.Fprintf(e.stdout, "skill %s: %s\n      %s\n", termtext.Line(s.Name), termtext.Line(strings.Join(strings.Fields(s.Description), " ")), termtext.Line(s.Path))
			}
			for _, t := range ts.Items {
				fmt.Fprintf(e.stdout, "template /%s: %s\n      %s\n", termtext.Line(t.Name), termtext.Line(strings.TrimSpace(t.Description)), termtext.Line(t.Path))
			}
			files, err := a.TrustSkills()
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Trusted: %d skill(s) and %d template(s), %d file(s) as they are now; a change of any untrusts them.\n", len(ss.Items), len(ts.Items), files)
			return nil
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "untrust this project's skills and templates")
	return cmd
}
