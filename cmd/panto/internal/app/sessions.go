package app

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// Store is the session logs of a working directory: where a new one is
// named, which are this directory's, which one an id or a SESSION
// argument names. Every front end lists and finds sessions through it
// (App.Store); the subcommands that read a log without opening a session
// (panto session ...) make their own (NewStore).
type Store struct {
	dirs layers.Dirs
	// warn is told what is skipped (a FIFO where a log would be).
	warn func(string)
}

// NewStore is the session logs of the working directory of the layers
// d; warn (nil: none) is told each *.jsonl entry skipped for not being a
// regular file, once per call.
func NewStore(d layers.Dirs, warn func(string)) *Store {
	if warn == nil {
		warn = func(string) {}
	}
	return &Store{dirs: d, warn: warn}
}

// SessionsOf lists the sessions of the directory cwd (absolute), newest
// first (Store.List), for a front end serving several directories (an
// ACP client's session/list).
func SessionsOf(getenv func(string) string, cwd string) ([]SessionItem, error) {
	d, err := layers.Resolve(getenv, cwd)
	if err != nil {
		return nil, err
	}
	return NewStore(d, nil).List()
}

// sessionFile is a session log found on disk.
type sessionFile struct {
	path    string
	id      string
	modTime time.Time
	// header is the log's first line; headerErr says why it could not be
	// read (then the log's directory is unknown).
	header    sessionlog.Header
	headerErr error
}

// NewPath names the log of a new session in dir, and its id:
// <UTC time>_<id>.jsonl, so names sort by creation time.
func NewPath(dir string, now time.Time) (path, id string) {
	id = sessionlog.NewID()
	return newSessionPath(dir, id, now), id
}

func newSessionPath(dir, id string, now time.Time) string {
	return filepath.Join(dir, now.UTC().Format("20060102T150405Z")+"_"+id+".jsonl")
}

// listSessions returns the session logs in dir, newest first. A *.jsonl
// entry that is not a regular file (a FIFO, a device, a socket, or a
// symlink to one) is skipped and reported to warn: reading it could block
// or never end. A temporary file that a panto killed outright left there
// (atomicfile.RemoveIfStale: older than a minute, no writer) is removed.
func listSessions(dir string, warn func(string)) ([]sessionFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", dir, err)
	}
	var out []sessionFile
	now := time.Now()
	for _, de := range ents {
		name := de.Name()
		if de.Type().IsRegular() && atomicfile.IsTemp(name) {
			// Left by a panto killed while it wrote a fork or a summary
			// (a live writer's is held, and kept).
			atomicfile.RemoveIfStale(filepath.Join(dir, name), now)
			continue
		}
		if de.Type().IsRegular() && oldSummaryTemp(name) {
			removeOld(filepath.Join(dir, name), now)
			continue
		}
		if de.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		path := filepath.Join(dir, name)
		var info fs.FileInfo
		if de.Type()&fs.ModeSymlink != 0 {
			info, err = os.Stat(path)
		} else {
			info, err = de.Info()
		}
		if err != nil {
			continue // removed meanwhile, or a dangling symlink
		}
		if !info.Mode().IsRegular() {
			warn(fmt.Sprintf("skipping %s: %s, not a session log", path, layers.Kind(info.Mode())))
			continue
		}
		id := strings.TrimSuffix(name, ".jsonl")
		if _, after, ok := strings.Cut(id, "_"); ok {
			id = after
		}
		out = append(out, sessionFile{path: path, id: id, modTime: info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].modTime.Equal(out[j].modTime) {
			return out[i].modTime.After(out[j].modTime)
		}
		return out[i].path > out[j].path
	})
	return out, nil
}

// oldSummaryTemp reports whether name is a summary's temporary file as
// panto wrote them before package atomicfile:
// ".<log>.summary-<12 hex digits>", with no lock to tell a live one.
func oldSummaryTemp(name string) bool {
	i := strings.LastIndex(name, ".summary-")
	if !strings.HasPrefix(name, ".") || i < 0 || len(name)-i-len(".summary-") != 12 {
		return false
	}
	_, err := hex.DecodeString(name[i+len(".summary-"):])
	return err == nil
}

// removeOld removes the regular file at path if it was last changed over
// an hour before now: a summary's write takes microseconds.
func removeOld(path string, now time.Time) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && now.Sub(st.ModTime()) > time.Hour {
		os.Remove(path)
	}
}

// once returns the store's warn function, telling each warning once.
func (s *Store) once() func(string) {
	seen := map[string]bool{}
	return func(w string) {
		if !seen[w] {
			seen[w] = true
			s.warn(w)
		}
	}
}

// here returns the session logs of the working directory, newest first.
// Distinct directories can share a sessions folder (layers.EncodePath),
// so a log counts only when its header's cwd is the working directory. A
// log whose header cannot be read is kept with headerErr set: whose it
// is cannot be told, and the user should see it rather than lose it
// silently. What is not a regular file is skipped and reported to warn.
func (s *Store) here(warn func(string)) ([]sessionFile, error) {
	list, err := listSessions(s.dirs.SessionDir(), warn)
	if err != nil {
		return nil, err
	}
	out := list[:0]
	for _, f := range list {
		f.header, f.headerErr = sessionlog.ReadHeader(f.path)
		if f.headerErr == nil && filepath.Clean(f.header.Cwd) != s.dirs.CWD {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// SessionItem is one of a directory's sessions, as every list of them
// shows it (panto session list, /resume in the line loop and the UI).
type SessionItem struct {
	// Path is the log; ID the session's id (the header's, or for a log
	// whose header cannot be read, the one in its file name).
	Path, ID string
	// Updated is when its last entry was written (the file's
	// modification time for a log without one).
	Updated time.Time
	// Messages counts the current branch's messages, system ones
	// included (as panto prompt --at N counts them); Branches the
	// branches.
	Messages, Branches int
	// Labels are its labels, sorted.
	Labels []string
	// Name is the session's name (/name), or "".
	Name string
	// Cwd is the directory the session was started in (its header's).
	Cwd string
	// First is what the user typed first (conversation.Message.Typed).
	First string
	// Usage is the tokens its replies used, by model
	// (sessionlog.UsageByModel): prices.Table.Sum prices them.
	Usage []sessionlog.ModelUsage
	// Err says why the log could not be read; the other fields but Path,
	// ID and Updated are then empty.
	Err error
}

// List returns the working directory's sessions, newest first, each
// from its log's summary: the sidecar cached beside it when the log has
// not changed since, else one index scan of it, on every core. An
// unreadable log keeps its item, with Err set.
func (s *Store) List() ([]SessionItem, error) {
	list, err := s.here(s.once())
	if err != nil {
		return nil, err
	}
	return items(list), nil
}

// items are the list items of the logs of list, in its order, read on
// every core.
func items(list []sessionFile) []SessionItem {
	out := make([]SessionItem, len(list))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(list)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				out[i] = item(list[i])
			}
		}()
	}
	for i := range list {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return out
}

// item is the list item of the log f, read from its summary.
func item(f sessionFile) SessionItem {
	it := SessionItem{Path: f.path, ID: f.id, Updated: f.modTime, Err: f.headerErr}
	if it.Err != nil {
		return it
	}
	sum, err := sessionlog.CachedSummary(f.path)
	if err != nil {
		it.Err = err
		return it
	}
	it.ID, it.Cwd = f.header.ID, f.header.Cwd
	if !sum.LastTime.IsZero() {
		it.Updated = sum.LastTime
	}
	it.Messages, it.Branches, it.First, it.Name, it.Usage = sum.Messages, sum.Branches, sum.FirstUserText, sum.Name, sum.Usage
	for _, l := range sum.Labels {
		it.Labels = append(it.Labels, l)
	}
	slices.Sort(it.Labels)
	return it
}

// IDs are the ids of the working directory's sessions that start with
// prefix, newest first: from the logs' headers alone (shell completion).
func (s *Store) IDs(prefix string) []string {
	list, _ := s.here(func(string) {})
	var ids []string
	for _, f := range list {
		if f.headerErr == nil && strings.HasPrefix(f.header.ID, prefix) {
			ids = append(ids, f.header.ID)
		}
	}
	return ids
}

// headerOnlyWhy says why a log holding only its header is skipped.
const headerOnlyWhy = "it holds only its header, no entries (a panto was stopped while it created the log: an older panto's fork cut short, say); resume it by name with --session if you mean it, or delete it"

// latest returns the first log of list (newest first) that can be
// continued, and how many it passed over: those whose header cannot be
// read and those with nothing after their header (sessionlog.HeaderOnly).
// skip is told of each one passed over.
func latest(list []sessionFile, skip func(sessionFile)) (string, int) {
	skipped := 0
	for _, f := range list {
		if f.headerErr == nil {
			if empty, err := sessionlog.HeaderOnly(f.path); err != nil || !empty {
				return f.path, skipped
			}
		}
		skipped++
		if skip != nil {
			skip(f)
		}
	}
	return "", skipped
}

// Latest is the working directory's most recent session that can be
// continued (-c): a log whose header cannot be read, or one with nothing
// after its header, is passed over and warned of. The error says when
// there is none.
func (s *Store) Latest() (string, error) {
	warn := s.once()
	list, err := s.here(warn)
	if err != nil {
		return "", err
	}
	// A log whose header cannot be read (a crash while the session was
	// created, a newer panto's log), or one with nothing after its
	// header (an older panto's fork cut short), must not block -c for
	// good, nor be continued as if it were the last session: skip it,
	// say so, and leave the file alone.
	p, skipped := latest(list, func(f sessionFile) {
		if f.headerErr != nil {
			warn("--continue skips an unreadable log: " + termtext.OneLine(f.headerErr.Error(), 300))
			return
		}
		warn(fmt.Sprintf("--continue skips %s: %s", f.path, headerOnlyWhy))
	})
	switch {
	case p != "":
		return p, nil
	case skipped > 0:
		return "", fmt.Errorf("--continue: no readable session to continue in %s (start one with plain panto)", s.dirs.CWD)
	}
	return "", fmt.Errorf("--continue: %w in %s (start one with plain panto)", ErrNothingToContinue, s.dirs.CWD)
}

// ErrNothingToContinue says the working directory has no session at
// all for -c: a session run starts a new one instead (App.Prepare), as
// pi does.
var ErrNothingToContinue = errors.New("no session to continue")

// Find finds the session whose id is, or starts with, prefix: among the
// working directory's first, then among every directory's. The error
// starts with prefix ("3fa2: no session with that id ..."): the caller
// names what gave it (--resume, /resume).
func (s *Store) Find(prefix string) (string, error) { return s.find(prefix, false) }

// ErrNoSession says no session has the id asked for.
var ErrNoSession = errors.New("no session with that id (see panto session list)")

// find is Find; exact takes whole ids only.
func (s *Store) find(prefix string, exact bool) (string, error) {
	warn := s.once()
	match := func(list []sessionFile) []string {
		var hits []string
		for _, f := range list {
			if f.id == prefix || !exact && strings.HasPrefix(f.id, prefix) {
				hits = append(hits, f.path)
			}
		}
		return hits
	}
	here, err := s.here(warn)
	if err != nil {
		return "", err
	}
	hits := match(here)
	if len(hits) == 0 {
		all, _ := filepath.Glob(filepath.Join(s.dirs.Sessions, "*"))
		for _, dir := range all {
			list, err := listSessions(dir, warn)
			if err != nil {
				return "", err
			}
			hits = append(hits, match(list)...)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("%s: %w", prefix, ErrNoSession)
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("%s: %d sessions match; give more of the id:\n  %s", prefix, len(hits), strings.Join(hits, "\n  "))
}

// Resolve turns a SESSION argument into a log path: a file (relative to
// the working directory), or a session id (or a unique prefix of one);
// "" is the working directory's most recent session.
func (s *Store) Resolve(arg string) (string, error) {
	if arg == "" {
		warn := s.once()
		list, err := s.here(warn)
		if err != nil {
			return "", err
		}
		if p, _ := latest(list, func(f sessionFile) {
			if f.headerErr == nil {
				warn(fmt.Sprintf("skipping %s: %s", f.path, headerOnlyWhy))
			}
		}); p != "" {
			return p, nil
		}
		return "", fmt.Errorf("no session in %s (give SESSION: a log file or a session id)", s.dirs.CWD)
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.dirs.CWD, p)
	}
	if st, err := os.Stat(p); err == nil {
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("%s: %s, want a session log file", arg, layers.Kind(st.Mode()))
		}
		return p, nil
	}
	if strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".jsonl") {
		return "", fmt.Errorf("%s: no such session log", arg)
	}
	return s.Find(arg)
}

// Pick turns the flags' choice of log into its path (empty with
// NoSession) and, for a new session, its id; it does not check From (a
// session's start does: Prepare).
func (s *Store) Pick(p Pick, now time.Time) (path, id string, err error) {
	n := 0
	for _, set := range []bool{p.Session != "", p.Continue, p.Resume != "", p.NoSession} {
		if set {
			n++
		}
	}
	if n > 1 {
		return "", "", usageErrorf("--session, --continue, --resume and --no-session exclude each other")
	}
	switch {
	case p.NoSession:
		return "", "", nil
	case p.Session != "":
		path, err := sessionFlag(s.dirs.CWD, p.Session)
		return path, "", err
	case p.Continue:
		path, err := s.Latest()
		return path, "", err
	case p.Resume != "":
		path, err := s.find(p.Resume, p.Exact)
		if err != nil {
			return "", "", fmt.Errorf("--resume %w", err)
		}
		return path, "", nil
	}
	path, id = NewPath(s.dirs.SessionDir(), now)
	return path, id, nil
}

// sessionFlag checks --session FILE: the file may be new, but its
// directory must exist (a typo in it would otherwise put the session
// somewhere unexpected), and what is there must be a regular file.
func sessionFlag(cwd, arg string) (string, error) {
	p := inDir(cwd, arg)
	dir := filepath.Dir(p)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("--session %s: directory %s does not exist", arg, dir)
	case err != nil:
		return "", fmt.Errorf("--session %s: %w", arg, err)
	case !st.IsDir():
		return "", fmt.Errorf("--session %s: %s is not a directory", arg, dir)
	}
	if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
		return "", fmt.Errorf("--session %s: %s, want a session log file", arg, layers.Kind(st.Mode()))
	}
	return p, nil
}

// Dirs are the directories and layers the store is of.
func (s *Store) Dirs() layers.Dirs { return s.dirs }

// inDir is path made absolute in the working directory cwd (the app's,
// Env.CWD: never the process's, which an embedder running sessions for
// several directories does not change), and cleaned.
func inDir(cwd, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(cwd, path)
}
