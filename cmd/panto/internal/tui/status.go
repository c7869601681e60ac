package tui

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// status is the status line: where, which model, what it cost, how full
// the context is, and the extensions' segments.
type status struct {
	cwd, branch     string
	provider, model string
	// Tokens of this run's requests.
	in, out, cacheR, cacheW int
	cost                    float64
	costKnown               bool
	// hit is the share of the last request's input read from the
	// provider's cache, in percent, when hitKnown.
	hit      int
	hitKnown bool
	// The next request's estimated size, and the window (0: unknown).
	ctxTokens, ctxWindow int
	ext                  map[string]string
	// extKey changes whenever ext does.
	extKey int
	// perm is the permission mode; "" when the session decides no
	// calls.
	perm string
}

// statusKey is what the status line shows: it is drawn again only when
// this changes.
type statusKey struct {
	width                        int
	th                           *theme.Theme
	cwd, branch, provider, model string
	in, out, cacheR, cacheW      int
	cost                         float64
	costKnown                    bool
	hit                          int
	hitKnown                     bool
	ctxTokens, ctxWindow, extKey int
	perm                         string
}

func (s *status) key(width int, th *theme.Theme) statusKey {
	return statusKey{width, th, s.cwd, s.branch, s.provider, s.model, s.in, s.out, s.cacheR, s.cacheW,
		s.cost, s.costKnown, s.hit, s.hitKnown, s.ctxTokens, s.ctxWindow, s.extKey, s.perm}
}

// addUsage counts one request's tokens, and its cost when the host knew
// the model's price (host.Config.Cost), and keeps its cache-hit share.
func (s *status) addUsage(u host.Usage) {
	s.in += u.InputTokens
	s.out += u.OutputTokens
	s.cacheR += u.CacheReadTokens
	s.cacheW += u.CacheWriteTokens
	if u.CostKnown {
		s.costKnown = true
		s.cost += u.CostUSD
	}
	s.hit, s.hitKnown = prices.Reported(s.provider, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens).HitShare()
}

// totals is /session's lines of this run's tokens and cost.
func (s *status) totals() string {
	sum := prices.Sum{Usage: sessionlog.Usage{InputTokens: s.in, OutputTokens: s.out,
		CacheReadTokens: s.cacheR, CacheWriteTokens: s.cacheW}, CostUSD: s.cost, CostKnown: s.costKnown}
	return totalsText(sum)
}

// setExt sets (or, with empty text, clears) an extension's segment; the
// text is kept made safe for the terminal.
func (s *status) setExt(by, key, text string) {
	if s.ext == nil {
		s.ext = map[string]string{}
	}
	s.extKey++
	k := by
	if key != "" {
		k += "/" + key
	}
	if text == "" {
		delete(s.ext, k)
		return
	}
	s.ext[k] = oneLine(termtext.Line(text), 40)
}

// segment is a piece of the status line; the lowest prio goes first
// when the line is too narrow.
type segment struct {
	text string
	prio int
}

// view draws the status line in width cells. The directory, the branch
// (a repository's .git/HEAD), the model and the extensions' names are
// outside text: each is shown through termtext.
func (s *status) view(th *theme.Theme, width int) string {
	var segs []segment
	if s.cwd != "" {
		segs = append(segs, segment{th.Status.Render(termtext.Line(s.cwd)), 1})
	}
	if s.branch != "" {
		segs = append(segs, segment{th.Status.Render("(" + termtext.Line(s.branch) + ")"), 4})
	}
	if s.model != "" {
		segs = append(segs, segment{th.StatusKey.Render(termtext.Line(s.provider + "/" + s.model)), 9})
	}
	switch s.perm {
	case "", "default":
	case "bypass":
		// Kept over everything but the model: every call runs that no
		// rule stops.
		segs = append(segs, segment{th.Warn.Render("⚠ bypass permissions"), 8})
	default:
		segs = append(segs, segment{th.StatusKey.Render("⏵ " + s.perm), 8})
	}
	if s.in > 0 || s.out > 0 {
		t := "↑" + kilo(s.in) + " ↓" + kilo(s.out)
		if s.cacheR > 0 {
			t += " R" + kilo(s.cacheR)
		}
		if s.cacheW > 0 {
			t += " W" + kilo(s.cacheW)
		}
		segs = append(segs, segment{th.Status.Render(t), 6})
	}
	if s.ctxTokens > 0 {
		t := "ctx " + kilo(s.ctxTokens)
		style := th.Status
		if s.ctxWindow > 0 {
			pct := s.ctxTokens * 100 / s.ctxWindow
			t += fmt.Sprintf("/%s %d%%", kilo(s.ctxWindow), pct)
			// Near the window (where compaction starts, by default) in
			// the warning colour; over it, where requests fail, in the
			// error colour.
			switch {
			case pct > 100:
				style = th.Error
			case pct >= 80:
				style = th.Warn
			}
		}
		segs = append(segs, segment{style.Render(t), 7})
	}
	if s.hitKnown && s.cacheR+s.cacheW > 0 {
		// The last request's cache hits (pi's CH): low when a change
		// early in the prompt made the provider read it all again.
		// Shown once the provider caches at all.
		segs = append(segs, segment{th.Status.Render(fmt.Sprintf("CH %d%%", s.hit)), 2})
	}
	if s.costKnown {
		segs = append(segs, segment{th.Status.Render(fmt.Sprintf("$%.3f", s.cost)), 5})
	}
	keys := make([]string, 0, len(s.ext))
	for k := range s.ext {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		by, _, _ := strings.Cut(k, "/")
		by = termtext.Line(by)
		text := s.ext[k]
		if !strings.HasPrefix(strings.ToLower(text), strings.ToLower(by)) {
			text = by + ": " + text
		}
		segs = append(segs, segment{th.Status.Render(text), 3})
	}
	return fit(segs, th.Faint.Render(" · "), width)
}

// fit joins the segments that fit in width, dropping the least
// important first, keeping their order.
func fit(segs []segment, sep string, width int) string {
	keep := make([]bool, len(segs))
	for i := range keep {
		keep[i] = true
	}
	join := func() string {
		var parts []string
		for i, s := range segs {
			if keep[i] {
				parts = append(parts, s.text)
			}
		}
		return strings.Join(parts, sep)
	}
	for {
		line := join()
		if ansi.StringWidth(line) <= width {
			return line
		}
		low := -1
		for i, s := range segs {
			if keep[i] && (low < 0 || s.prio < segs[low].prio) {
				low = i
			}
		}
		n := 0
		for _, k := range keep {
			if k {
				n++
			}
		}
		if n <= 1 {
			return ansi.Truncate(line, width, "…")
		}
		keep[low] = false
	}
}

type branchMsg string

// branchCmd reads the git branch from .git/HEAD, walking up from the
// project directory; no git is run.
func (m *Model) branchCmd() tea.Cmd {
	dir := m.o.CWD
	if dir == "" {
		return nil
	}
	return func() tea.Msg { return branchMsg(gitBranch(dir)) }
}

// gitBranch is the branch checked out in dir's repository, the short
// commit when detached, or "". What it reads is the project's, not
// panto's: a .git file and HEAD are read only when they are regular
// files (or symbolic links to one) of at most maxGitFile bytes. Anything
// else — a device such as /dev/zero, a FIFO, a socket, a huge file —
// shows no branch rather than block the UI or read without end.
func gitBranch(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		git := filepath.Join(d, ".git")
		fi, err := os.Stat(git)
		if err == nil {
			head := filepath.Join(git, "HEAD")
			if !fi.IsDir() {
				// A worktree or submodule: "gitdir: PATH".
				b, ok := readGitFile(git)
				if !ok {
					return ""
				}
				line, _, _ := strings.Cut(string(b), "\n")
				p := strings.TrimSpace(strings.TrimPrefix(line, "gitdir:"))
				if p == "" {
					return ""
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				head = filepath.Join(p, "HEAD")
			}
			return readHead(head)
		}
		if parent := filepath.Dir(d); parent == d {
			return ""
		}
	}
}

func readHead(path string) string {
	b, ok := readGitFile(path)
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
		return ref
	}
	if len(line) >= 7 {
		return line[:7]
	}
	return ""
}

// maxGitFile bounds what is read of a .git file or a HEAD: each is one
// line, a path or a ref, far shorter.
const maxGitFile = 4096

// readGitFile returns the content of the regular file at path (following
// symbolic links), or false when it is anything else or larger than
// maxGitFile. It opens without blocking (a FIFO put there between the
// Stat and the open does not wait for a writer) and judges the file it
// opened, not only the name.
func readGitFile(path string) ([]byte, bool) {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxGitFile {
		return nil, false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxGitFile+1))
	if err != nil || len(b) > maxGitFile {
		return nil, false
	}
	return b, true
}

type usageMsg struct{ tokens, window int }

// usageCmd asks how full the context is (it walks the conversation: not
// in Update).
func (m *Model) usageCmd() tea.Cmd {
	sess := m.sess
	if sess == nil {
		return nil
	}
	return func() tea.Msg {
		t, w := sess.ContextUsage()
		return usageMsg{t, w}
	}
}
