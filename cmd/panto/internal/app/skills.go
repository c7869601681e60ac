package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/skills"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
	"github.com/panto-dev/panto/host"
)

// Skills and prompt templates, for every front end: what the layers
// hold (read again at every open, so /reload and the next start see a
// change), the skills:index section of the prompt, the user message a
// /skill:NAME or a template command makes, and which templates a
// built-in or an extension's command keeps from being offered.

// SkillPrefix starts the command that loads a skill: /skill:NAME.
const SkillPrefix = "skill:"

// catalog is what the last open found.
type catalog struct {
	mu        sync.Mutex
	read      bool
	skills    []skills.Skill
	templates []skills.Template
	// told are the clash notices said already this run.
	told map[string]bool
}

// ProjectTrusted says the project's skills and templates may load: the
// user trusted its settings (./.panto/config.toml), or its skills and
// templates themselves as they are now (panto skills trust: a
// repository with only .claude/skills needs no settings of panto's), as
// every other thing a cloned repository brings counts only once
// trusted.
func (a *App) ProjectTrusted() bool {
	if a.cfg.Project != nil && a.cfg.Project.Applied {
		return true
	}
	st, _, _ := a.SkillsTrust()
	return st == trust.Trusted
}

// SkillsTrust says whether the user trusted the project's skills and
// templates as they are now (by skills.ProjectSum, kept in the user
// layer's trust.SkillsFile under the project's folder), and how many
// files they are.
func (a *App) SkillsTrust() (trust.Status, int, error) {
	sum, files, err := skills.ProjectSum(a.dirs)
	if err != nil || files == 0 {
		return trust.Unknown, files, err
	}
	store, err := trust.Load(a.dirs.Layer(layers.User), trust.SkillsFile)
	if err != nil {
		return trust.Unknown, files, err
	}
	return store.Check(a.dirs.CWD, sum), files, nil
}

// TrustSkills trusts the project's skills and templates as they are
// now: a change of any of their files untrusts them. It returns how
// many files that is.
func (a *App) TrustSkills() (int, error) {
	sum, files, err := skills.ProjectSum(a.dirs)
	if err != nil {
		return 0, err
	}
	if files == 0 {
		return 0, fmt.Errorf("no skills or templates in this project (panto skills --help says where panto looks)")
	}
	store, err := trust.Load(a.dirs.Layer(layers.User), trust.SkillsFile)
	if err != nil {
		return 0, err
	}
	store.Trust(a.dirs.CWD, sum)
	return files, store.Save()
}

// RevokeSkills untrusts the project's skills and templates; false when
// they were not trusted.
func (a *App) RevokeSkills() (bool, error) {
	store, err := trust.Load(a.dirs.Layer(layers.User), trust.SkillsFile)
	if err != nil {
		return false, err
	}
	if !store.Revoke(a.dirs.CWD) {
		return false, nil
	}
	return true, store.Save()
}

// FindSkills finds the skills and templates of the layers (the
// project's only when trusted), with the notices for the user: a file
// skipped (its file and line), a name a later place took, a project
// whose skills do not count because it is not trusted.
func (a *App) FindSkills() (skills.Found[skills.Skill], skills.Found[skills.Template]) {
	trusted := a.ProjectTrusted()
	root := a.dirs.CWD
	ss := skills.FindSkills(skills.SkillPlaces(a.dirs, trusted), root)
	ts := skills.FindTemplates(skills.TemplatePlaces(a.dirs, trusted), root)
	if !trusted {
		var held []string
		for _, p := range append(skills.ProjectSkillPlaces(a.dirs), skills.ProjectTemplatePlaces(a.dirs)...) {
			if es, err := os.ReadDir(p.Dir); err == nil && len(es) > 0 {
				held = append(held, p.Dir)
			}
		}
		if len(held) > 0 {
			why := "they are not trusted"
			if st, _, _ := a.SkillsTrust(); st == trust.Changed {
				why = "they changed since you trusted them"
			}
			ss.Notices = append(ss.Notices, fmt.Sprintf("ignoring the project's skills and templates in %s: %s (they go into the system prompt); 'panto skills trust' shows them and trusts them as they are now",
				strings.Join(held, ", "), why))
		}
	}
	return ss, ts
}

// readCatalog reads the skills and templates again and keeps them for
// the front ends: at every open. It returns the skills and the notices,
// which the session tells as it opens (host.Prompt.Notices).
func (a *App) readCatalog() ([]skills.Skill, []string) {
	ss, ts := a.FindSkills()
	a.cat.mu.Lock()
	a.cat.read, a.cat.skills, a.cat.templates = true, ss.Items, ts.Items
	a.cat.mu.Unlock()
	return ss.Items, append(ss.Notices, ts.Notices...)
}

// indexSection is the skills:index section of the skills found: an
// empty text (no skills) removes it.
func indexSection(ss []skills.Skill) host.PromptSection {
	text, source := skills.Index(ss)
	if text == "" {
		source = "panto: no skills found"
	}
	return host.PromptSection{Key: skills.IndexKey, Text: text, Source: source}
}

// Skills are the skills the session's open found, sorted by name.
func (a *App) Skills() []skills.Skill {
	a.ensureCatalog()
	a.cat.mu.Lock()
	defer a.cat.mu.Unlock()
	return a.cat.skills
}

// Templates are the templates the session's open found, sorted by name
// (OfferedTemplates leaves out those a command's name takes).
func (a *App) Templates() []skills.Template {
	a.ensureCatalog()
	a.cat.mu.Lock()
	defer a.cat.mu.Unlock()
	return a.cat.templates
}

func (a *App) ensureCatalog() {
	a.cat.mu.Lock()
	read := a.cat.read
	a.cat.mu.Unlock()
	if !read {
		_, notices := a.readCatalog()
		for _, n := range notices {
			a.env.notify(n)
		}
	}
}

// OfferedTemplates are the templates a front end offers: those whose
// name neither one of its builtins nor one of the session's extension
// commands has (the command wins), and the notices of those clashes not
// told yet this run, for the front end to show.
func (a *App) OfferedTemplates(builtins []string, s Session) (offered []skills.Template, notices []string) {
	ext := map[string]string{}
	if s != nil {
		for _, c := range s.Commands() {
			ext[c.Name] = c.Extension
		}
	}
	ts := a.Templates()
	clashes := skills.Clashes(ts, builtins, ext)
	out := make([]skills.Template, 0, len(ts))
	a.cat.mu.Lock()
	if a.cat.told == nil {
		a.cat.told = map[string]bool{}
	}
	var tell []string
	for _, t := range ts {
		clashed := false
		for _, c := range clashes {
			if c.Template.Name == t.Name {
				clashed = true
				if n := c.Notice(); !a.cat.told[n] {
					a.cat.told[n] = true
					tell = append(tell, n)
				}
			}
		}
		if !clashed {
			out = append(out, t)
		}
	}
	a.cat.mu.Unlock()
	return out, tell
}

// Expand is the turn a /skill:NAME or a template's command makes: typed
// (what the user typed, the command) is the message's text, and the
// skill's SKILL.md or the template's expansion is added by panto, with
// its file as the source; a template's model is the turn's. ok is false
// when the command is neither (an unknown command); a skill that is not
// there, or whose file cannot be read now, is an error. A template a
// built-in has the name of never gets here: the front end runs the
// built-in first, then an extension's command.
func (a *App) Expand(c Command, typed string) (in host.TurnInput, ok bool, err error) {
	typed = strings.TrimSpace(typed)
	if name, isSkill := strings.CutPrefix(c.Name, SkillPrefix); isSkill {
		for _, s := range a.Skills() {
			if s.Name == name {
				text, err := s.Load(a.dirs.CWD)
				if err != nil {
					return host.TurnInput{}, true, fmt.Errorf("/%s: %w", c.Name, err)
				}
				return host.TurnInput{Text: typed, Added: []host.PromptBlock{{Text: text, Source: s.Source()}}}, true, nil
			}
		}
		return host.TurnInput{}, true, fmt.Errorf("/%s: no skill %s (see /skills)", c.Name, name)
	}
	for _, t := range a.Templates() {
		if t.Name == c.Name {
			return host.TurnInput{Text: typed, Added: []host.PromptBlock{{Text: t.Expand(c.Args), Source: t.Source()}}, Model: t.Model}, true, nil
		}
	}
	return host.TurnInput{}, false, nil
}

// SkillsList is /skills: each skill, its description and SKILL.md.
func (a *App) SkillsList() string {
	ss := a.Skills()
	if len(ss) == 0 {
		return "no skills found (see panto skills --help for where panto looks)"
	}
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s\n    %s\n    %s\n", s.Name, strings.Join(strings.Fields(s.Description), " "), s.Source())
	}
	b.WriteString("/skill:NAME [args] loads one into your message; the model reads one itself when a task matches")
	return b.String()
}

// TurnWith is what a front end needs of a session to send a turn that
// panto added to; *host.Session has it.
type TurnWith interface {
	TurnWith(ctx context.Context, in host.TurnInput) error
}

var _ TurnWith = (*host.Session)(nil)
