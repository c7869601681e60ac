package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

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

// newSessionPath names the log of a new session in dir:
// <UTC time>_<id>.jsonl, so names sort by creation time.
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

// warnOnce returns a warn function for listSessions that writes each
// warning to stderr once.
func warnOnce(stderr io.Writer) func(string) {
	seen := map[string]bool{}
	return func(w string) {
		if !seen[w] {
			seen[w] = true
			fmt.Fprintf(stderr, "panto: warning: %s\n", w)
		}
	}
}

// dirSessions returns the session logs of the working directory d.CWD,
// newest first. Distinct directories can share a sessions folder
// (layers.EncodePath), so a log counts only when its header's cwd is d.CWD.
// A log whose header cannot be read is kept with headerErr set: whose it is
// cannot be told, and the user should see it rather than lose it silently.
// What is not a regular file is skipped and reported to warn.
func dirSessions(d layers.Dirs, warn func(string)) ([]sessionFile, error) {
	list, err := listSessions(d.SessionDir(), warn)
	if err != nil {
		return nil, err
	}
	out := list[:0]
	for _, s := range list {
		s.header, s.headerErr = sessionlog.ReadHeader(s.path)
		if s.headerErr == nil && filepath.Clean(s.header.Cwd) != d.CWD {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// pickSession turns the session flags into a log path (empty with
// --no-session) and, for a new session, its id. Warnings go to stderr.
func pickSession(d layers.Dirs, o *options, now time.Time, stderr io.Writer) (path, id string, err error) {
	n := 0
	for _, set := range []bool{o.session != "", o.continueLast, o.resume != "", o.noSession} {
		if set {
			n++
		}
	}
	if n > 1 {
		return "", "", usageErrorf("--session, --continue, --resume and --no-session exclude each other")
	}
	switch {
	case o.noSession:
		return "", "", nil
	case o.session != "":
		p, err := filepath.Abs(o.session)
		if err != nil {
			return "", "", fmt.Errorf("--session %s: %w", o.session, err)
		}
		// The file may be new, but its directory must exist: a typo in
		// it would otherwise put the session somewhere unexpected.
		dir := filepath.Dir(p)
		switch st, err := os.Stat(dir); {
		case errors.Is(err, os.ErrNotExist):
			return "", "", fmt.Errorf("--session %s: directory %s does not exist", o.session, dir)
		case err != nil:
			return "", "", fmt.Errorf("--session %s: %w", o.session, err)
		case !st.IsDir():
			return "", "", fmt.Errorf("--session %s: %s is not a directory", o.session, dir)
		}
		if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
			return "", "", fmt.Errorf("--session %s: %s, want a session log file", o.session, layers.Kind(st.Mode()))
		}
		return p, "", nil
	case o.continueLast:
		list, err := dirSessions(d, warnOnce(stderr))
		if err != nil {
			return "", "", err
		}
		// A log whose header cannot be read (a crash while the session
		// was created, a newer panto's log), or one with nothing after
		// its header (an older panto's fork cut short), must not block
		// -c for good, nor be continued as if it were the last session:
		// skip it, say so, and leave the file alone.
		p, skipped := latestSession(list, func(s sessionFile) {
			if s.headerErr != nil {
				fmt.Fprintf(stderr, "panto: warning: --continue skips an unreadable log: %s\n", oneLine(s.headerErr.Error(), 300))
				return
			}
			fmt.Fprintf(stderr, "panto: warning: --continue skips %s: %s\n", s.path, headerOnlyWhy)
		})
		if p != "" {
			return p, "", nil
		}
		if skipped > 0 {
			return "", "", fmt.Errorf("--continue: no readable session to continue in %s (start one with plain panto)", d.CWD)
		}
		return "", "", fmt.Errorf("--continue: no session to continue in %s (start one with plain panto)", d.CWD)
	case o.resume != "":
		p, err := findSession(d, o.resume, warnOnce(stderr))
		return p, "", err
	}
	id = sessionlog.NewID()
	return newSessionPath(d.SessionDir(), id, now), id, nil
}

// headerOnlyWhy says why a log holding only its header is skipped.
const headerOnlyWhy = "it holds only its header, no entries (a panto was stopped while it created the log: an older panto's fork cut short, say); resume it by name with --session if you mean it, or delete it"

// latestSession returns the first log of list (newest first) that can be
// continued, and how many it passed over: those whose header cannot be
// read and those with nothing after their header (sessionlog.HeaderOnly).
// skip is told of each one passed over.
func latestSession(list []sessionFile, skip func(sessionFile)) (string, int) {
	skipped := 0
	for _, s := range list {
		if s.headerErr == nil {
			if empty, err := sessionlog.HeaderOnly(s.path); err != nil || !empty {
				return s.path, skipped
			}
		}
		skipped++
		if skip != nil {
			skip(s)
		}
	}
	return "", skipped
}

// absIn is path made absolute against dir (the working directory).
func absIn(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// findSession finds the session whose id is, or starts with, prefix: in
// this directory's sessions first (dirSessions), then in every directory's.
// What is not a regular file is skipped and reported to warn.
func findSession(d layers.Dirs, prefix string, warn func(string)) (string, error) {
	match := func(list []sessionFile) []string {
		var hits []string
		for _, s := range list {
			if strings.HasPrefix(s.id, prefix) {
				hits = append(hits, s.path)
			}
		}
		return hits
	}
	here, err := dirSessions(d, warn)
	if err != nil {
		return "", err
	}
	hits := match(here)
	if len(hits) == 0 {
		all, _ := filepath.Glob(filepath.Join(d.Sessions, "*"))
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
		return "", fmt.Errorf("--resume %s: no session with that id (see panto session list)", prefix)
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("--resume %s: %d sessions match; give more of the id:\n  %s", prefix, len(hits), strings.Join(hits, "\n  "))
}
