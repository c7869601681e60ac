package skills

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

func TestTemplatesFromEveryPlace(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	write(t, filepath.Join(d.Layer(layers.Base), "prompts", "review.md"), "base review $1\n")
	write(t, filepath.Join(d.Layer(layers.User), "prompts", "review.md"), "---\ndescription: Review a file\nargument-hint: FILE [FOCUS]\nmodel: m-fast\n---\nReview $1, focus on $2.\n")
	write(t, filepath.Join(d.CWD, ".claude", "commands", "fix.md"), "Fix: $ARGUMENTS\n")
	write(t, filepath.Join(d.CWD, ".panto", "prompts", "fix.md"), "Fix, panto's: $@\n")
	write(t, filepath.Join(d.CWD, ".panto", "prompts", "bad.md"), "---\ndescription: \"open\n---\nx\n")
	write(t, filepath.Join(d.CWD, ".panto", "prompts", "bad name.md"), "x\n")
	write(t, filepath.Join(d.CWD, ".panto", "prompts", "notes.txt"), "not a template\n")

	f := FindTemplates(TemplatePlaces(d, true), d.CWD)
	var got []string
	for _, tp := range f.Items {
		got = append(got, tp.Name+"@"+tp.Source())
	}
	require.Equal(t, []string{
		"fix@project " + filepath.Join(d.CWD, ".panto", "prompts", "fix.md"),
		"review@user " + filepath.Join(d.Layer(layers.User), "prompts", "review.md"),
	}, got)
	r := f.Items[1]
	require.Equal(t, "Review a file", r.Description)
	require.Equal(t, "FILE [FOCUS]", r.ArgumentHint)
	require.Equal(t, "m-fast", r.Model)
	all := strings.Join(f.Notices, "\n")
	require.Contains(t, all, "template /review: user ")
	require.Contains(t, all, "template /fix: project "+filepath.Join(d.CWD, ".panto", "prompts", "fix.md")+" takes the place of project "+filepath.Join(d.CWD, ".claude", "commands", "fix.md"))
	require.Contains(t, all, "skipped a template: "+filepath.Join(d.CWD, ".panto", "prompts", "bad.md")+" line 2: a double-quoted value with no closing quote")
	require.Contains(t, all, "/bad name is not a command name")

	f = FindTemplates(TemplatePlaces(d, false), d.CWD)
	require.Len(t, f.Items, 1)
	require.Equal(t, "review", f.Items[0].Name)
}

func TestExpand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, args, want string }{
		{"Review $1, focus on $2.", `main.go "error handling"`, "Review main.go, focus on error handling."},
		{"All: $@ / $ARGUMENTS", "a  b 'c d'", "All: a  b 'c d' / a  b 'c d'"},
		{"Missing: [$3]", "a", "Missing: []"},
		{`Cost \$1 and $1`, "x", "Cost $1 and x"},
		{"No placeholders.\n", "extra words", "No placeholders.\n\nextra words\n"},
		{"No placeholders.\n", "", "No placeholders.\n"},
		{"$HOME and $ stay", "", "$HOME and $ stay"},
		{"ends with $", "", "ends with $"},
	} {
		require.Equal(t, c.want, Template{Body: c.body}.Expand(c.args), c.body)
	}
}

func TestClashes(t *testing.T) {
	t.Parallel()
	ts := []Template{{Name: "model", Path: "/u/prompts/model.md"}, {Name: "deploy", Path: "/u/prompts/deploy.md"}, {Name: "ok"}}
	cs := Clashes(ts, []string{"model", "help"}, map[string]string{"deploy": "ship"})
	require.Len(t, cs, 2)
	require.Equal(t, "template /model (/u/prompts/model.md) is not offered: /model is a built-in command, which wins", cs[0].Notice())
	require.Equal(t, "template /deploy (/u/prompts/deploy.md) is not offered: /deploy is a command of extension ship, which wins", cs[1].Notice())
}

func FuzzExpand(f *testing.F) {
	f.Add("Review $1 and $@ $ARGUMENTS \\$2 $", `a "b c" 'd`)
	f.Fuzz(func(t *testing.T, body, args string) {
		out := Template{Body: body}.Expand(args)
		if !strings.Contains(body, "$") && !strings.Contains(out, strings.TrimRight(body, "\n")) {
			t.Fatalf("a body without $ changed: %q -> %q", body, out)
		}
	})
}
