package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

func testDirs(t *testing.T) layers.Dirs {
	t.Helper()
	root := t.TempDir()
	d, err := layers.Resolve(func(k string) string {
		if k == "HOME" {
			return filepath.Join(root, "home")
		}
		return ""
	}, filepath.Join(root, "proj"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(d.CWD, 0o755))
	return d
}

func write(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

func skill(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\nDo it.\n"
}

func names(ss []Skill) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+"@"+string(s.Layer))
	}
	return out
}

func TestSkillsFromEveryPlaceLaterWins(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	write(t, filepath.Join(d.Layer(layers.Base), "skills", "base-only", SkillFile), skill("base-only", "base"))
	write(t, filepath.Join(d.Layer(layers.Base), "skills", "shared", SkillFile), skill("shared", "from base"))
	write(t, filepath.Join(d.Layer(layers.User), "skills", "user-only", SkillFile), skill("user-only", "user"))
	write(t, filepath.Join(d.Layer(layers.User), "skills", "shared", SkillFile), skill("shared", "from user"))
	write(t, filepath.Join(d.CWD, ".agents", "skills", "agents", SkillFile), skill("agents", "agents dir"))
	write(t, filepath.Join(d.CWD, ".claude", "skills", "claude", SkillFile), skill("claude", "claude dir"))
	write(t, filepath.Join(d.CWD, ".claude", "skills", "shared", SkillFile), skill("shared", "from claude"))
	write(t, filepath.Join(d.CWD, ".panto", "skills", "pantos", SkillFile), skill("pantos", "panto dir"))
	write(t, filepath.Join(d.CWD, ".panto", "skills", "not-a-skill", "README.md"), "no SKILL.md here")
	write(t, filepath.Join(d.CWD, ".panto", "skills", "stray.md"), "a file, not a folder")

	f := FindSkills(SkillPlaces(d, true), d.CWD)
	require.Equal(t, []string{"agents@project", "base-only@base", "claude@project", "pantos@project", "shared@project", "user-only@user"}, names(f.Items))
	for _, s := range f.Items {
		if s.Name == "shared" {
			require.Equal(t, "from claude", s.Description)
		}
	}
	require.Len(t, f.Notices, 2, f.Notices)
	require.Contains(t, f.Notices[0], "skill shared: user "+filepath.Join(d.Layer(layers.User), "skills", "shared", SkillFile)+" takes the place of base ")
	require.Contains(t, f.Notices[1], "skill shared: project "+filepath.Join(d.CWD, ".claude", "skills", "shared", SkillFile)+" takes the place of user ")

	// Untrusted: the project's folders are not read.
	f = FindSkills(SkillPlaces(d, false), d.CWD)
	require.Equal(t, []string{"base-only@base", "shared@user", "user-only@user"}, names(f.Items))
}

func TestBadSkillsAreSkippedWithFileAndLine(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	dir := filepath.Join(d.Layer(layers.User), "skills")
	write(t, filepath.Join(dir, "good", SkillFile), skill("good", "fine"))
	cases := map[string]string{
		"unclosed":  "---\nname: unclosed\ndescription: x\n",
		"prose":     "---\nname: prose\nthis is not a key\n---\n",
		"mismatch":  skill("other-name", "x"),
		"Upper":     skill("Upper", "x"),
		"nodesc":    "---\nname: nodesc\n---\nbody\n",
		"nofront":   "# just markdown\n",
		"long-desc": skill("long-desc", strings.Repeat("x", MaxDescriptionLen+1)),
	}
	for name, text := range cases {
		write(t, filepath.Join(dir, name, SkillFile), text)
	}
	f := FindSkills(SkillPlaces(d, false), d.CWD)
	require.Equal(t, []string{"good@user"}, names(f.Items))
	all := strings.Join(f.Notices, "\n")
	p := func(n string) string { return filepath.Join(dir, n, SkillFile) }
	for _, want := range []string{
		p("unclosed") + " line 1: the front matter opened here is never closed",
		p("prose") + " line 3: want key: value",
		p("mismatch") + " line 2: name other-name is not the folder's name mismatch",
		p("Upper") + ` line 2: name "Upper": want lowercase letters`,
		p("nodesc") + " line 1: the front matter has no description",
		p("nofront") + " line 1: no front matter",
		p("long-desc") + " line 3: the description is 1025 characters",
	} {
		require.Contains(t, all, "skipped a skill: "+want)
	}
}

func TestProjectSkillLinkedOutsideIsRefused(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	outside := filepath.Join(filepath.Dir(d.CWD), "secret")
	write(t, filepath.Join(outside, SkillFile), skill("leak", "x"))
	require.NoError(t, os.MkdirAll(filepath.Join(d.CWD, ".claude", "skills"), 0o755))
	if err := os.Symlink(outside, filepath.Join(d.CWD, ".claude", "skills", "leak")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	f := FindSkills(SkillPlaces(d, true), d.CWD)
	require.Empty(t, f.Items)
	require.Len(t, f.Notices, 1)
	require.Contains(t, f.Notices[0], "outside the project")
}

func TestIndex(t *testing.T) {
	t.Parallel()
	text, src := Index(nil)
	require.Empty(t, text)
	require.Empty(t, src)
	text, src = Index([]Skill{
		{Name: "a", Description: "Does A.\n  Folded  here.", Path: "/u/skills/a/SKILL.md", Dir: "/u/skills/a", Layer: layers.User},
		{Name: "b", Description: "Does B.", Path: "/p/.claude/skills/b/SKILL.md", Dir: "/p/.claude/skills/b", Layer: layers.Project},
	})
	require.Contains(t, text, "- a: Does A. Folded here. (/u/skills/a/SKILL.md)\n- b: Does B. (/p/.claude/skills/b/SKILL.md)\n")
	require.Contains(t, text, "read its SKILL.md")
	require.Equal(t, "panto: skills index (2 from user /u/skills, project /p/.claude/skills)", src)
}

func TestLoad(t *testing.T) {
	t.Parallel()
	d := testDirs(t)
	path := filepath.Join(d.Layer(layers.User), "skills", "pdf", SkillFile)
	write(t, path, skill("pdf", "PDFs"))
	f := FindSkills(SkillPlaces(d, false), d.CWD)
	require.Len(t, f.Items, 1)
	text, err := f.Items[0].Load(d.CWD)
	require.NoError(t, err)
	require.Contains(t, text, `<skill name="pdf" path="`+path+`">`)
	require.Contains(t, text, "# pdf\nDo it.\n</skill>")
}
