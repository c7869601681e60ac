package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/sessionlog"
)

// sessionFile is a session log found on disk.
type sessionFile struct {
	path    string
	id      string
	modTime time.Time
}

// newSessionPath names the log of a new session in dir:
// <UTC time>_<id>.jsonl, so names sort by creation time.
func newSessionPath(dir, id string, now time.Time) string {
	return filepath.Join(dir, now.UTC().Format("20060102T150405Z")+"_"+id+".jsonl")
}

// listSessions returns the session logs in dir, newest first.
func listSessions(dir string) ([]sessionFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", dir, err)
	}
	var out []sessionFile
	for _, de := range ents {
		name := de.Name()
		if de.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		id := strings.TrimSuffix(name, ".jsonl")
		if _, after, ok := strings.Cut(id, "_"); ok {
			id = after
		}
		out = append(out, sessionFile{path: filepath.Join(dir, name), id: id, modTime: info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].modTime.Equal(out[j].modTime) {
			return out[i].modTime.After(out[j].modTime)
		}
		return out[i].path > out[j].path
	})
	return out, nil
}

// pickSession turns the session flags into a log path (empty with
// --no-session) and, for a new session, its id.
func pickSession(d layers.Dirs, o *options, now time.Time) (path, id string, err error) {
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
		return p, "", nil
	case o.continueLast:
		list, err := listSessions(d.SessionDir())
		if err != nil {
			return "", "", err
		}
		if len(list) == 0 {
			return "", "", fmt.Errorf("--continue: no session to continue in %s (start one with plain panto)", d.CWD)
		}
		return list[0].path, "", nil
	case o.resume != "":
		p, err := findSession(d, o.resume)
		return p, "", err
	}
	id = sessionlog.NewID()
	return newSessionPath(d.SessionDir(), id, now), id, nil
}

// findSession finds the session whose id is, or starts with, prefix: in
// this directory's sessions first, then in every directory's.
func findSession(d layers.Dirs, prefix string) (string, error) {
	search := func(dirs []string) ([]string, error) {
		var hits []string
		for _, dir := range dirs {
			list, err := listSessions(dir)
			if err != nil {
				return nil, err
			}
			for _, s := range list {
				if strings.HasPrefix(s.id, prefix) {
					hits = append(hits, s.path)
				}
			}
		}
		return hits, nil
	}
	hits, err := search([]string{d.SessionDir()})
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		all, _ := filepath.Glob(filepath.Join(d.Sessions, "*"))
		if hits, err = search(all); err != nil {
			return "", err
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
