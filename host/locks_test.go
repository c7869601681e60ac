package host

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// answers runs f and fails the test when it has not returned by the time
// a deadlock would be plain (it is no measure of speed: f waits on
// nothing when it is right).
func answers(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s waited on the write or the scan under way", what)
	}
}

// While a change is being written (its write and fsync stand still in
// the hook), the session answers: its conversation, prompt, info and an
// extension's reads, none of which waits on the disk.
func TestReadsDoNotWaitOnAWrite(t *testing.T) {
	t.Parallel()
	s, _ := newSession(t, &script{})
	inWrite, release := make(chan struct{}), make(chan struct{})
	s.testWrite = func() {
		close(inWrite)
		<-release
	}
	edited := make(chan error, 1)
	go func() {
		edited <- recorder{s}.EditSystem("ext", extension.Edit{Mode: conversation.ModeAppend, Text: "Also this."})
	}()
	<-inWrite
	answers(t, "Messages", func() { require.Len(t, s.Messages(), 1) })
	answers(t, "EffectiveSystem", func() { require.Equal(t, []string{"seed"}, texts(s.EffectiveSystem())) })
	answers(t, "Info", func() { require.Equal(t, "m1", s.Info().Model) })
	answers(t, "an extension's Sections", func() { require.Empty(t, recorder{s}.Sections("ext")) })
	answers(t, "ContextUsage", func() { s.ContextUsage() })
	answers(t, "Tree", func() {
		tree, err := s.Tree()
		require.NoError(t, err)
		require.NotEmpty(t, tree.Leaf())
	})
	s.testWrite = nil
	close(release)
	require.NoError(t, <-edited)
	require.Equal(t, []string{"seed", "Also this."}, texts(s.EffectiveSystem()), "applied once written")
}

// While Tree scans the log (the scan stands still in the hook), the
// session answers and changes go on being recorded.
func TestTreeScanTakesNoLock(t *testing.T) {
	t.Parallel()
	s, path := newSession(t, &script{})
	inScan, release := make(chan struct{}), make(chan struct{})
	s.testTree = func() {
		close(inScan)
		<-release
	}
	scanned := make(chan error, 1)
	go func() {
		_, err := s.Tree()
		scanned <- err
	}()
	<-inScan
	s.testTree = nil
	answers(t, "Messages", func() { s.Messages() })
	answers(t, "Info", func() { s.Info() })
	answers(t, "an extension's change", func() {
		require.NoError(t, recorder{s}.EditSystem("ext", extension.Edit{Mode: conversation.ModeAppend, Text: "during the scan"}))
	})
	close(release)
	require.NoError(t, <-scanned)
	require.Contains(t, texts(conversation.EffectiveSystem(logMessages(t, path))), "during the scan")
}

// An extension that records a change while the session is still opening
// waits until Open has recorded the start: its change comes after the
// lifecycle entry, rendered with every variable, never before the
// configured prompt.
func TestAChangeDuringOpenWaitsForTheStart(t *testing.T) {
	t.Parallel()
	path := writeLog(t)
	cfg := config(path, "seed")
	cfg.Vars = map[string]string{"model": "m1"}
	recorded := make(chan error, 1)
	exts := &fakeExtensions{names: []string{"early"}}
	cfg.startExtensions = func(ctx context.Context, specs []extension.Spec, rec extension.Recorder, opts extension.Options) extensionSet {
		// The extension calls back as soon as it has started, while
		// Open goes on.
		returned := make(chan struct{})
		go func() {
			recorded <- rec.EditSystem("early", extension.Edit{Mode: conversation.ModeAppend, Text: "on {{model}}"})
			close(returned)
		}()
		// Give a change that did not wait the time to be recorded (then
		// it would stand before the seed); one that waits never returns
		// here.
		select {
		case <-returned:
		case <-time.After(100 * time.Millisecond):
		}
		return exts.start(ctx, specs, rec, opts)
	}
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	require.NoError(t, <-recorded)
	log, err := sessionlog.Read(path)
	require.NoError(t, err)
	var kinds []string
	for _, e := range log.Entries {
		switch {
		case e.Lifecycle != nil:
			kinds = append(kinds, "lifecycle")
		case e.Message != nil && e.Message.Role == conversation.RoleSystem:
			kinds = append(kinds, "system "+e.Message.Content[0].Text)
		}
	}
	require.Equal(t, []string{"system seed", "lifecycle", "system on m1"}, kinds)
}
