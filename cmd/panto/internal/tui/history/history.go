// Package history keeps what the user sent, per project, for the editor's
// Up and Down: one JSON string per line in a file under panto's state
// directory, appended as each message is sent, bounded to the last Max
// entries. A multi-line message is one entry. The file is the user's
// convenience, not a record: a line that does not read is skipped.
//
// The file is opened without following a symbolic link, and only when it
// is a regular file: a link planted at its path (to ~/.bashrc, say) is
// refused — ErrNotRegular — never written through, and a FIFO never
// waited on. Its directory is made 0700, the file 0600.
package history

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/panto-dev/panto/internal/osfile"
)

// ErrNotRegular is why a history file is refused: its path is a
// symbolic link, a FIFO, a device or a directory. Remove what is there
// (or leave it: history is then not kept).
var ErrNotRegular = errors.New("not a regular file (a symbolic link is not followed)")

// Max is how many entries are kept.
const Max = 1000

// maxEntry bounds one entry's size in the file: a larger message is not
// kept (a pasted log, say).
const maxEntry = 256 << 10

// Path returns the history file of the project directory cwd under the
// state directory (panto's, $XDG_STATE_HOME/panto).
func Path(stateDir, cwd string) string {
	sum := sha256.Sum256([]byte(cwd))
	return filepath.Join(stateDir, "history", hex.EncodeToString(sum[:8])+".jsonl")
}

// Load reads the entries of path, oldest first (nothing when it does
// not exist). When the file holds more than twice Max entries, it is
// rewritten with the last Max.
func Load(path string) ([]string, error) {
	f, err := open(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read history %s: %w", path, err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 2*maxEntry)
	lines := 0
	for sc.Scan() {
		lines++
		var s string
		if json.Unmarshal(sc.Bytes(), &s) != nil || strings.TrimSpace(s) == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1] == s {
			continue
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read history %s: %w", path, err)
	}
	if len(out) > Max {
		out = out[len(out)-Max:]
	}
	if lines > 2*Max {
		if err := rewrite(path, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Append adds an entry to path, creating the file (and its directory)
// when needed.
func Append(path, entry string) error {
	if strings.TrimSpace(entry) == "" || len(entry) > maxEntry {
		return nil
	}
	b, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	f, err := open(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	// One write: appends from two pantos in one project do not mix.
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	return nil
}

// open opens the history file without following a symbolic link and
// without waiting on a FIFO; anything but a regular file is refused. (On
// Windows osfile.NoFollow opens a link itself, which the Stat refuses.)
func open(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|osfile.NoFollow|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENXIO) {
		return nil, ErrNotRegular // a link; a FIFO with no reader
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotRegular
	}
	return f, nil
}

// rewrite replaces path with entries, atomically.
func rewrite(path string, entries []string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history-*")
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	w := bufio.NewWriter(tmp)
	for _, e := range entries {
		b, _ := json.Marshal(e)
		w.Write(b)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("history %s: %w", path, err)
	}
	return nil
}

// Cursor walks the entries from the newest back, keeping what was being
// typed (the draft) to come back to.
type Cursor struct {
	entries []string
	// at is the entry shown; len(entries) is the draft.
	at    int
	draft string
}

// NewCursor returns a cursor over entries, at the draft.
func NewCursor(entries []string) *Cursor {
	return &Cursor{entries: entries, at: len(entries)}
}

// Add adds a sent entry and goes back to an empty draft.
func (c *Cursor) Add(entry string) {
	if strings.TrimSpace(entry) != "" && (len(c.entries) == 0 || c.entries[len(c.entries)-1] != entry) {
		c.entries = append(c.entries, entry)
	}
	c.at, c.draft = len(c.entries), ""
}

// Prepend adds older entries (loaded after the first frame) before the
// ones there.
func (c *Cursor) Prepend(older []string) {
	onDraft := c.at == len(c.entries)
	c.entries = append(append([]string(nil), older...), c.entries...)
	if onDraft {
		c.at = len(c.entries)
	} else {
		c.at += len(older)
	}
}

// Len is the number of entries.
func (c *Cursor) Len() int { return len(c.entries) }

// Prev returns the entry before the one shown; current is what the
// editor holds (kept as the draft when leaving it). ok is false at the
// oldest.
func (c *Cursor) Prev(current string) (string, bool) {
	if c.at == 0 {
		return "", false
	}
	if c.at == len(c.entries) {
		c.draft = current
	}
	c.at--
	return c.entries[c.at], true
}

// Next returns the entry after the one shown, or the draft; ok is false
// at the draft.
func (c *Cursor) Next() (string, bool) {
	if c.at >= len(c.entries) {
		return "", false
	}
	c.at++
	if c.at == len(c.entries) {
		return c.draft, true
	}
	return c.entries[c.at], true
}

// Reset goes back to the draft (the editor was edited by hand).
func (c *Cursor) Reset() { c.at = len(c.entries) }
