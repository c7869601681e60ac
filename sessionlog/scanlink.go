// How the index scan places the entries its jobs read in the tree, in
// file order, and reads the bytes it needs.

package sessionlog

import (
	"bytes"
	"fmt"
	"io"
)

// readFull reads the n bytes at off into buf (reused). They must be
// there: the scan reads up to a size the file had.
func readFull(r io.ReaderAt, off, n int64, buf []byte) ([]byte, error) {
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	k, err := r.ReadAt(buf, off)
	if k == len(buf) {
		err = nil
	} else if err == nil || err == io.EOF {
		err = fmt.Errorf("the file is shorter than %d bytes (was it rewritten?)", off+n)
	}
	return buf[:k], err
}

// appendRead appends the n bytes at off to buf.
func appendRead(r io.ReaderAt, off, n int64, buf []byte) ([]byte, error) {
	have := len(buf)
	if int64(cap(buf)-have) < n {
		b := make([]byte, have, 2*(int64(have)+n))
		copy(b, buf)
		buf = b
	}
	more, err := readFull(r, off, n, buf[have:have])
	return buf[:have+len(more)], err
}

// scanLinker places the jobs' entries in the tree, in file order, with
// the checks and the tolerance of linker.
type scanLinker struct {
	s    *scanned
	t    *Tree
	name string
	r    io.ReaderAt
	line int // lines before the current job
	// prev is the last entry placed.
	prev int32
}

func (l *scanLinker) link(j *scanJob) error {
	t := l.t
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("session log %s line %d: %s", l.name, line, fmt.Sprintf(format, args...))
	}
	str := func(v uint64, other bool) string {
		if other {
			return j.strs[v]
		}
		return unpackID(v)
	}
	lookup := func(v uint64, other bool) (int32, bool) {
		if other {
			return t.find(j.strs[v]) // a string of 16 hex characters would have been packed
		}
		return t.table.find(&t.nodes, v)
	}
	for k := range j.recs {
		rec := &j.recs[k]
		line := l.line + int(rec.line)
		otherID := rec.flags&recOtherID != 0
		if t.nodes.n >= maxNodes {
			return fail(line, "more than %d entries: too many for one session log", maxNodes)
		}
		slot := int64(-1)
		if otherID {
			if dup, ok := t.find(j.strs[rec.id]); ok {
				return fail(line, "duplicate entry id %q (first used on line %d)", j.strs[rec.id], l.lineOf(dup))
			}
		} else {
			t.table.room(&t.nodes)
			dup, ok, at := t.table.probe(&t.nodes, rec.id)
			if ok {
				return fail(line, "duplicate entry id %q (first used on line %d)", unpackID(rec.id), l.lineOf(dup))
			}
			slot = int64(at)
		}
		id := ""
		if otherID || t.skipped != nil {
			id = str(rec.id, otherID)
			if first, ok := t.skipped[id]; ok {
				return fail(line, "duplicate entry id %q (first used on line %d)", id, first)
			}
		}
		n := t.nodes.n
		parent, fault := int32(-1), ""
		otherParent := rec.flags&recOtherParent != 0
		switch {
		case rec.flags&recHasParent == 0:
			if n > 0 {
				return fail(line, "entry %s has no parent_id (only the first entry may lack one)", str(rec.id, otherID))
			}
		case n > 0 && !otherParent && t.nodes.at(l.prev).flags()&flagOtherID == 0 && t.nodes.at(l.prev).id == rec.parent:
			parent = l.prev
		default:
			p, ok := lookup(rec.parent, otherParent)
			if ok {
				parent = p
			} else {
				fault = unknownRef("parent_id", str(rec.parent, otherParent), t.skipped)
			}
		}
		var label *Label
		if rec.kind == kindLabel {
			label = &j.labels[rec.aux]
			if _, ok := t.find(label.Target); !ok && fault == "" {
				fault = unknownRef("target", label.Target, t.skipped)
			}
		}
		typ := kindTypes[rec.kind]
		if rec.kind == kindOther {
			typ = j.types[rec.aux]
		}
		if fault != "" {
			if id == "" {
				id = str(rec.id, otherID)
			}
			if rec.kind == kindMessage {
				return fail(line, "entry %s: %s", id, fault)
			}
			if t.skipped == nil {
				t.skipped = map[string]int{}
			}
			t.skipped[id] = line
			l.s.warnings = append(l.s.warnings, skippedWarning(l.name, line, typ, id, fault))
			continue
		}
		if id == "" && otherID {
			id = j.strs[rec.id]
		}
		l.prev = t.add(id, rec.id, !otherID, slot, rec.kind, typ, rec.role, parent, rec.off, rec.size)
		if label != nil {
			target, _ := t.find(label.Target)
			t.setLabel(target, label.Text)
		}
		if rec.flags&recHasUsage != 0 {
			if t.usage == nil {
				t.usage = map[int32]Usage{}
			}
			t.usage[l.prev] = j.usages[rec.aux]
		}
	}
	if j.err != nil {
		return fail(l.line+j.line, "%s", j.err.Error())
	}
	if j.ioErr != nil {
		return j.ioErr
	}
	if j.tornAt >= 0 {
		l.s.tornAt, l.s.tornLine = j.tornAt, l.line+j.lines
	}
	l.s.noNewline = l.s.noNewline || j.noNewline
	l.line += j.lines
	return nil
}

// lineOf returns the line number of node i, counting the newlines before
// it: only errors need it.
func (l *scanLinker) lineOf(i int32) int {
	n, err := lineAt(l.r, l.t.nodes.at(i).off())
	if err != nil {
		return 0
	}
	return n
}

// lineAt returns the number of the line at offset off of r.
func lineAt(r io.ReaderAt, off int64) (int, error) {
	buf := make([]byte, 1<<20)
	n := 1
	for pos := int64(0); pos < off; {
		k, err := r.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		n += bytes.Count(buf[:k], []byte{'\n'})
		pos += int64(k)
		if err != nil && pos < off {
			return 0, err
		}
	}
	return n, nil
}
