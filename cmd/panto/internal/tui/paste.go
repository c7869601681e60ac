package tui

import (
	"bytes"
	"io"
	"os"
)

// A bracketed paste arrives between ESC [200~ and ESC [201~, and the
// terminal does not escape its text: a paste holding "\e[201~\r" ended
// there, and the CR after it was an Enter — pasted text sent messages by
// itself. pasteGuard sits between the terminal and bubbletea's reader
// and holds to one rule: bytes that come with a paste's end marker
// belong to the paste. A terminal writes a paste in one go, its end
// marker last; what it wrote is read in one burst — a read, and the
// reads right after it while more bytes are already waiting. So, in a
// paste:
//
//   - an end marker followed by more bytes of its burst is the paste's
//     text: its ESC is shown as "␛" (an inner start marker's too);
//   - the paste ends with the burst that held its last end marker: the
//     bytes after that marker are its text too.
//
// Keys a person types come in bursts of their own and are keys. A marker
// cut by the end of a read is held until the next read when more bytes
// are waiting (that read comes at once); one cut between two bursts is
// judged in the burst it ends in: its end ends the paste there, and the
// rest of that burst is a paste of its own. An end marker with no paste
// open is a paste's too, with what comes with it (before it in its read,
// after it in its burst). None of a paste's bytes is ever a key.
type pasteGuard struct {
	r io.Reader
	// pending reports whether more bytes are waiting to be read (nil:
	// never, each read is a burst).
	pending func() bool
	// inPaste is set between a start marker and the paste's end; sawEnd
	// when an end marker was taken as text in this paste (it then ends
	// with the burst).
	inPaste, sawEnd bool
	// held is the start of a marker a read ended with, while more was
	// waiting: put before the next read. carry is the same at the end of
	// a burst, passed on already.
	held, carry []byte
	buf         []byte
}

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
	shownESC   = []byte("␛")
)

// newPasteGuard wraps the terminal: a file keeps its descriptor, so
// bubbletea still puts it in raw mode and can cancel a read.
func newPasteGuard(r io.Reader) io.Reader {
	g := &pasteGuard{r: r}
	if p, ok := r.(interface{ Pending() bool }); ok {
		g.pending = p.Pending
	}
	if f, ok := r.(*os.File); ok {
		g.pending = func() bool { return bytesWaiting(f.Fd()) }
		return &pasteGuardFile{pasteGuard: g, f: f}
	}
	return g
}

// pasteGuardFile is a pasteGuard over a terminal file.
type pasteGuardFile struct {
	*pasteGuard
	f *os.File
}

func (g *pasteGuardFile) Fd() uintptr                 { return g.f.Fd() }
func (g *pasteGuardFile) Name() string                { return g.f.Name() }
func (g *pasteGuardFile) Write(p []byte) (int, error) { return g.f.Write(p) }
func (g *pasteGuardFile) Close() error                { return g.f.Close() }

// Read reads once from the terminal and passes on what it read, a
// paste's markers judged. It reads at most half of p, so what it passes
// on (an ESC shown takes three bytes, a marker may be added) always fits.
func (g *pasteGuard) Read(p []byte) (int, error) {
	if len(p) < 64 {
		return g.r.Read(p) // too small to judge in: as it comes
	}
	want := (len(p) - 32) / 2
	if cap(g.buf) < want {
		g.buf = make([]byte, want)
	}
	for {
		buf := append(g.buf[:0], g.held...)
		g.held = nil
		n, err := g.r.Read(buf[len(buf):want])
		buf = buf[:len(buf)+n]
		more := err == nil && g.pending != nil && g.pending()
		out := g.judge(buf, more, p[:0])
		if len(out) > 0 || err != nil || len(g.held) == 0 {
			return len(out), err
		}
		// All of it held (a marker's start, more waiting): the rest is
		// there to read.
	}
}

// judge judges one read (more: the burst goes on), appending what to
// pass on to out.
func (g *pasteGuard) judge(in []byte, more bool, out []byte) []byte {
	if len(in) == 0 {
		return out
	}
	if c := g.carry; len(c) > 0 {
		g.carry = nil
		// A marker cut between the last burst and this one.
		switch {
		case g.inPaste && bytes.HasPrefix(pasteEnd, c) && bytes.HasPrefix(in, pasteEnd[len(c):]):
			out = append(out, in[:len(pasteEnd)-len(c)]...)
			in = in[len(pasteEnd)-len(c):]
			g.inPaste, g.sawEnd = false, false
			if len(in) == 0 && !more {
				return out
			}
			// The rest of the burst is the paste's: a paste of its own,
			// which ends with the burst.
			out = append(out, pasteStart...)
			g.inPaste, g.sawEnd = true, true
		case !g.inPaste && bytes.HasPrefix(pasteStart, c) && bytes.HasPrefix(in, pasteStart[len(c):]):
			out = append(out, in[:len(pasteStart)-len(c)]...)
			in = in[len(pasteStart)-len(c):]
			g.inPaste, g.sawEnd = true, false
		case len(c)+len(in) < len(pasteEnd):
			if j := append(c[:len(c):len(c)], in...); bytes.HasPrefix(pasteEnd, j) || bytes.HasPrefix(pasteStart, j) {
				g.carry = j // still cut: judged when it ends
				return append(out, in...)
			}
		}
	}
	// A marker cut by the end of this read, with more waiting: held.
	if more {
		if tail := markerPrefix(in); len(tail) > 0 {
			g.held = tail
			in = in[:len(in)-len(tail)]
		}
	}
	for len(in) > 0 {
		if !g.inPaste {
			s, e := bytes.Index(in, pasteStart), bytes.Index(in, pasteEnd)
			switch {
			case s < 0 && e < 0:
				if !more {
					g.carry = markerPrefix(in)
				}
				return append(out, in...)
			case e >= 0 && (s < 0 || e < s):
				// An end with no paste open: it and what comes with it
				// — before it in this read, after it in its burst — are
				// a paste's.
				out = append(out, pasteStart...)
				out = appendText(out, in[:e+len(pasteEnd)])
				in = in[e+len(pasteEnd):]
				g.inPaste, g.sawEnd = true, true
			default:
				out = append(out, in[:s+len(pasteStart)]...)
				in = in[s+len(pasteStart):]
				g.inPaste, g.sawEnd = true, false
			}
			continue
		}
		last := bytes.LastIndex(in, pasteEnd)
		if more {
			// The burst goes on: every end marker here is the paste's
			// text.
			g.sawEnd = g.sawEnd || last >= 0
			return appendText(out, in)
		}
		switch {
		case last >= 0 && last+len(pasteEnd) == len(in):
			// The burst ends with an end marker: the paste's end.
			out = appendText(out, in[:last])
		case last >= 0 || g.sawEnd:
			// The burst ends after the paste's last end marker: what
			// follows it is the paste's text, and the paste ends here.
			out = appendText(out, in)
		default:
			// No end yet: the paste goes on in the next burst.
			g.carry = markerPrefix(in)
			return appendText(out, in)
		}
		g.inPaste, g.sawEnd = false, false
		return append(out, pasteEnd...)
	}
	if g.inPaste && g.sawEnd && !more {
		// A burst that ended on a held marker's remainder, say.
		g.inPaste, g.sawEnd = false, false
		out = append(out, pasteEnd...)
	}
	return out
}

// appendText appends a paste's text: a marker in it shown, its ESC as
// "␛" (every other byte as it came).
func appendText(out, b []byte) []byte {
	for {
		i := bytes.Index(b, []byte("\x1b[20"))
		if i < 0 {
			return append(out, b...)
		}
		if bytes.HasPrefix(b[i:], pasteEnd) || bytes.HasPrefix(b[i:], pasteStart) {
			out = append(append(out, b[:i]...), shownESC...)
		} else {
			out = append(out, b[:i+1]...)
		}
		b = b[i+1:]
	}
}

// markerPrefix is the end of b when it is the start of a marker (ESC up
// to "ESC [20x"), else nil.
func markerPrefix(b []byte) []byte {
	for k := min(len(b), len(pasteEnd)-1); k > 0; k-- {
		tail := b[len(b)-k:]
		if bytes.HasPrefix(pasteEnd, tail) || bytes.HasPrefix(pasteStart, tail) {
			return append([]byte(nil), tail...)
		}
	}
	return nil
}
