package sessionlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

func TestBranching(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	first, err := w.Append(
		MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)),
		MessageEntry(conversation.UserText("q1")),
		MessageEntry(conversation.AssistantText("a1")),
		MessageEntry(conversation.UserText("q2")),
	)
	require.NoError(t, err)
	require.Empty(t, first[0].ParentID, "the first entry is the root")
	for i := 1; i < len(first); i++ {
		require.Equal(t, first[i-1].ID, first[i].ParentID, "a batch is a chain")
	}
	require.Equal(t, first[3].ID, w.Leaf())

	// Go back to after a1's question: branch from q1.
	second, err := w.Append(
		MessageEntry(conversation.SystemMessage("new seed", conversation.ModeReplace)).WithParent(first[1].ID),
		MessageEntry(conversation.AssistantText("a1 again")),
	)
	require.NoError(t, err)
	require.Equal(t, first[1].ID, second[0].ParentID)
	require.Equal(t, second[0].ID, second[1].ParentID)
	third, err := w.Append(MessageEntry(conversation.UserText("q3")))
	require.NoError(t, err)
	require.Equal(t, second[1].ID, third[0].ParentID, "the default parent is the leaf")
	require.NoError(t, w.Close())

	// The leaf and the branch come from the file alone.
	log, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, third[0].ID, log.Leaf().ID)
	msgs := log.Messages()
	require.Equal(t, []string{"seed", "q1", "new seed", "a1 again", "q3"}, texts(msgs))
	require.Equal(t, []string{"new seed"}, conversation.Texts(conversation.EffectiveSystem(msgs)))
	old, err := log.MessagesAt(first[3].ID)
	require.NoError(t, err)
	require.Equal(t, []string{"seed", "q1", "a1", "q2"}, texts(old))
	require.Equal(t, []string{"seed"}, conversation.Texts(conversation.EffectiveSystem(old)))
	branch, err := log.Branch(first[3].ID)
	require.NoError(t, err)
	require.Equal(t, ids(first), ids(branch))
	_, err = log.Branch("nope")
	require.ErrorContains(t, err, `no entry with id "nope"`)
	require.Nil(t, log.Find("nope"))

	// Reopened, the writer continues the leaf.
	w, log, err = Open(path)
	require.NoError(t, err)
	require.Equal(t, third[0].ID, log.Leaf().ID)
	require.Equal(t, third[0].ID, w.Leaf())
	fourth, err := w.Append(MessageEntry(conversation.AssistantText("a3")))
	require.NoError(t, err)
	require.Equal(t, third[0].ID, fourth[0].ParentID)
	// Back to the first branch's end, after a reopen.
	_, err = w.Append(MessageEntry(conversation.AssistantText("a2")).WithParent(first[3].ID))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	log, err = Read(path)
	require.NoError(t, err)
	require.Equal(t, []string{"seed", "q1", "a1", "q2", "a2"}, texts(log.Messages()))
}

func TestCreatePermissions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions", "proj")
	path := filepath.Join(dir, "s.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	for p, want := range map[string]os.FileMode{dir: os.ModeDir | 0o700, path: 0o600, path + ".lock": 0o600} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, want, st.Mode(), p)
	}
	h := w.Header()
	require.Equal(t, Version, h.Version)
	require.Regexp(t, `^[0-9a-f-]{36}$`, h.ID)
	require.WithinDuration(t, time.Now(), h.Created, time.Minute)
	require.Equal(t, path, w.Path())
	require.Empty(t, w.Leaf())
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "closing twice is fine")
	require.NoFileExists(t, path+".lock")
	_, err = w.Append(MessageEntry(conversation.UserText("late")))
	require.ErrorIs(t, err, os.ErrClosed)

	got, err := ReadHeader(path)
	require.NoError(t, err)
	require.Equal(t, h, got)
}

func TestCreateRefuses(t *testing.T) {
	t.Parallel()
	path, _ := writeSample(t, t.TempDir())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for range 2 { // the failed Create released its lock: same error again
		_, err = Create(path, Header{Cwd: "/p"})
		require.ErrorIs(t, err, os.ErrExist)
		require.ErrorContains(t, err, "create session log "+path)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)

	_, err = Create(filepath.Join(t.TempDir(), "r.jsonl"), Header{Cwd: "relative/dir"})
	require.ErrorContains(t, err, `cwd "relative/dir" is not an absolute path`)
	_, err = Create(filepath.Join(t.TempDir(), "v.jsonl"), Header{Version: 2, Cwd: "/"})
	require.ErrorContains(t, err, "writes format version 1, not 2")
}

func TestOpenRepairsTornLastLine(t *testing.T) {
	t.Parallel()
	path, recorded := writeSample(t, t.TempDir())
	complete, err := os.ReadFile(path)
	require.NoError(t, err)
	// A crash in the middle of a write, by hand.
	torn := `{"type":"message","id":"ffffffffffffffff","parent_id":"00000000000000af","time":"2026-03-14T09:27:09Z","message":{"role":"us`
	require.NoError(t, os.WriteFile(path, append(bytes.Clone(complete), torn...), 0o600))

	w, log, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, recorded, log.Entries)
	require.Len(t, log.Warnings, 1)
	require.Contains(t, log.Warnings[0], fmt.Sprintf("session log %s line %d: repaired torn last line: cut %d bytes", path, len(recorded)+2, len(torn)))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(complete), string(got), "everything before the torn line intact, the tail cut")

	added, err := w.Append(MessageEntry(conversation.UserText("after the crash")))
	require.NoError(t, err)
	require.Equal(t, recorded[len(recorded)-1].ID, added[0].ParentID)
	require.NoError(t, w.Close())
	log, err = Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, append(recorded, added...), log.Entries)
}

func TestOpenEndsLastLineWithoutNewline(t *testing.T) {
	t.Parallel()
	content := testHeader + "\n" + line("e1", "", userHi)
	path := writeFile(t, "s.jsonl", content)
	w, log, err := Open(path)
	require.NoError(t, err)
	require.Len(t, log.Warnings, 1)
	require.Contains(t, log.Warnings[0], "added the missing newline")
	_, err = w.Append(MessageEntry(conversation.UserText("two")))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	ls := lines(t, path)
	require.Len(t, ls, 3)
	require.Equal(t, line("e1", "", userHi), ls[1])
	log, err = Read(path)
	require.NoError(t, err)
	require.Equal(t, []string{"hi", "two"}, texts(log.Messages()))
}

func TestConcurrentAppend(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	const goroutines, calls = 8, 40
	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for c := range calls {
				var es []Entry
				for k := range 1 + c%3 {
					es = append(es, MessageEntry(conversation.UserText(fmt.Sprintf("g%d c%d k%d %s", g, c, k, strings.Repeat("x", 5000*(c%2))))))
				}
				got, err := w.Append(es...)
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				for _, e := range got {
					acked[e.ID] = e.Message.Text()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())

	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Len(t, log.Entries, len(acked))
	for i, e := range log.Entries {
		require.Equal(t, acked[e.ID], e.Message.Text())
		if i > 0 {
			require.Equal(t, log.Entries[i-1].ID, e.ParentID, "parents form one chain in file order")
		}
	}
	// A batch's entries are adjacent: never interleaved with another call's.
	for i := 0; i < len(log.Entries); {
		var g, c, k int
		_, err := fmt.Sscanf(log.Entries[i].Message.Text(), "g%d c%d k%d", &g, &c, &k)
		require.NoError(t, err)
		require.Zero(t, k, "a batch starts with its first entry")
		for k := range 1 + c%3 {
			require.True(t, strings.HasPrefix(log.Entries[i+k].Message.Text(), fmt.Sprintf("g%d c%d k%d ", g, c, k)))
		}
		i += 1 + c%3
	}
}

// assertNoError reports err from a goroutine other than the test's.
func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// failingFile wraps the log file: after failAfter bytes, writes stop
// short with an error; syncErr fails Sync.
type failingFile struct {
	logFile
	failAfter int
	syncErr   error
}

func (f *failingFile) Write(p []byte) (int, error) {
	if f.failAfter >= 0 && len(p) > f.failAfter {
		n, _ := f.logFile.Write(p[:f.failAfter])
		return n, errors.New("no space left on device (injected)")
	}
	return f.logFile.Write(p)
}

func (f *failingFile) Sync() error {
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.logFile.Sync()
}

func TestAppendWriteFailureLeavesNoHalfLine(t *testing.T) {
	t.Parallel()
	path, recorded := writeSample(t, t.TempDir())
	complete, err := os.ReadFile(path)
	require.NoError(t, err)
	w, _, err := Open(path)
	require.NoError(t, err)
	defer w.Close()
	ff := &failingFile{logFile: w.f, failAfter: 150}
	w.f = ff

	_, err = w.Append(MessageEntry(conversation.UserText(strings.Repeat("lost ", 100))), MessageEntry(conversation.UserText("lost too")))
	require.ErrorContains(t, err, "append to session log "+path+": no space left on device")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(complete), string(got), "the half-written batch was cut off")
	require.Equal(t, recorded[len(recorded)-1].ID, w.Leaf(), "the leaf did not move")

	// The writer is still good: the next append is whole and follows the
	// old leaf.
	ff.failAfter = -1
	added, err := w.Append(MessageEntry(conversation.UserText("kept")))
	require.NoError(t, err)
	require.Equal(t, recorded[len(recorded)-1].ID, added[0].ParentID)
	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, append(recorded, added...), log.Entries)
}

func TestAppendFsyncFailureBreaksWriter(t *testing.T) {
	t.Parallel()
	path, recorded := writeSample(t, t.TempDir())
	complete, err := os.ReadFile(path)
	require.NoError(t, err)
	w, _, err := Open(path)
	require.NoError(t, err)
	w.f = &failingFile{logFile: w.f, failAfter: -1, syncErr: errors.New("input/output error (injected)")}

	_, err = w.Append(MessageEntry(conversation.UserText("maybe")))
	require.ErrorContains(t, err, "fsync: input/output error")
	_, err = w.Append(MessageEntry(conversation.UserText("refused")))
	require.ErrorContains(t, err, "the writer is broken by an earlier failure")
	require.ErrorContains(t, err, "close it and open the log again")
	require.NoError(t, w.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(complete), string(got), "the unacknowledged entry was cut back")

	w, log, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, recorded, log.Entries)
	require.NoError(t, w.Close())
}

func TestAppendNothing(t *testing.T) {
	t.Parallel()
	path, _ := writeSample(t, t.TempDir())
	w, _, err := Open(path)
	require.NoError(t, err)
	defer w.Close()
	got, err := w.Append()
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestOpenMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "none.jsonl"), filepath.Join(dir, "no", "dir.jsonl")} {
		_, _, err := Open(path)
		require.ErrorIs(t, err, os.ErrNotExist)
		require.ErrorContains(t, err, "open session log: ")
		require.ErrorContains(t, err, path+": no such file")
		require.NoFileExists(t, path+".lock")
	}
}
