package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// How write and edit replace a file, so that a cancel or a signal at any
// moment leaves either the old file and an "interrupted" result, or the
// new file and a result that says it was written — and no temporary file:
//
//  1. The new content goes to a temporary file in the target's directory:
//     on Linux an unnamed one (O_TMPFILE), which the system removes
//     whenever the process ends, SIGKILL included; elsewhere, or where
//     the file system has no O_TMPFILE, a named one, ".NAME.RANDOM.tmp".
//  2. It is synced. Then, under the commit lock, the call's context is
//     checked one last time: cancelled, the temporary file goes and the
//     target is untouched. This is the only cancellation check of the
//     commit, and there is none after it.
//  3. The rename over the target is the commit point (an unnamed file is
//     first linked to a temporary name). After it the call reports the
//     change, whatever happens to its context.
//
// A named temporary file is listed, before it exists, in a journal in
// the tools extension's state folder ($XDG_STATE_HOME/panto/tools/tmp),
// which the process holds an flock(2) on while it runs. A SIGTERM or
// SIGHUP to the process, or the end of the session, removes every named
// temporary file first (under the commit lock, so never one being
// renamed). What a SIGKILL leaves — a named file of the fallback, or the
// instant between an unnamed file's link and its rename — is removed by
// the next tools process to start, which sweeps the journals no process
// holds.

// temps is the process's temporary files: one set, since a signal ends
// the whole process.
var temps = &tempSet{named: map[string]bool{}}

// tempSet tracks the named temporary files of a process.
type tempSet struct {
	// commit is held by a commit (link and rename) and, for good, by
	// shutdown: no commit starts once the process is ending.
	commit sync.Mutex

	mu        sync.Mutex
	named     map[string]bool // named temporary files that exist, or may
	dir       string          // journal folder; "" until setJournalDir
	journal   *os.File        // this process's journal, once one was needed
	noJournal bool            // the journal could not be made: go without
}

// setJournalDir makes dir the folder of the journals.
func (s *tempSet) setJournalDir(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dir = dir
}

// add records that the named temporary file p is about to exist: in the
// set, and in the journal, before it is created.
func (s *tempSet) add(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.named[p] = true
	if f := s.openJournal(); f != nil {
		// No sync: the journal only has to outlive a signal, not a crash.
		_, _ = f.WriteString(p + "\n")
	}
}

// done records that the named temporary file p is gone (renamed or
// removed). With none left, the journal is emptied.
func (s *tempSet) done(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.named, p)
	if len(s.named) == 0 && s.journal != nil {
		_ = s.journal.Truncate(0)
		_, _ = s.journal.Seek(0, 0)
	}
}

// openJournal returns the process's journal, creating and locking it on
// first use; nil when there is no journal folder or it cannot be made
// (temporary files are then removed on every failure and signal, but not
// after a SIGKILL). s.mu is held.
func (s *tempSet) openJournal() *os.File {
	if s.journal != nil || s.noJournal || s.dir == "" {
		return s.journal
	}
	f, err := func() (*os.File, error) {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, err
		}
		name := filepath.Join(s.dir, strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rand.Uint64(), 36)+journalSuffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		if err := lockJournal(f); err != nil {
			f.Close()
			os.Remove(name)
			return nil, err
		}
		return f, nil
	}()
	if err != nil {
		s.noJournal = true
		return nil
	}
	s.journal = f
	return f
}

// shutdown ends the process's writes: no commit starts from now on, and
// every named temporary file is removed, then the journal. The process
// is about to exit.
func (s *tempSet) shutdown() {
	s.commit.Lock() // never unlocked
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.named {
		_ = os.Remove(p)
		delete(s.named, p)
	}
	if s.journal != nil {
		removeThenClose(s.journal)
		s.journal = nil
	}
	s.noJournal = true
}

// journalSuffix ends a journal's name.
const journalSuffix = ".tmplist"

// sweep removes what tools processes that are gone left behind: for
// each journal in dir that no process holds, the temporary files it
// lists that still exist, then the journal. A journal whose process
// still runs (its flock is held) is left alone.
func sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), journalSuffix) {
			continue
		}
		name := filepath.Join(dir, de.Name())
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		if lockJournal(f) != nil {
			f.Close() // its process runs
			continue
		}
		for _, p := range journalPaths(f) {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				_ = os.Remove(p)
			}
		}
		removeThenClose(f)
	}
}

// removeThenClose removes a journal, then closes it: its lock is held
// until it is gone. Where an open file cannot be removed (Windows), it
// is removed after the close.
func removeThenClose(f *os.File) {
	err := os.Remove(f.Name())
	f.Close()
	if err != nil {
		_ = os.Remove(f.Name())
	}
}

// journalPaths reads a journal: one path a line. Only the lines that
// name a temporary file as tempName names them count (a journal cut
// short, or written by something else, removes nothing else).
func journalPaths(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<10)
	for sc.Scan() {
		if p := sc.Text(); isTempName(p) {
			out = append(out, p)
		}
	}
	return out
}

// tempName is the name of a named temporary file for base in dir.
func tempName(dir, base string) string {
	if len(base) > 200 { // leave room for the suffix within NAME_MAX
		base = base[:200]
	}
	return filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+tempSuffix)
}

const tempSuffix = ".tmp"

// isTempName reports whether p is an absolute path named as tempName
// names files: what sweep may remove.
func isTempName(p string) bool {
	b := filepath.Base(p)
	return filepath.IsAbs(p) && filepath.Clean(p) == p && !strings.ContainsRune(p, 0) &&
		strings.HasPrefix(b, ".") && strings.HasSuffix(b, tempSuffix) && strings.Count(b, ".") >= 3
}

// tempFile is a new file for target that becomes target on commit.
type tempFile struct {
	f    *os.File
	dir  string
	base string
	// name is its path while it has one: always for a named file, for an
	// unnamed one only between its link and its rename.
	name string
}

// errNoTmpfile is the error of openUnnamed where the system has no
// O_TMPFILE.
var errNoTmpfile = errors.New("no O_TMPFILE")

// noTmpfile, when set, makes newTemp use a named file (tests of the
// fallback; see testNoTmpfileEnv).
var noTmpfile bool

// newTemp creates the temporary file for target, with mode perm less the
// umask: unnamed where the file system allows, named otherwise.
func newTemp(target string, perm fs.FileMode) (*tempFile, error) {
	return makeTemp(target, perm, !noTmpfile)
}

// makeTemp is newTemp, trying O_TMPFILE only when unnamed is set.
func makeTemp(target string, perm fs.FileMode, unnamed bool) (*tempFile, error) {
	dir, base := filepath.Dir(target), filepath.Base(target)
	if unnamed {
		if f, err := openUnnamed(dir, perm); err == nil {
			return &tempFile{f: f, dir: dir, base: base}, nil
		}
	}
	for {
		name := tempName(dir, base)
		temps.add(name)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return &tempFile{f: f, dir: dir, base: base, name: name}, nil
		}
		temps.done(name)
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
}

// abort removes the temporary file: the target stays as it was.
func (t *tempFile) abort() {
	t.f.Close()
	if t.name != "" {
		_ = os.Remove(t.name)
		temps.done(t.name)
		t.name = ""
	}
}

// commit makes the temporary file target, unless ctx ended: the last
// check before the rename, under the commit lock. On error the target is
// unchanged and the temporary file is gone. The file is closed either
// way.
func (t *tempFile) commit(ctx context.Context, target string) error {
	temps.commit.Lock()
	defer temps.commit.Unlock()
	if ctx.Err() != nil {
		t.abort()
		return errInterrupted
	}
	if t.name == "" {
		if err := t.link(); err != nil {
			t.abort()
			return err
		}
	}
	// Closed before the rename, which Windows refuses for an open file;
	// it was synced, so the close loses nothing.
	if err := t.f.Close(); err != nil {
		t.abort()
		return err
	}
	if err := os.Rename(t.name, target); err != nil {
		t.abort()
		var le *os.LinkError
		if errors.As(err, &le) {
			return le.Err
		}
		return err
	}
	temps.done(t.name)
	t.name = ""
	return nil
}

// link gives an unnamed temporary file a temporary name.
func (t *tempFile) link() error {
	for {
		name := tempName(t.dir, t.base)
		temps.add(name)
		err := linkUnnamed(t.f, name)
		if err == nil {
			t.name = name
			return nil
		}
		temps.done(name)
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("link the new file into %s: %w", t.dir, err)
		}
	}
}

// errInterrupted is the error of a write or edit whose call was cancelled
// before its commit: nothing was written.
var errInterrupted = errors.New("interrupted by the user before the change was made; nothing was written")

// stateDir is the tools extension's state folder, from the environment
// panto gives it: $XDG_STATE_HOME/panto/tools, or ~/.local/state/...;
// "" when neither is known.
func stateDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "panto", "tools")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "panto", "tools")
	}
	return ""
}
