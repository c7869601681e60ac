package lineloop

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/panto-dev/panto/cmd/panto/internal/describe"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/treeview"
	"github.com/panto-dev/panto/host"
)

// textView shows events as text: the reply on stdout as it streams, tool
// calls, retries and compaction as progress lines (on stderr in print mode,
// so that stdout carries only the reply; inline in the line loop), and
// notices on stderr.
type textView struct {
	out, progress, errw io.Writer
	// interactive is set in the line loop.
	interactive bool

	mu sync.Mutex
	// atLineStart is set when what was written to out ends a line.
	atLineStart bool
	// autoCompact is set while an automatic compaction runs.
	autoCompact bool
}

func newTextView(o Options, interactive bool) *textView {
	v := &textView{out: o.Stdout, progress: o.Stderr, errw: o.Stderr, atLineStart: true, interactive: interactive}
	if interactive {
		v.progress = o.Stdout
	}
	return v
}

// ShowNotices shows the notices of events on stderr as print mode and
// the line loop do (panto prompt: a session opened to read its prompt,
// whose other events nobody shows), until the channel closes.
func ShowNotices(stderr io.Writer, events <-chan host.Event) {
	v := &textView{out: io.Discard, progress: io.Discard, errw: stderr, atLineStart: true}
	for ev := range events {
		if n, ok := ev.(host.Notice); ok {
			v.show(n)
		}
	}
}

func (v *textView) show(ev host.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch ev := ev.(type) {
	case host.TextDelta:
		v.write(ev.Text)
	case host.Reply:
		if !ev.Streamed {
			v.write(ev.Message.Text())
		}
	case host.ToolStart:
		v.endLine()
		fmt.Fprintf(v.progress, "→ %s %s\n", describe.ToolName(ev.Name), termtext.OneLine(string(ev.Input), 100))
	case host.ToolEnd:
		mark := "←"
		if ev.IsError {
			mark = "✗"
		}
		summary := termtext.OneLine(ev.Excerpt, 80)
		if ev.Lines > 1 {
			summary = fmt.Sprintf("%s (%d lines)", summary, ev.Lines)
		}
		fmt.Fprintf(v.progress, "%s %s: %s\n", mark, describe.ToolName(ev.Name), summary)
	case host.ToolsChanged:
		v.endLine()
		fmt.Fprintf(v.errw, "panto: %s\n", describe.ToolsChange(ev.Reason, ev.Added, ev.Removed, ev.Changed))
	case host.Retry:
		v.endLine()
		fmt.Fprintf(v.errw, "panto: retry %d of %d in %.1f s: %s\n", ev.Attempt, ev.Max, ev.Wait.Seconds(), termtext.OneLine(ev.Reason, 200))
	case host.CompactionStart:
		// /compact reports itself; an automatic one is told here.
		v.autoCompact = ev.Auto
		if ev.Auto {
			v.endLine()
			fmt.Fprintf(v.errw, "panto: the context is near its limit (~%d tokens): compacting older messages\n", ev.Tokens)
		}
	case host.CompactionDone:
		switch {
		case !v.autoCompact:
		case ev.Err != nil:
			fmt.Fprintf(v.errw, "panto: compaction failed: %v\n", ev.Err)
		default:
			fmt.Fprintf(v.errw, "panto: compacted: the next request is ~%d tokens; the system prompt is unchanged\n", ev.Tokens)
		}
	case host.Moved:
		if v.interactive {
			break // /tree ID says so itself
		}
		v.endLine()
		fmt.Fprintf(v.errw, "panto: continuing from entry %s, as a new branch\n", treeview.Short(ev.To))
	case host.Notice:
		v.endLine()
		by := "panto"
		if ev.By != "" {
			by += ": " + ev.By // an extension's Notify
		}
		ev.Text = NoticeText(ev.Text)
		switch ev.Level {
		case host.NoticeWarning:
			fmt.Fprintf(v.errw, "%s: warning: %s\n", by, ev.Text)
		case host.NoticeError:
			if ev.By != "" {
				fmt.Fprintf(v.errw, "%s: error: %s\n", by, ev.Text)
				break
			}
			fmt.Fprintf(v.errw, "%s: %s\n", by, ev.Text)
		default:
			fmt.Fprintf(v.errw, "%s: %s\n", by, ev.Text)
		}
	case host.TurnEnd:
		v.endLine()
		termtext.Flush(v.out, v.errw)
	}
}

// write writes reply text to out.
func (v *textView) write(s string) {
	if s == "" {
		return
	}
	io.WriteString(v.out, s)
	v.atLineStart = strings.HasSuffix(s, "\n")
}

// endLine ends the reply's line, so that what follows starts a new one.
func (v *textView) endLine() {
	if !v.atLineStart {
		io.WriteString(v.out, "\n")
		v.atLineStart = true
	}
}

func (v *textView) output(_, text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endLine()
	io.WriteString(v.out, text)
	termtext.Flush(v.out)
}

// maxNoticeText is the most of a notice's text the line loop and print
// mode show (the full-screen UI keeps as much): a notice is a line or a
// few, not a channel for megabytes.
const maxNoticeText = 4 << 10

// NoticeText is a notice's text as shown on stderr: at most
// maxNoticeText bytes (cut at a rune, saying how much more there was),
// every line after the first indented, so that no line of it can pass for
// one of panto's own ("panto: …").
func NoticeText(s string) string {
	if len(s) > maxNoticeText {
		cut := maxNoticeText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
	}
	s = strings.TrimRight(s, "\n")
	return strings.ReplaceAll(s, "\n", "\n    ")
}
