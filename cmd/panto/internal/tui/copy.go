package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/conversation"
)

// /copy puts a block of the conversation on the clipboard: with no
// argument the last reply's text, with N the Nth-last block, counting
// the replies, the tools' outputs and the user's messages of the
// current branch (1 is the last). What is copied is the text as it was
// recorded (a reply's Markdown, a tool's output as the model got it),
// never the frame.
//
// It is written to the terminal as OSC 52 (tea.SetClipboard), which
// most terminals take, and — since some do not, and tmux drops it
// unless set-clipboard is on — it is also handed to the first
// clipboard tool found on PATH for the display there is: pbcopy on
// macOS, wl-copy under Wayland, xclip or xsel under X. The notice says
// which were used.

// copyBlock is a block /copy can copy.
type copyBlock struct {
	what, text string
}

// copyBlocks are the branch's blocks /copy counts, oldest first.
func copyBlocks(msgs []conversation.Message) []copyBlock {
	var out []copyBlock
	for _, msg := range msgs {
		switch msg.Role {
		case conversation.RoleAssistant:
			if t := msg.Text(); strings.TrimSpace(t) != "" {
				out = append(out, copyBlock{"reply", t})
			}
		case conversation.RoleUser, conversation.RoleTool:
			for _, b := range msg.Content {
				if b.Type == conversation.TypeToolResult {
					out = append(out, copyBlock{"tool output", b.ResultText()})
				}
			}
			if msg.Role == conversation.RoleUser {
				if t := msg.Typed(); strings.TrimSpace(t) != "" {
					out = append(out, copyBlock{"message", t})
				}
			}
		}
	}
	return out
}

// copiedMsg is a clipboard tool's end.
type copiedMsg struct {
	what string
	size int
	// tool is the clipboard tool run ("" none was found); err why it
	// failed.
	tool string
	err  error
	// tmux: OSC 52 may not get past tmux.
	tmux bool
}

// copyCmd is /copy [N].
func (m *Model) copyCmd(args string) tea.Cmd {
	if m.sess == nil {
		m.say(transcript.Quiet, "the session is still starting: /copy in a moment")
		return nil
	}
	blocks := copyBlocks(m.sess.Messages())
	arg := strings.TrimSpace(args)
	var b copyBlock
	switch {
	case arg == "":
		found := false
		for i := len(blocks) - 1; i >= 0; i-- {
			if blocks[i].what == "reply" {
				b, found = blocks[i], true
				break
			}
		}
		if !found {
			m.say(transcript.Quiet, "/copy: no reply yet to copy")
			return nil
		}
		b.what = "the last reply"
	default:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			m.say(transcript.Error, fmt.Sprintf("/copy %s: want a number, 1 for the last block (a reply, a tool's output or your message)", arg))
			return nil
		}
		if n > len(blocks) {
			m.say(transcript.Error, fmt.Sprintf("/copy %d: there are %d blocks to copy", n, len(blocks)))
			return nil
		}
		b = blocks[len(blocks)-n]
		b.what = fmt.Sprintf("the %s %d from the end", b.what, n)
	}
	return tea.Batch(tea.SetClipboard(b.text), m.clipboardToolCmd(b.what, b.text))
}

// clipboardToolCmd hands text to the clipboard tool of the display, if
// one is on PATH, and says what was done.
func (m *Model) clipboardToolCmd(what, text string) tea.Cmd {
	getenv := m.getenv
	tool, args := clipboardTool(getenv)
	msg := copiedMsg{what: what, size: len(text), tool: tool, tmux: getenv("TMUX") != ""}
	if tool == "" {
		return func() tea.Msg { return msg }
	}
	cwd := m.o.CWD
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, tool, args...)
		c.Dir = cwd
		c.Stdin = strings.NewReader(text)
		// wl-copy and xclip stay behind to serve the selection: their
		// output is not waited for.
		c.Stdout, c.Stderr = nil, nil
		c.WaitDelay = time.Second
		if err := c.Run(); err != nil {
			msg.err = fmt.Errorf("%s: %w", tool, err)
		}
		return msg
	}
}

// copied says what /copy did.
func (m *Model) copied(msg copiedMsg) tea.Cmd {
	how := "OSC 52"
	switch {
	case msg.tool != "" && msg.err == nil:
		how += " and " + filepath.Base(msg.tool)
	case msg.tool != "":
		how += "; " + errText(msg.err)
	}
	text := fmt.Sprintf("copied %s, %s (%s)", msg.what, byteSize(msg.size), how)
	if msg.tmux && (msg.tool == "" || msg.err != nil) {
		text += ": inside tmux it reaches the clipboard only with `set -g set-clipboard on`"
	}
	m.say(transcript.Quiet, text)
	return nil
}

// clipboardTool is the clipboard tool for the display there is, found
// on PATH, and its arguments; "" when there is none.
func clipboardTool(getenv func(string) string) (string, []string) {
	var try [][]string
	if runtime.GOOS == "darwin" {
		try = append(try, []string{"pbcopy"})
	}
	if getenv("WAYLAND_DISPLAY") != "" {
		try = append(try, []string{"wl-copy"})
	}
	if getenv("DISPLAY") != "" {
		try = append(try, []string{"xclip", "-selection", "clipboard"}, []string{"xsel", "--clipboard", "--input"})
	}
	for _, t := range try {
		if p := lookPath(getenv("PATH"), t[0]); p != "" {
			return p, t[1:]
		}
	}
	return "", nil
}

// lookPath finds the executable name in the directories of path.
func lookPath(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would run the project's file
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// byteSize is n bytes as a person reads it: 12 B, 1.2 kB, 3.4 MB.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}

// getenv is the UI's environment (Options.Getenv).
func (m *Model) getenv(k string) string {
	if m.o.Getenv != nil {
		return m.o.Getenv(k)
	}
	return os.Getenv(k)
}
