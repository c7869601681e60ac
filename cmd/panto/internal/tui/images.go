package tui

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/attach"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
)

// Images the user attaches to the next message: a pasted path of an
// image file, the clipboard's image (Ctrl-V). They wait above the editor
// as "image 1: shot.png, 1.2 MB, 1920×1080" and go with the next message
// sent; Backspace in an empty editor takes the last one off. An @path
// typed in the message attaches its image when the message is sent.

// clipImageMsg is what the clipboard tool gave (pasteImage).
type clipImageMsg struct {
	im   attach.Image
	tool string
	err  error
}

// pasteImage is Ctrl-V: the clipboard's image is read off the UI's
// loop by the display's tool (attach.Clipboard), found on the UI's PATH.
func (m *Model) pasteImage() tea.Cmd {
	getenv := m.getenv
	c := attach.Clipboard{
		GOOS:   runtime.GOOS,
		Getenv: getenv,
		LookPath: func(name string) (string, error) {
			if p := lookPath(getenv("PATH"), name); p != "" {
				return p, nil
			}
			return "", exec.ErrNotFound
		},
	}
	ctx := m.ctx
	m.say(transcript.Quiet, "reading the clipboard's image…")
	return func() tea.Msg {
		im, tool, err := c.Image(ctx)
		return clipImageMsg{im, tool, err}
	}
}

// clipImage attaches the clipboard's image, or says why there is none.
func (m *Model) clipImage(msg clipImageMsg) tea.Cmd {
	if msg.err != nil {
		m.say(transcript.Warning, "Ctrl-V: "+msg.err.Error())
		return nil
	}
	m.attachImage(msg.im, "from the clipboard ("+msg.tool+")")
	return nil
}

// pastedImage attaches the image a paste names, when the paste is the
// path of an image file; it reports whether the paste was taken.
func (m *Model) pastedImage(s string) bool {
	im, ok, err := attach.Pasted(s, m.o.CWD)
	switch {
	case !ok:
		return false
	case err != nil:
		m.say(transcript.Error, "not attached: "+err.Error())
	default:
		m.attachImage(im, "pasted")
	}
	return true
}

// attachImage puts an image with the next message.
func (m *Model) attachImage(im attach.Image, how string) {
	m.attached = append(m.attached, im)
	m.say(transcript.Quiet, fmt.Sprintf("image %d attached, %s: %s", len(m.attached), how, im.Label()))
	m.list.Changed()
}

// dropImage is Backspace in an empty editor: the last image attached is
// taken off; false when there is none.
func (m *Model) dropImage() bool {
	if len(m.attached) == 0 || m.ed.message() != "" {
		return false
	}
	im := m.attached[len(m.attached)-1]
	m.attached = m.attached[:len(m.attached)-1]
	m.say(transcript.Quiet, "image taken off: "+im.Label())
	m.list.Changed()
	return true
}

// takeImages returns the images to send with text — those attached and
// those text names with @path — and clears the attached ones. An error,
// and nothing taken, when an @path names an image that cannot be
// attached.
func (m *Model) takeImages(text string) ([]attach.Image, error) {
	named, err := attach.Mentions(text, m.o.CWD)
	if err != nil {
		return nil, err
	}
	out := append(m.attached, named...)
	m.attached = nil
	return out, nil
}

// imageLines are the images waiting for the next message, above the
// editor.
func (m *Model) imageLines() []string {
	if len(m.attached) == 0 {
		return nil
	}
	th := m.th
	var out []string
	for i, im := range m.attached {
		line := fmt.Sprintf("  ▣ image %d: %s", i+1, im.Label())
		out = append(out, m.guard(th.Dim.Render(ansi.Truncate(safeText(line), m.width, "…"))))
	}
	out = append(out, m.guard(th.Dim.Render(ansi.Truncate("    sent with the next message · Backspace in an empty editor takes the last off", m.width, "…"))))
	return out
}

// safeText is one line of outside text (a file's name) as the UI draws
// it.
func safeText(s string) string { return termtext.Line(strings.Join(strings.Fields(s), " ")) }

// imageBlocks are the blocks of images, and their labels.
func imageBlocks(ims []attach.Image) ([]conversation.Block, []string) {
	var blocks []conversation.Block
	var labels []string
	for _, im := range ims {
		blocks = append(blocks, im.Blocks()...)
		labels = append(labels, im.Label())
	}
	return blocks, labels
}
