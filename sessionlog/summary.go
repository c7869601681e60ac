package sessionlog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/osfile"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// Summary is what a session list shows of a log.
type Summary struct {
	Header Header
	// Messages is the number of messages on the current branch (root to
	// leaf), as Log.MessageCount counts them.
	Messages int
	// Branches is the number of branches of the tree (Tree.Branches): the
	// messages no other message follows. A move or a label starts none; a
	// session that never branched has one, one without messages none.
	Branches int
	// Entries is the number of entries.
	Entries int
	// Labels are the effective labels (Tree.Labels); nil when none.
	Labels map[string]string
	// Name is the session's name (Tree.Name), or "".
	Name string
	// FirstUserText is the start of what the user typed in the first
	// user message of the current branch where that is not empty
	// (Log.FirstUserText, Message.Typed), or "": the whole text when it
	// has at most MaxFirstText bytes, else as much as fits with "…", cut
	// on a rune boundary.
	FirstUserText string
	// LastTime is when the last entry, the leaf, was recorded; zero for a
	// log without entries.
	LastTime time.Time
	// Leaf is the id of the current leaf, or "".
	Leaf string
	// Usage sums the tokens of the log's replies (every branch's), by
	// the model recorded in force at each (UsageByModel); nil when no
	// reply recorded its usage.
	Usage []ModelUsage
	// Warnings are what reading the log tolerated (Log.Warnings).
	Warnings []string
}

// Summarize returns the Summary of the log at path, computed from an index
// scan (see Scan): of the lines, only the first user messages of the
// current branch (up to the first with text), the leaf and the
// model_change entries are decoded, and the usage at the end of each
// assistant message's line is read as the scan passes it.
func Summarize(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, fmt.Errorf("read session log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Summary{}, fmt.Errorf("read session log: %w", err)
	}
	return summarize(f, st.Size(), path)
}

func summarize(f *os.File, size int64, path string) (Summary, error) {
	s, err := scanWith(f, size, path, true)
	if err != nil {
		return Summary{}, err
	}
	t := s.tree
	sum := Summary{Header: s.header, Entries: t.Len(), Leaf: t.Leaf(), Warnings: s.warnings}
	if s.tornAt >= 0 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf(
			"session log %s line %d: skipped torn last line (%d bytes, no newline, not valid JSON): a write in progress, or one cut short by a crash",
			path, s.tornLine, s.size-s.tornAt))
	}
	if len(t.labels) > 0 {
		sum.Labels = t.Labels()
	}
	if sum.Name, err = t.Name(); err != nil {
		return Summary{}, err
	}
	if t.nodes.n == 0 {
		return sum, nil
	}
	sum.Branches = len(t.branchEnds())
	if sum.Usage, err = t.usageByModel(); err != nil {
		return Summary{}, fmt.Errorf("read session log %s: %w", path, err)
	}
	leaf := t.nodes.n - 1
	if sum.LastTime, err = t.entryTime(f, leaf); err != nil {
		return Summary{}, err
	}
	for _, i := range t.chain(leaf) {
		n := t.nodes.at(i)
		if !n.message() {
			continue
		}
		sum.Messages++
		if sum.FirstUserText != "" || (n.role() != roleUser && n.role() != roleUnknown) {
			continue
		}
		text, ok, err := t.firstUserText(f, i)
		if err != nil {
			return Summary{}, err
		}
		if ok {
			sum.FirstUserText = excerpt(text)
		}
	}
	return sum, nil
}

// entryTime returns the time of node i's entry, read from f; of a line of
// bigLine bytes or more only the time is read (firstText).
func (t *Tree) entryTime(f *os.File, i int32) (time.Time, error) {
	if n := t.nodes.at(i); n.size >= bigLine {
		if lt, ok := firstText(io.NewSectionReader(f, n.off(), int64(n.size))); ok {
			var tm time.Time
			if tm.UnmarshalJSON([]byte(`"`+lt.time+`"`)) == nil && !tm.IsZero() && writableTime(tm) {
				return tm.UTC(), nil
			}
		}
	}
	es, err := t.decode([]int32{i})
	if err != nil {
		return time.Time{}, err
	}
	return es[0].Time, nil
}

// firstUserText returns the typed text of node i's message
// (Message.Typed), read from f, and whether it is a user message with
// some. Of a line of bigLine bytes or more only the start of the text is
// read (firstText), so a first message of hundreds of megabytes costs a
// pass over its bytes, not their copies; the result is only good for
// excerpt.
func (t *Tree) firstUserText(f *os.File, i int32) (string, bool, error) {
	if n := t.nodes.at(i); n.size >= bigLine {
		if lt, ok := firstText(io.NewSectionReader(f, n.off(), int64(n.size))); ok {
			return string(lt.text), lt.role == string(conversation.RoleUser) && lt.hasText, nil
		}
	}
	es, err := t.decode([]int32{i})
	if err != nil {
		return "", false, err
	}
	if m := es[0].Message; m != nil && m.Role == conversation.RoleUser && hasText(m) {
		return m.Typed(), true, nil
	}
	return "", false, nil
}

// The summary cache: a sidecar file "<log>.summary" per log holds the
// log's Summary and the size and modification time the log had when it
// was computed. It is derived: valid only while the log's size and
// modification time are those, rebuilt whenever they are not (or it
// cannot be read), and safe to delete. The log stays the source of truth;
// nothing about it changes.

// summaryFormat is the version of the sidecar's shape; another version is
// stale. Version 1 held the whole first message; 2 an excerpt of its
// text, USER_PROMPT.md blocks included; 3 an excerpt of what the user
// typed (Message.Typed); 4 the session's name; 5 the usage by model.
const summaryFormat = 5

// maxSummaryFile bounds the sidecar that is read: a larger one (one of
// version 1 with a huge first message, or one of a log with a great many
// labels) is not read but computed again, and a summary that would make
// one is not cached.
const maxSummaryFile = 1 << 20

// summaryPath is the sidecar of the log at path.
func summaryPath(path string) string { return path + ".summary" }

type summaryFile struct {
	Format int `json:"format"`
	// Size and MTime (nanoseconds since 1970) are the log's when the
	// summary was computed from its first Size bytes.
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime_ns"`

	Session       headerLine        `json:"session"`
	Messages      int               `json:"messages"`
	Branches      int               `json:"branches"`
	Entries       int               `json:"entries"`
	Labels        map[string]string `json:"labels,omitempty"`
	Name          string            `json:"name,omitempty"`
	FirstUserText string            `json:"first_user_text,omitempty"`
	LastTime      string            `json:"last_time,omitempty"`
	Leaf          string            `json:"leaf,omitempty"`
	Usage         []ModelUsage      `json:"usage,omitempty"`
	Warnings      []string          `json:"warnings,omitempty"`
}

// CachedSummary returns the Summary of the log at path as Summarize does,
// from its sidecar "<log>.summary" when that is valid (the log's size and
// modification time are those it records), else by scanning the log and
// then writing the sidecar (mode 0600, replaced atomically; a failure to
// write it is ignored: it is only a cache). A sidecar of another format
// (version 1 held the whole first message, 2 its USER_PROMPT.md blocks
// too), or one larger than 1 MiB, is not read but rebuilt. Listing many
// sessions costs a stat and a small read per unchanged log.
func CachedSummary(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, fmt.Errorf("read session log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Summary{}, fmt.Errorf("read session log: %w", err)
	}
	if sum, ok := readSummary(path, st); ok {
		return sum, nil
	}
	// The summary is of the bytes there were at the stat: if the log
	// grows meanwhile, its size no longer matches, and the next call
	// computes it again.
	sum, err := summarize(f, st.Size(), path)
	if err != nil {
		return Summary{}, err
	}
	_ = writeSummary(path, st, sum)
	return sum, nil
}

// readSummary returns the sidecar's summary when it is valid for a log
// with the FileInfo st. It reads a regular file of at most
// maxSummaryFile bytes, and nothing else: never a FIFO, never a huge one.
func readSummary(path string, st os.FileInfo) (Summary, bool) {
	f, err := os.OpenFile(summaryPath(path), os.O_RDONLY|syscall.O_NONBLOCK|osfile.NoFollow, 0)
	if err != nil {
		return Summary{}, false
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !fst.Mode().IsRegular() || fst.Size() > maxSummaryFile {
		return Summary{}, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSummaryFile+1))
	if err != nil || len(data) > maxSummaryFile {
		return Summary{}, false
	}
	var sf summaryFile
	if json.Unmarshal(data, &sf) != nil || sf.Format != summaryFormat || sf.Size != st.Size() || sf.MTime != st.ModTime().UnixNano() {
		return Summary{}, false
	}
	h, err := headerOf(sf.Session)
	if err != nil {
		return Summary{}, false
	}
	sum := Summary{Header: h, Messages: sf.Messages, Branches: sf.Branches, Entries: sf.Entries, Labels: sf.Labels, Name: sf.Name,
		FirstUserText: excerpt(sf.FirstUserText), Leaf: sf.Leaf, Usage: sf.Usage, Warnings: sf.Warnings}
	if sf.LastTime != "" {
		if sum.LastTime, err = time.Parse(time.RFC3339Nano, sf.LastTime); err != nil {
			return Summary{}, false
		}
	}
	return sum, true
}

// headerOf is a header as the sidecar holds it.
func headerOf(h headerLine) (Header, error) {
	created, err := time.Parse(time.RFC3339Nano, h.Created)
	if err != nil {
		return Header{}, err
	}
	return Header{Version: h.Version, ID: h.ID, Created: created.UTC(), Cwd: h.Cwd, ParentSession: h.ParentSession, ParentEntry: h.ParentEntry}, nil
}

// writeSummary writes the sidecar of the log with the FileInfo st.
func writeSummary(path string, st os.FileInfo, sum Summary) error {
	h := sum.Header
	sf := summaryFile{Format: summaryFormat, Size: st.Size(), MTime: st.ModTime().UnixNano(),
		Session: headerLine{Type: headerType, Version: h.Version, ID: h.ID, Created: formatTime(h.Created), Cwd: h.Cwd,
			ParentSession: h.ParentSession, ParentEntry: h.ParentEntry},
		Messages: sum.Messages, Branches: sum.Branches, Entries: sum.Entries, Labels: sum.Labels, Name: sum.Name,
		FirstUserText: sum.FirstUserText, Leaf: sum.Leaf, Usage: sum.Usage, Warnings: sum.Warnings}
	if !sum.LastTime.IsZero() {
		sf.LastTime = formatTime(sum.LastTime)
	}
	data, err := json.Marshal(sf)
	if err != nil {
		return err
	}
	if len(data) >= maxSummaryFile {
		// It would never be read: do not keep an old one either.
		os.Remove(summaryPath(path))
		return nil
	}
	// Through a temporary file, renamed into place: a reader never sees
	// half a sidecar, and one left by a kill is removed by a later
	// listing (atomicfile.RemoveStale).
	f, err := atomicfile.Create(context.Background(), summaryPath(path))
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(append(data, '\n')); err != nil {
		return err
	}
	return f.Commit(true)
}
