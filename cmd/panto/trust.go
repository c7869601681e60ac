package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
)

// A project's settings (./.panto/config.toml) arrive with a clone of
// somebody else's repository, so they count only once the user trusted
// them, with a hash that a change revokes — as project extensions do
// (docs/cli.md, "Trust"). The interactive modes ask once; panto trust
// records it otherwise.

const trustLong = `A project's settings, ./.panto/config.toml, come with every clone of its
repository. panto applies them only once you trust them, by their path and
their sha256: a file that changes is untrusted again. Some settings never
come from a project, trusted or not: where your API key is sent (provider,
and base_url while the provider's key is in the environment),
extension_api_keys, confirm_default = "yes", required = false,
disabled_extensions for an extension you installed, and a hook_timeout or
extension_start_timeout shorter than yours (it would stop your
extensions).

Without flags, panto trust shows what DIR's settings set (DIR defaults to
the working directory) and trusts them as they are now.
Project extensions are trusted with panto ext trust. See docs/cli.md.`

func trustCommand(e *env) *cobra.Command {
	var show, revoke, list bool
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Review and trust a project's settings (./.panto/config.toml)",
		Long:  trustLong,
		Example: `  panto trust               trust this project's settings, as they are now
  panto trust --show        what they set, and whether they are trusted
  panto trust --revoke      untrust them
  panto trust --list        every project whose settings you trusted`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("%swant at most one DIR", where(cmd))
			}
			if list && len(args) > 0 {
				return usageErrorf("%s--list takes no DIR", where(cmd))
			}
			n := 0
			for _, f := range []bool{show, revoke, list} {
				if f {
					n++
				}
			}
			if n > 1 {
				return usageErrorf("%s--show, --revoke and --list go alone", where(cmd))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			dir := e.cwd
			if len(args) == 1 {
				dir = args[0]
			}
			switch {
			case list:
				return trustList(e)
			case show:
				return trustShow(e, dir)
			case revoke:
				return trustRevoke(e, dir)
			}
			return trustProject(e, dir)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&show, "show", false, "show what the settings set and whether they are trusted; trust nothing")
	f.BoolVar(&revoke, "revoke", false, "untrust the settings")
	f.BoolVar(&list, "list", false, "list the project settings you trusted")
	return cmd
}

// trustDirs resolves the layers as a session in dir would.
func trustDirs(e *env, dir string) (layers.Dirs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return layers.Dirs{}, err
	}
	if st, err := os.Stat(abs); err != nil {
		return layers.Dirs{}, fmt.Errorf("trust %s: %w", dir, err)
	} else if !st.IsDir() {
		return layers.Dirs{}, fmt.Errorf("trust %s: not a directory", dir)
	}
	return layers.Resolve(e.getenv, abs)
}

// projectTrust loads the config as a session would, and the trust of
// its project settings (Project: nil when there are none).
func projectTrust(e *env, d layers.Dirs) (*app.ProjectTrust, error) {
	return app.LoadProjectTrust(e.appEnv(nil), d)
}

func errNoProjectSettings(d layers.Dirs) error {
	return fmt.Errorf("no project settings: %s does not exist", config.Path(d.Layer(layers.Project)))
}

func trustProject(e *env, dir string) error {
	d, err := trustDirs(e, dir)
	if err != nil {
		return err
	}
	t, err := projectTrust(e, d)
	if err != nil {
		return err
	}
	p := t.Project
	if p == nil {
		return errNoProjectSettings(d)
	}
	if p.Err != nil {
		return fmt.Errorf("cannot trust the project settings: %w", p.Err)
	}
	describeProject(e.stdout, p, true)
	if err := t.Trust(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "Trusted: panto applies them from now on (but what a project never sets), until the file changes.")
	untrustedExtensions(e, d)
	return nil
}

func trustShow(e *env, dir string) error {
	d, err := trustDirs(e, dir)
	if err != nil {
		return err
	}
	t, err := projectTrust(e, d)
	if err != nil {
		return err
	}
	p := t.Project
	if p == nil {
		return errNoProjectSettings(d)
	}
	if p.Err != nil {
		return fmt.Errorf("the project settings cannot be used: %w", p.Err)
	}
	describeProject(e.stdout, p, false)
	if p.Applied {
		fmt.Fprintln(e.stdout, "Trusted: applied (but what a project never sets).")
	} else {
		fmt.Fprintf(e.stdout, "Not applied: %s. Run 'panto trust' to trust them.\n", p.Status)
	}
	untrustedExtensions(e, d)
	return nil
}

func trustRevoke(e *env, dir string) error {
	d, err := trustDirs(e, dir)
	if err != nil {
		return err
	}
	path, was, err := app.RevokeProjectTrust(d) // a decline is forgotten too: panto asks again
	if err != nil {
		return err
	}
	if !was {
		fmt.Fprintf(e.stdout, "%s was not trusted\n", termtext.Line(path))
		return nil
	}
	fmt.Fprintf(e.stdout, "untrusted %s\n", termtext.Line(path))
	return nil
}

func trustList(e *env) error {
	d, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return err
	}
	trusted, err := app.TrustedProjects(d)
	if err != nil {
		return err
	}
	if len(trusted) == 0 {
		fmt.Fprintln(e.stdout, "no project settings are trusted (see panto trust --help)")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tPATH")
	for _, p := range trusted {
		fmt.Fprintf(tw, "%s\t%s\n", p.Status, termtext.Line(p.Path))
	}
	return tw.Flush()
}

// describeProject writes what p sets, one line a setting, marking what a
// project never sets. Every value is the project's text: shown escaped.
func describeProject(w io.Writer, p *config.Project, brief bool) {
	fmt.Fprintf(w, "Project settings %s (sha256 %s):\n", termtext.Line(p.Path), hex.EncodeToString(p.Sum)[:16])
	if len(p.Settings) == 0 {
		fmt.Fprintln(w, "  (they set nothing)")
	}
	settings := p.Settings
	var weighty []config.Setting
	if brief {
		settings, weighty = briefSettings(p.Settings)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(s config.Setting) {
		note := ""
		switch {
		case s.Never != "":
			note = "NEVER APPLIED: " + s.Never
		case s.Note != "":
			note = s.Note
		}
		value := s.Value
		if brief {
			if value = clip(value, 200); value != s.Value {
				note += " (the value is cut here: panto trust --show shows it whole)"
			}
		}
		fmt.Fprintf(tw, "  %s = %s\t%s\n", termtext.Line(s.Key), termtext.Line(value), termtext.Line(note))
	}
	for _, s := range settings {
		row(s)
	}
	tw.Flush()
	if len(weighty) > 0 {
		// Last, next to the question, however long the list above: what
		// decides where the conversation goes and what runs.
		fmt.Fprintln(w, "Of these, what decides where your conversation goes and what runs:")
		for _, s := range weighty {
			row(s)
		}
		tw.Flush()
	}
}

// The trust question's list is brief: a file of thousands of settings
// (20,000 price tables after its base_url) pushed the line that mattered
// out of the terminal's scrollback.
const (
	maxListed  = 40
	maxWeighty = 20
)

// weightyKeys are the settings that decide where the conversation goes
// and what runs; the brief list repeats them last.
var weightyKeys = []string{"provider", "base_url", "model", "extension_api_keys", "confirm_default", "disabled_extensions", "compaction_model"}

// briefSettings returns the settings to list — the price tables as one
// line, then at most maxListed rows, and a line for the rest — and the
// weighty ones to repeat after them.
func briefSettings(all []config.Setting) (list, weighty []config.Setting) {
	prices, moreWeighty := 0, 0
	for _, s := range all {
		switch {
		case strings.HasPrefix(s.Key, "prices."):
			prices++
			continue
		case slices.Contains(weightyKeys, s.Key) || strings.HasPrefix(s.Key, "mcp.") || strings.HasPrefix(s.Key, "extensions.") || s.Never != "":
			if len(weighty) < maxWeighty {
				weighty = append(weighty, s)
			} else {
				moreWeighty++
			}
		}
		list = append(list, s)
	}
	if moreWeighty > 0 {
		weighty = append(weighty, config.Setting{Key: "…", Value: fmt.Sprintf("%d more of these", moreWeighty), Note: "panto trust --show lists them all"})
	}
	if prices > 0 {
		list = append(list, config.Setting{Key: "prices", Value: fmt.Sprintf("%d price tables", prices), Note: "what models cost, for the status line (panto trust --show lists them)"})
	}
	if len(list) > maxListed {
		more := len(list) - maxListed
		list = append(list[:maxListed:maxListed], config.Setting{Key: "…", Value: fmt.Sprintf("%d more settings", more), Note: "panto trust --show lists them all"})
	}
	if len(all) <= maxListed && prices == 0 {
		weighty = nil // all of it is on screen, next to the question
	}
	return list, weighty
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// untrustedExtensions says which of the project's extensions are not
// trusted: panto trust does not trust them.
func untrustedExtensions(e *env, d layers.Dirs) {
	cands, err := app.Discover(d, nil)
	if err != nil {
		return
	}
	n := 0
	for _, c := range cands {
		if c.Skip != "" {
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(e.stdout, "%d of the project's extensions are not trusted; review them with panto ext list, trust them with panto ext trust.\n", n)
	}
}

// askProjectTrust asks, at a terminal, whether to trust the project's
// settings when they are neither trusted nor declined as they are: once,
// before the session starts (and before the full-screen UI takes the
// terminal). The answer is recorded either way, so panto does not ask
// again until the file changes.
func askProjectTrust(ctx context.Context, e *env) error {
	in, ok := e.stdin.(*os.File)
	if !ok || !e.terminal {
		return nil
	}
	d, err := layers.Resolve(e.getenv, e.cwd)
	if err != nil {
		return nil // loadApp says so
	}
	t, err := projectTrust(e, d)
	if err != nil || t.Project == nil || t.Project.Err != nil || t.Project.Applied || t.Project.Status == trust.Declined {
		return nil
	}
	p := t.Project
	w := e.stderr
	fmt.Fprintln(w)
	if p.Status == trust.Changed {
		fmt.Fprintln(w, "This project's settings changed since you trusted them.")
	} else {
		fmt.Fprintln(w, "This project has settings panto does not apply until you trust them.")
	}
	describeProject(w, p, true)
	termtext.Flush(e.stdout, e.stderr)
	yes, err := lineloop.Confirm(ctx, in, w, "Trust this project's settings? Type yes to trust them, anything else to go on without them: ")
	if err != nil {
		return err
	}
	if yes {
		err = t.Trust()
		fmt.Fprintln(w, "Trusted; 'panto trust --revoke' untrusts them.")
	} else {
		err = t.Decline()
		fmt.Fprintln(w, "Going on without them; 'panto trust' trusts them later.")
	}
	fmt.Fprintln(w)
	return err
}
