package tui

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/internal/gitignore"
)

// completion is the popup over the editor: the command palette (the
// editor holds "/name") or file paths (the word before the cursor is
// "@path").
type completion struct {
	mode compMode
	pk   *picker.Model
	// dismissed is the editor text Esc closed the popup on: it stays
	// closed until the text changes.
	dismissed string
	// extra are the ignored paths the typed @path names (see
	// ignoredMatches), shown after the listed files.
	extra []string
	// listed holds the listed files, for ignoredMatches; listedN is how
	// many files it was made from.
	listed  map[string]bool
	listedN int
	// dir and dirEntries are the last directory ignoredMatches read.
	dir        string
	dirEntries []string
}

type compMode int

const (
	compNone compMode = iota
	compCommand
	compFile
)

func newCompletion() *completion {
	pk := picker.New("", nil)
	pk.OwnFilter = false
	return &completion{pk: pk}
}

func (c *completion) open() bool { return c.mode != compNone }

func (c *completion) close() { c.mode = compNone }

func (c *completion) dismiss(text string) {
	c.mode, c.dismissed = compNone, text
}

// maxFiles bounds the paths @ completes from.
const maxFiles = 20000

// refreshCompletion opens, filters or closes the popup for what the
// editor holds now.
func (m *Model) refreshCompletion() tea.Cmd {
	c := m.comp
	text := m.ed.value()
	if c.dismissed != "" {
		if text == c.dismissed {
			return nil
		}
		c.dismissed = ""
	}
	if strings.HasPrefix(text, "/") && !strings.ContainsAny(text, " \n\t") {
		if c.mode != compCommand {
			c.mode = compCommand
			c.pk.SetItems(m.commandItems())
		}
		c.pk.SetFilter(text[1:])
		if c.pk.Len() == 0 {
			c.mode = compNone
		}
		return nil
	}
	word := m.ed.wordBeforeCursor()
	if strings.HasPrefix(word, "@") {
		var cmd tea.Cmd
		if !m.filesAsked {
			m.filesAsked = true
			cmd = m.filesCmd()
		}
		extra := m.ignoredMatches(word[1:])
		if c.mode != compFile || len(c.pk.Items()) != len(m.files)+len(c.extra) || !slices.Equal(extra, c.extra) {
			c.mode = compFile
			c.extra = extra
			items := make([]picker.Item, 0, len(m.files)+len(extra))
			for _, f := range m.files {
				items = append(items, picker.Item{Title: f})
			}
			for _, f := range extra {
				items = append(items, picker.Item{Title: f})
			}
			c.pk.SetItems(items)
		}
		c.pk.SetFilter(word[1:])
		if c.pk.Len() == 0 && m.files != nil {
			c.mode = compNone
		}
		return cmd
	}
	c.mode = compNone
	return nil
}

// commandItems are the palette's rows: panto's commands, then the
// extensions'.
func (m *Model) commandItems() []picker.Item {
	var items []picker.Item
	for _, b := range builtins {
		title := "/" + b.name
		if b.usage != "" {
			title += " " + b.usage
		}
		items = append(items, picker.Item{Title: title, Desc: b.desc, Value: b.name, Match: b.name})
	}
	if m.sess != nil {
		for _, c := range m.sess.Commands() {
			title := "/" + c.Name
			if c.Usage != "" {
				title += " " + c.Usage
			}
			desc := c.Description
			if c.Extension != "" {
				desc += " (" + c.Extension + ")"
			}
			items = append(items, picker.Item{Title: title, Desc: desc, Value: c.Name, Match: c.Name, Mark: takesArgs(c.Usage)})
		}
	}
	for _, t := range m.offeredTemplates() {
		title := "/" + t.Name
		if t.ArgumentHint != "" {
			title += " " + t.ArgumentHint
		}
		desc := t.Description
		if desc == "" {
			desc = "prompt template"
		}
		items = append(items, picker.Item{Title: termtext.Line(title), Desc: termtext.Line(desc + " (" + string(t.Layer) + " template)"), Value: t.Name, Match: t.Name, Mark: takesArgs(t.ArgumentHint)})
	}
	if cat, ok := m.o.App.(catalog); ok && m.sess != nil {
		for _, s := range cat.Skills() {
			name := app.SkillPrefix + s.Name
			items = append(items, picker.Item{Title: "/" + name + " [args]", Desc: termtext.Line(s.Description + " (" + string(s.Layer) + " skill)"), Value: name, Match: name})
		}
	}
	return items
}

// takesArgs marks a command that needs arguments (Enter completes it
// instead of running it).
func takesArgs(usage string) string {
	if usage != "" && !strings.HasPrefix(usage, "[") {
		return " "
	}
	return ""
}

// completionKey handles a key while the popup is open; done is false
// when the key is the editor's.
func (m *Model) completionKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	c := m.comp
	switch k.String() {
	case "up", "ctrl+p":
		c.pk.Move(-1)
		return nil, true
	case "down", "ctrl+n":
		c.pk.Move(1)
		return nil, true
	case "tab":
		return m.acceptCompletion(false), true
	case "enter":
		return m.acceptCompletion(true), true
	}
	return nil, false
}

// acceptCompletion puts the choice into the editor; with run, a command
// that needs no arguments runs at once.
func (m *Model) acceptCompletion(run bool) tea.Cmd {
	c := m.comp
	it, ok := c.pk.Selected()
	if !ok {
		c.close()
		return nil
	}
	switch c.mode {
	case compCommand:
		c.close()
		if run && it.Mark == "" {
			m.ed.reset()
			m.ed.ta.InsertString("/" + it.Value)
			return m.submit()
		}
		m.ed.reset()
		m.ed.ta.InsertString("/" + it.Value + " ")
		return nil
	case compFile:
		c.close()
		if strings.HasSuffix(it.Title, "/") {
			// A directory: go on completing inside it. (Typed with the
			// space first, the word before the cursor was empty and the
			// path went in twice.)
			m.ed.replaceWordBeforeCursor("@" + it.Title)
			return m.refreshCompletion()
		}
		m.ed.replaceWordBeforeCursor("@" + it.Title + " ")
		return nil
	}
	return nil
}

// maxDirEntries bounds the entries of one directory that ignoredMatches
// reads.
const maxDirEntries = 2000

// ignoredMatches are the paths that the @ list leaves out (git ignores
// them) and that typed, the text after "@", names: every entry of a
// directory typed whole that is not listed ("bin/" when bin/ is
// ignored), and in a listed directory (the project's too) the entries
// whose name starts with what is typed after the last "/" ("bin" offers
// "bin/"). So typing an ignored path still completes it, and the list
// does not offer build outputs unasked. They are read from the disk, one
// directory at a time, when the files are listed.
func (m *Model) ignoredMatches(typed string) []string {
	c := m.comp
	if m.o.CWD == "" || m.files == nil {
		return nil
	}
	i := strings.LastIndexByte(typed, '/')
	dir, base := typed[:i+1], typed[i+1:]
	if parts := strings.Split(dir, "/"); strings.HasPrefix(dir, "/") || slices.Contains(parts, "..") || slices.Contains(parts, ".") {
		return nil // the project's paths only, as the list spells them
	}
	if c.listedN != len(m.files) || c.listed == nil {
		c.listed, c.listedN = make(map[string]bool, len(m.files)), len(m.files)
		for _, f := range m.files {
			c.listed[f] = true
		}
	}
	listed := dir == "" || c.listed[dir]
	if listed && base == "" {
		return nil
	}
	if dir != c.dir || c.dirEntries == nil {
		c.dir, c.dirEntries = dir, []string{}
		entries, _ := os.ReadDir(filepath.Join(m.o.CWD, filepath.FromSlash(dir)))
		for _, e := range entries[:min(len(entries), maxDirEntries)] {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			c.dirEntries = append(c.dirEntries, name)
		}
	}
	var out []string
	for _, name := range c.dirEntries {
		p := dir + name
		if c.listed[p] || (listed && !strings.HasPrefix(name, base)) {
			continue
		}
		out = append(out, p)
	}
	return out
}

type filesMsg struct{ files []string }

// filesCmd lists the project's files, once, for @: relative paths,
// directories with a slash; .git, node_modules and what git ignores
// (internal/gitignore) left out.
func (m *Model) filesCmd() tea.Cmd {
	root := m.o.CWD
	if root == "" {
		return nil
	}
	return func() tea.Msg {
		var files []string
		ign := gitignore.New(root)
		if ign.Excluded(root, true) {
			ign = nil // the project is in an ignored directory: list it all
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return nil
			}
			name := d.Name()
			if d.IsDir() && (name == ".git" || name == "node_modules" || name == ".cache") {
				return filepath.SkipDir
			}
			if ign.Ignored(p, d.IsDir()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				rel += "/"
			}
			files = append(files, rel)
			if len(files) >= maxFiles {
				return fs.SkipAll
			}
			return nil
		})
		// Shallow paths first, then by name.
		sort.SliceStable(files, func(i, j int) bool {
			di, dj := strings.Count(files[i], "/"), strings.Count(files[j], "/")
			if strings.HasSuffix(files[i], "/") {
				di--
			}
			if strings.HasSuffix(files[j], "/") {
				dj--
			}
			if di != dj {
				return di < dj
			}
			return files[i] < files[j]
		})
		if files == nil {
			files = []string{}
		}
		return filesMsg{files}
	}
}
