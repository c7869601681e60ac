package app

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/host"
)

// fakeSession is a Session that implements only what Switch calls: Info
// and Close. Any other method panics (the embedded interface is nil).
type fakeSession struct {
	Session
	name     string
	path     string
	closeErr error
	steps    *steps
}

func (f *fakeSession) Info() host.Info { return host.Info{ID: f.name, Path: f.path} }

func (f *fakeSession) Close(context.Context) error {
	f.steps.add("close " + f.name)
	return f.closeErr
}

// steps records what a switch did, in order.
type steps struct {
	mu   sync.Mutex
	list []string
}

func (s *steps) add(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, step)
}

func (s *steps) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

// opener is Switch's open: it opens a fake session per path, failing
// for the paths in fail.
func opener(st *steps, fail map[string]error) (func(context.Context, string) (Session, error), map[string][]*fakeSession) {
	opened := map[string][]*fakeSession{}
	var mu sync.Mutex
	return func(_ context.Context, path string) (Session, error) {
		st.add("open " + path)
		if err := fail[path]; err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		s := &fakeSession{name: "opened " + path, path: path, steps: st}
		opened[path] = append(opened[path], s)
		return s, nil
	}, opened
}

// A recorded session is closed first (its log's lock released), then
// the other opens: the one in use is the other.
func TestSwitchRecorded(t *testing.T) {
	t.Parallel()
	st := &steps{}
	from := &fakeSession{name: "a", path: "/s/a.jsonl", steps: st}
	open, opened := opener(st, nil)
	sw := Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"close a", "open /s/b.jsonl"}, st.all())
	require.Len(t, opened["/s/b.jsonl"], 1)
	require.Same(t, opened["/s/b.jsonl"][0], sw.Session)
	require.False(t, sw.Kept)
	require.NoError(t, sw.Err)
	require.NoError(t, sw.BackErr)
	require.NoError(t, sw.CloseErr)
}

// A recorded session whose target fails to open is opened again from
// its log: the front end keeps a session, the reopened one, and is told
// why the target failed.
func TestSwitchRecordedTargetFails(t *testing.T) {
	t.Parallel()
	st := &steps{}
	from := &fakeSession{name: "a", path: "/s/a.jsonl", steps: st}
	bad := errors.New("b is locked")
	open, opened := opener(st, map[string]error{"/s/b.jsonl": bad})
	sw := Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"close a", "open /s/b.jsonl", "open /s/a.jsonl"}, st.all())
	require.Len(t, opened["/s/a.jsonl"], 1)
	require.Same(t, opened["/s/a.jsonl"][0], sw.Session, "the one left, opened again")
	require.NotSame(t, from, sw.Session, "the one left was closed: not it")
	require.False(t, sw.Kept, "something was closed")
	require.ErrorIs(t, sw.Err, bad)
	require.NoError(t, sw.BackErr)
	require.NoError(t, sw.CloseErr)
}

// When the one left cannot be opened again either, the front end has no
// session, and is told both errors.
func TestSwitchRecordedBackFails(t *testing.T) {
	t.Parallel()
	st := &steps{}
	from := &fakeSession{name: "a", path: "/s/a.jsonl", steps: st}
	bad, gone := errors.New("b is locked"), errors.New("a was deleted")
	open, _ := opener(st, map[string]error{"/s/b.jsonl": bad, "/s/a.jsonl": gone})
	sw := Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"close a", "open /s/b.jsonl", "open /s/a.jsonl"}, st.all())
	require.Nil(t, sw.Session)
	require.False(t, sw.Kept)
	require.ErrorIs(t, sw.Err, bad)
	require.ErrorIs(t, sw.BackErr, gone)
	require.NoError(t, sw.CloseErr)
}

// A failure to close the session left is told, and the switch goes on:
// to the target, or back when the target fails.
func TestSwitchCloseFails(t *testing.T) {
	t.Parallel()
	shut := errors.New("session_end hook failed")

	st := &steps{}
	from := &fakeSession{name: "a", path: "/s/a.jsonl", closeErr: shut, steps: st}
	open, opened := opener(st, nil)
	sw := Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"close a", "open /s/b.jsonl"}, st.all())
	require.Same(t, opened["/s/b.jsonl"][0], sw.Session)
	require.ErrorIs(t, sw.CloseErr, shut)
	require.NoError(t, sw.Err)

	st = &steps{}
	from = &fakeSession{name: "a", path: "/s/a.jsonl", closeErr: shut, steps: st}
	bad := errors.New("b is locked")
	open, opened = opener(st, map[string]error{"/s/b.jsonl": bad})
	sw = Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"close a", "open /s/b.jsonl", "open /s/a.jsonl"}, st.all())
	require.Same(t, opened["/s/a.jsonl"][0], sw.Session)
	require.ErrorIs(t, sw.CloseErr, shut)
	require.ErrorIs(t, sw.Err, bad)
	require.NoError(t, sw.BackErr)

	// An unrecorded session's close fails after the other opened.
	st = &steps{}
	from = &fakeSession{name: "mem", steps: st, closeErr: shut}
	open, opened = opener(st, nil)
	sw = Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"open /s/b.jsonl", "close mem"}, st.all())
	require.Same(t, opened["/s/b.jsonl"][0], sw.Session)
	require.ErrorIs(t, sw.CloseErr, shut)
	require.False(t, sw.Kept)
}

// A session not recorded (--no-session) cannot be opened again: it is
// closed only once the other has opened, and kept, open, when that
// fails.
func TestSwitchUnrecorded(t *testing.T) {
	t.Parallel()
	st := &steps{}
	from := &fakeSession{name: "mem", steps: st}
	open, opened := opener(st, nil)
	sw := Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"open /s/b.jsonl", "close mem"}, st.all(), "closed after the other opened")
	require.Same(t, opened["/s/b.jsonl"][0], sw.Session)
	require.False(t, sw.Kept)
	require.NoError(t, sw.Err)

	st = &steps{}
	from = &fakeSession{name: "mem", steps: st}
	bad := errors.New("b is locked")
	open, opened = opener(st, map[string]error{"/s/b.jsonl": bad})
	sw = Switch(context.Background(), from, "/s/b.jsonl", open)
	require.Equal(t, []string{"open /s/b.jsonl"}, st.all(), "neither closed nor opened again")
	require.Same(t, from, sw.Session, "the one left, still open")
	require.True(t, sw.Kept)
	require.ErrorIs(t, sw.Err, bad)
	require.NoError(t, sw.BackErr)
	require.NoError(t, sw.CloseErr)
	require.Empty(t, opened)
}
