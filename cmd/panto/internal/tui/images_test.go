package tui

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

func writePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

func (f *fakeSession) attachedBlocks() [][]conversation.Block {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]conversation.Block(nil), f.attachedSent...)
}

func imageCount(blocks []conversation.Block) int {
	n := 0
	for _, b := range blocks {
		if b.Type == conversation.TypeImage {
			n++
		}
	}
	return n
}

func seenTurn(ctx context.Context, text string, ch chan<- host.Event) {
	ch <- host.TurnStart{Text: text}
	ch <- host.Reply{Message: conversation.AssistantText("seen"), StopReason: host.StopEndTurn}
	ch <- host.TurnEnd{}
}

// A pasted path of an image file waits above the editor as the image's
// name, size and dimensions, and goes with the message sent; the
// transcript's message shows it the same way.
func TestGoldenImagePaste(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shot := filepath.Join(dir, "my shot.png")
	writePNG(t, shot, 40, 30)
	st, err := os.Stat(shot)
	require.NoError(t, err)
	label := "my shot.png, " + itoaB(int(st.Size())) + ", 40×30"
	f := goldenFake()
	f.turn = seenTurn
	tm := teatest.NewTestModel(t, goldenModel(t, f), teatest.WithInitialTermSize(80, 20),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	s := newScreen(80, 20, tm.Output())
	s.waitFor(t, "claude-test")
	// As a terminal pastes a file dropped on it: quoted.
	tm.Send(tea.PasteMsg{Content: "'" + shot + "'"})
	s.waitFor(t, "▣ image 1: "+label, "Backspace in an empty editor takes the last off")
	tm.Type("what is in it?")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	got := s.waitFor(t, "seen", "▌ ▣ image: "+label)
	require.NotContains(t, got, "▣ image 1:", "the image went with the message")
	golden.RequireEqual(t, got)
	sent := f.attachedBlocks()
	require.Len(t, sent, 1)
	require.Equal(t, 1, imageCount(sent[0]))
	require.Equal(t, []string{"what is in it?"}, f.sentTexts())
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// @path in a message attaches the image it names; Backspace in the
// empty editor takes off a pasted one; a mention of a file named as an
// image that is not one keeps the message in the editor, unsent.
func TestImageMentionAndRefusal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"), 3, 2)
	writePNG(t, filepath.Join(dir, "b.png"), 5, 5)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fake.png"), []byte("text"), 0o644))
	f := goldenFake()
	f.turn = seenTurn
	m := goldenModel(t, f, func(o *Options) { o.CWD = dir })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 20),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	s := newScreen(80, 20, tm.Output())
	s.waitFor(t, "claude-test")

	tm.Send(tea.PasteMsg{Content: filepath.Join(dir, "b.png")})
	s.waitFor(t, "▣ image 1: b.png")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	got := s.waitFor(t, "image taken off: b.png")
	require.NotContains(t, got, "▣ image 1:")

	tm.Type("see @fake.png please")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	got = s.waitFor(t, "not sent: attach fake.png: not a PNG, JPEG, GIF or WebP image")
	require.Contains(t, got, "see @fake.png please", "the message stays in the editor")
	require.Empty(t, f.sentTexts())
	tm.Send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})

	tm.Type("compare @a.png now")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	s.waitFor(t, "seen", "▣ image: a.png, ")
	sent := f.attachedBlocks()
	require.Len(t, sent, 1)
	require.Equal(t, 1, imageCount(sent[0]), "the image @a.png names, not the one taken off")
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func itoaB(n int) string { return byteSize(n) }
