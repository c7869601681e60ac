package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// A fork that is cancelled, or that cannot be written, leaves nothing:
// no log (not even one holding only its header), no temporary file, no
// directory it made.
func TestForkLeavesNothingOnFailure(t *testing.T) {
	t.Parallel()
	model := &script{replies: []conversation.Message{conversation.AssistantText("a1")}}
	s, path := newSession(t, model)
	turn(context.Background(), s, "u1")

	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped by SIGTERM")
	cancel(stop)
	_, err := ForkContext(ctx, path, "", filepath.Join(dir, "f.jsonl"), "")
	require.ErrorIs(t, err, stop)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents)

	_, err = Fork(path, "", filepath.Join(dir, "missing", "f.jsonl"), "")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoDirExists(t, filepath.Join(dir, "missing"))

	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling.jsonl")))
	_, err = Fork(path, "", filepath.Join(dir, "dangling.jsonl"), "")
	require.ErrorContains(t, err, "already exists")
	require.NoFileExists(t, filepath.Join(dir, "nowhere"))
}
