package skills

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/frontmatter"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// SkillFile is the file that makes a folder a skill.
const SkillFile = "SKILL.md"

// The Agent Skills format's limits.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
)

// Skill is one skill found: a folder holding a SKILL.md.
type Skill struct {
	// Name is the front matter's name, which is the folder's name.
	Name        string
	Description string
	// Path is its SKILL.md, absolute; Dir the folder holding it.
	Path, Dir string
	Layer     layers.Name
}

// Source is where the skill came from, for people and for the user
// messages it is added to: "project /p/.claude/skills/pdf/SKILL.md".
func (s Skill) Source() string { return string(s.Layer) + " " + s.Path }

// SkillPlaces are the folders skills are found in, lowest precedence
// first: each layer's skills/ (base, user), then — with project, when the
// user trusted it — the project's .agents/skills/, .claude/skills/ and
// .panto/skills/, so a repository's existing skills work and panto's own
// folder wins.
func SkillPlaces(d layers.Dirs, project bool) []Place {
	out := []Place{
		{layers.Base, filepath.Join(d.Layer(layers.Base), "skills")},
		{layers.User, filepath.Join(d.Layer(layers.User), "skills")},
	}
	if project {
		out = append(out, ProjectSkillPlaces(d)...)
	}
	return out
}

// ProjectSkillPlaces are the project's folders of skills.
func ProjectSkillPlaces(d layers.Dirs) []Place {
	return []Place{
		{layers.Project, filepath.Join(d.CWD, ".agents", "skills")},
		{layers.Project, filepath.Join(d.CWD, ".claude", "skills")},
		{layers.Project, filepath.Join(d.Layer(layers.Project), "skills")},
	}
}

// Found is what a search found: the skills (or templates) that count,
// sorted by name, and the notices for the user — a file skipped, with
// its file and line, a name that a later place took.
type Found[T any] struct {
	Items   []T
	Notices []string
}

// FindSkills finds the skills in places (SkillPlaces), a later place's
// skill winning over an earlier one's of the same name (a notice says
// so). A skill whose SKILL.md cannot be read, or whose front matter is
// bad, is skipped with a notice naming the file and line. root is the
// project, which a project's skills must stay in.
func FindSkills(places []Place, root string) Found[Skill] {
	var f Found[Skill]
	byName := map[string]int{}
	for _, p := range places {
		es, err := entries(p.Dir)
		if err != nil {
			f.Notices = append(f.Notices, "skills: "+err.Error())
			continue
		}
		for _, e := range es {
			dir := filepath.Join(p.Dir, e.Name())
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				continue // a file beside the skills, a broken link
			}
			path := filepath.Join(dir, SkillFile)
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				continue // a folder that is not a skill
			}
			s, err := readSkill(path, p.Layer, root)
			if err != nil {
				f.Notices = append(f.Notices, "skipped a skill: "+err.Error())
				continue
			}
			if i, ok := byName[s.Name]; ok {
				f.Notices = append(f.Notices, fmt.Sprintf("skill %s: %s takes the place of %s", s.Name, s.Source(), f.Items[i].Source()))
				f.Items[i] = s
				continue
			}
			byName[s.Name] = len(f.Items)
			f.Items = append(f.Items, s)
		}
	}
	sortByName(f.Items, func(s Skill) string { return s.Name })
	return f
}

// readSkill reads and checks one SKILL.md.
func readSkill(path string, layer layers.Name, root string) (Skill, error) {
	text, err := readText(path, layer, root)
	if err != nil {
		return Skill{}, err
	}
	doc, err := frontmatter.Parse(text)
	if err != nil {
		return Skill{}, fmt.Errorf("%s %w", path, err)
	}
	if len(doc.Fields) == 0 {
		return Skill{}, fmt.Errorf("%s line 1: no front matter: start the file with a --- block that has name and description", path)
	}
	dir := filepath.Dir(path)
	folder := filepath.Base(dir)
	name, ok := doc.Get("name")
	if !ok {
		return Skill{}, fmt.Errorf("%s line 1: the front matter has no name (want name: %s)", path, folder)
	}
	if err := CheckName(name); err != nil {
		return Skill{}, fmt.Errorf("%s line %d: name %q: %v", path, doc.Line("name"), name, err)
	}
	if name != folder {
		return Skill{}, fmt.Errorf("%s line %d: name %s is not the folder's name %s: they must match", path, doc.Line("name"), name, folder)
	}
	desc, ok := doc.Get("description")
	desc = strings.TrimSpace(desc)
	if !ok || desc == "" {
		return Skill{}, fmt.Errorf("%s line 1: the front matter has no description: say what the skill does and when to use it", path)
	}
	if n := len([]rune(desc)); n > MaxDescriptionLen {
		return Skill{}, fmt.Errorf("%s line %d: the description is %d characters, more than %d", path, doc.Line("description"), n, MaxDescriptionLen)
	}
	return Skill{Name: name, Description: desc, Path: path, Dir: dir, Layer: layer}, nil
}

// CheckName checks a skill's name as the Agent Skills format has it: 1
// to 64 lowercase letters, digits and hyphens, not starting or ending
// with a hyphen, with no two in a row.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("longer than %d characters", MaxNameLen)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--"):
		return errors.New("a hyphen at an end, or two in a row")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return errors.New("want lowercase letters, digits and hyphens only")
		}
	}
	return nil
}

// IndexKey is the section the index is recorded as.
const IndexKey = "skills:index"

// Index is the text of the skills:index section — each skill's name,
// description and SKILL.md, so the model knows what exists without
// reading every file — and its source; both empty when there are no
// skills (the section is then removed).
func Index(skills []Skill) (text, source string) {
	if len(skills) == 0 {
		return "", ""
	}
	var b strings.Builder
	b.WriteString("# Skills\n\nA skill is a folder of instructions, and maybe scripts and other files, for one kind of task. " +
		"When a task matches a skill's description, read its SKILL.md (with the read tool) before you start, and follow it; " +
		"the files it names are relative to its folder. Run a skill's scripts with bash.\n\n")
	var from []string
	for _, s := range skills {
		fmt.Fprintf(&b, "- %s: %s (%s)\n", s.Name, strings.Join(strings.Fields(s.Description), " "), s.Path)
		where := string(s.Layer) + " " + filepath.Dir(s.Dir)
		if len(from) == 0 || from[len(from)-1] != where {
			from = append(from, where)
		}
	}
	return b.String(), fmt.Sprintf("panto: skills index (%d from %s)", len(skills), strings.Join(dedupe(from), ", "))
}

// Load is the text a /skill:NAME adds to the user's message: the skill's
// SKILL.md, read again now, with where it is.
func (s Skill) Load(root string) (string, error) {
	text, err := readText(s.Path, s.Layer, root)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("<skill name=%q path=%q>\nThe files this skill names are relative to %s.\n\n%s\n</skill>\n",
		s.Name, s.Path, s.Dir, strings.TrimRight(text, "\n")), nil
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
