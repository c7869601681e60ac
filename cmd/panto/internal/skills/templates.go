package skills

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/frontmatter"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// Template is a prompt template: prompts/NAME.md, typed as /NAME args.
type Template struct {
	Name string
	// Description, ArgumentHint and Model are the front matter's
	// description, argument-hint and model; empty when not given.
	Description, ArgumentHint, Model string
	// Body is the text after the front matter, expanded with the
	// arguments (Expand).
	Body  string
	Path  string
	Layer layers.Name
}

// Source is where the template came from: "user /h/.config/panto/prompts/review.md".
func (t Template) Source() string { return string(t.Layer) + " " + t.Path }

// TemplatePlaces are the folders templates are found in, lowest
// precedence first: each layer's prompts/ (base, user), then — with
// project, when the user trusted it — the project's .claude/commands/
// and .panto/prompts/.
func TemplatePlaces(d layers.Dirs, project bool) []Place {
	out := []Place{
		{layers.Base, filepath.Join(d.Layer(layers.Base), "prompts")},
		{layers.User, filepath.Join(d.Layer(layers.User), "prompts")},
	}
	if project {
		out = append(out, ProjectTemplatePlaces(d)...)
	}
	return out
}

// ProjectTemplatePlaces are the project's folders of templates.
func ProjectTemplatePlaces(d layers.Dirs) []Place {
	return []Place{
		{layers.Project, filepath.Join(d.CWD, ".claude", "commands")},
		{layers.Project, filepath.Join(d.Layer(layers.Project), "prompts")},
	}
}

// FindTemplates finds the templates (NAME.md) in places, a later place's
// winning over an earlier one's of the same name (a notice says so); one
// that cannot be read, or whose front matter is bad, is skipped with a
// notice naming the file and line.
func FindTemplates(places []Place, root string) Found[Template] {
	var f Found[Template]
	byName := map[string]int{}
	for _, p := range places {
		es, err := entries(p.Dir)
		if err != nil {
			f.Notices = append(f.Notices, "templates: "+err.Error())
			continue
		}
		for _, e := range es {
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || e.IsDir() {
				continue
			}
			path := filepath.Join(p.Dir, e.Name())
			if !validCommandName(name) {
				f.Notices = append(f.Notices, fmt.Sprintf("skipped a template: %s: /%s is not a command name (want letters, digits, - _ and .)", path, name))
				continue
			}
			t, err := readTemplate(path, name, p.Layer, root)
			if err != nil {
				f.Notices = append(f.Notices, "skipped a template: "+err.Error())
				continue
			}
			if i, ok := byName[name]; ok {
				f.Notices = append(f.Notices, fmt.Sprintf("template /%s: %s takes the place of %s", name, t.Source(), f.Items[i].Source()))
				f.Items[i] = t
				continue
			}
			byName[name] = len(f.Items)
			f.Items = append(f.Items, t)
		}
	}
	sortByName(f.Items, func(t Template) string { return t.Name })
	return f
}

func readTemplate(path, name string, layer layers.Name, root string) (Template, error) {
	text, err := readText(path, layer, root)
	if err != nil {
		return Template{}, err
	}
	doc, err := frontmatter.Parse(text)
	if err != nil {
		return Template{}, fmt.Errorf("%s %w", path, err)
	}
	t := Template{Name: name, Body: doc.Body, Path: path, Layer: layer}
	t.Description, _ = doc.Get("description")
	t.ArgumentHint, _ = doc.Get("argument-hint")
	t.Model, _ = doc.Get("model")
	t.Description = strings.Join(strings.Fields(t.Description), " ")
	t.ArgumentHint = strings.TrimSpace(t.ArgumentHint)
	t.Model = strings.TrimSpace(t.Model)
	if strings.ContainsAny(t.Model, " \t\n") {
		return Template{}, fmt.Errorf("%s line %d: model %q: want one model name", path, doc.Line("model"), t.Model)
	}
	if strings.TrimSpace(t.Body) == "" {
		return Template{}, fmt.Errorf("%s line %d: the template has no text after its front matter", path, doc.BodyLine)
	}
	return t, nil
}

func validCommandName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Expand is the template's text with args put in: $1 … $9 are the
// arguments, split at white space with "double" or 'single' quotes
// keeping one together, $@ and $ARGUMENTS the arguments as typed; \$
// writes a literal $. A template that uses none of them and is given
// arguments gets them after its text, so nothing typed is lost.
func (t Template) Expand(args string) string {
	args = strings.TrimSpace(args)
	words := SplitArgs(args)
	var b strings.Builder
	used := false
	s := t.Body
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next >= '1' && next <= '9':
			if n := int(next - '1'); n < len(words) {
				b.WriteString(words[n])
			}
			used = true
			i++
		case next == '@':
			b.WriteString(args)
			used = true
			i++
		case strings.HasPrefix(s[i+1:], "ARGUMENTS"):
			b.WriteString(args)
			used = true
			i += len("ARGUMENTS")
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	if !used && args != "" {
		out = strings.TrimRight(out, "\n") + "\n\n" + args + "\n"
	}
	return out
}

// SplitArgs splits args at white space; "double" or 'single' quotes keep
// what they hold as one argument (without the quotes).
func SplitArgs(args string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	for _, r := range args {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Clash is a template whose name a built-in or an extension's command
// has: the command wins.
type Clash struct {
	Template Template
	// By is who has the name: "panto" for a built-in, or the
	// extension's name.
	By string
}

// Notice says the clash, for the user.
func (c Clash) Notice() string {
	what := "a command of extension " + c.By
	if c.By == "panto" {
		what = "a built-in command"
	}
	return fmt.Sprintf("template /%s (%s) is not offered: /%s is %s, which wins", c.Template.Name, c.Template.Path, c.Template.Name, what)
}

// Clashes returns the templates whose names builtins or extension
// commands (name → extension) have.
func Clashes(ts []Template, builtins []string, extCommands map[string]string) []Clash {
	var out []Clash
	for _, t := range ts {
		switch {
		case slices.Contains(builtins, t.Name):
			out = append(out, Clash{t, "panto"})
		case extCommands[t.Name] != "":
			out = append(out, Clash{t, extCommands[t.Name]})
		}
	}
	return out
}

func sortByName[T any](items []T, name func(T) string) {
	slices.SortStableFunc(items, func(a, b T) int { return strings.Compare(name(a), name(b)) })
}
