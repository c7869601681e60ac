package treeview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sessionlog"
)

// logWriter writes a session log line by line, as a crafted file would
// be: no writer's checks, only what Scan reads.
type logWriter struct {
	f *os.File
	w *bufio.Writer
}

func newLog(tb testing.TB) (*logWriter, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "s.jsonl")
	f, err := os.Create(path)
	require.NoError(tb, err)
	lw := &logWriter{f: f, w: bufio.NewWriter(f)}
	lw.line(tb, map[string]any{"type": "session", "version": 1, "id": "6f1c2a5e-3b7d-4c09-8e2f-1a2b3c4d5e6f",
		"created": "2026-12-01T00:00:00Z", "cwd": "/p"})
	return lw, path
}

func (lw *logWriter) line(tb testing.TB, v map[string]any) {
	tb.Helper()
	b, err := json.Marshal(v)
	require.NoError(tb, err)
	lw.w.Write(b)
	lw.w.WriteByte('\n')
}

// message writes a message entry id after parent ("" for the first).
func (lw *logWriter) message(tb testing.TB, id, parent, role, text string) {
	tb.Helper()
	e := map[string]any{"type": "message", "id": id, "time": "2026-12-01T00:00:00Z",
		"message": map[string]any{"role": role, "content": []any{map[string]any{"type": "text", "text": text}}}}
	if parent != "" {
		e["parent_id"] = parent
	}
	lw.line(tb, e)
}

func (lw *logWriter) scan(tb testing.TB, path string) *sessionlog.Tree {
	tb.Helper()
	require.NoError(tb, lw.w.Flush())
	require.NoError(tb, lw.f.Close())
	tree, err := sessionlog.Scan(path)
	require.NoError(tb, err)
	return tree
}

// deepTree is a log of n branch points nested in each other: each
// message has two children, the next of the chain (first) and a branch
// off it, so the chain's k-th message is k branch points deep.
func deepTree(tb testing.TB, n int) *sessionlog.Tree {
	tb.Helper()
	lw, path := newLog(tb)
	lw.message(tb, "s0", "", "system", "sys")
	prev := "s0"
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m := "m" + strconv.Itoa(i)
		lw.message(tb, m, prev, role, "msg "+strconv.Itoa(i))
		lw.message(tb, "b"+strconv.Itoa(i), prev, role, "branch "+strconv.Itoa(i))
		prev = m
	}
	return lw.scan(tb, path)
}

// TestDeepTree: a view of branch points nested 20,000 deep costs what
// its rows say, not the square of its depth. Each row's drawing is of at
// most MaxGuides levels — before, a row's was as long as the row was
// deep: 5 bytes a level, 2 GB of indents in all here.
func TestDeepTree(t *testing.T) {
	const n = 20000
	tree := deepTree(t, n)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rows, err := Build(tree, Options{})
	require.NoError(t, err)
	var out countWriter
	require.NoError(t, Write(&out, rows, 100))
	runtime.ReadMemStats(&after)

	require.Len(t, rows, 2*n+1, "every row is a branch point or a branch's first row: nothing folds")
	longest := len("… " + strconv.Itoa(n) + " › ├─ ")
	indents := 0
	deepest := 0
	for _, r := range rows {
		require.LessOrEqual(t, len(r.Indent), max(longest, (MaxGuides-1)*len("│  ")+len("├─ ")), "row %s at depth %d", r.ID, r.Depth)
		indents += len(r.Indent)
		deepest = max(deepest, r.Depth)
	}
	require.Equal(t, n, deepest, "Depth still counts every branch point")
	require.Less(t, indents, 64*len(rows), "the drawing grows with the rows, not with rows × depth")
	require.Less(t, out.n, 100*len(rows))
	allocated := after.TotalAlloc - before.TotalAlloc
	require.Less(t, allocated, uint64(256<<20), "Build and Write allocated %d MB", allocated>>20)

	// The drawing: the guides of MaxGuides levels, then the depth.
	byID := map[string]Row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	at := func(d int) string { return "m" + strconv.Itoa(d-1) } // m(d-1) is d branch points deep
	require.Equal(t, strings.Repeat("│  ", MaxGuides-1)+"├─ ", byID[at(MaxGuides)].Indent)
	require.Equal(t, strings.Repeat("│  ", MaxGuides-1)+"└─ ", byID["b"+strconv.Itoa(MaxGuides-1)].Indent)
	require.Equal(t, "… "+strconv.Itoa(MaxGuides+1)+" › ├─ ", byID[at(MaxGuides+1)].Indent)
	require.Equal(t, "… 812 › ├─ ", byID[at(812)].Indent)
	require.Equal(t, "… 812 › └─ ", byID["b811"].Indent)
	require.Equal(t, MaxGuides+1, byID[at(MaxGuides+1)].Depth)
}

// countWriter counts what is written to it.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// oldIndents is the drawing as Build drew it before MaxGuides, every
// level's guide, from the rows' shape (Parent, in display order).
func oldIndents(rows []Row) map[string]string {
	kids := map[string][]string{}
	for _, r := range rows[1:] {
		kids[r.Parent] = append(kids[r.Parent], r.ID)
	}
	out := map[string]string{}
	var walk func(id, indent, glyph string)
	walk = func(id, indent, glyph string) {
		out[id] = indent + glyph
		ks := kids[id]
		switch len(ks) {
		case 0:
		case 1:
			walk(ks[0], indent+continued(glyph), "")
		default:
			for i, k := range ks {
				g := "├─ "
				if i == len(ks)-1 {
					g = "└─ "
				}
				walk(k, indent+continued(glyph), g)
			}
		}
	}
	walk(rows[0].ID, "", "")
	return out
}

// TestIndentGuides: on random trees, a row up to MaxGuides deep is drawn
// exactly as it always was; a deeper one shows its depth and its own
// level's guide (the last of the full drawing's).
func TestIndentGuides(t *testing.T) {
	t.Parallel()
	shallow, deep := 0, 0
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		lw, path := newLog(t)
		lw.message(t, "e0", "", "system", "sys")
		size := 50 + r.IntN(400)
		for i := 1; i < size; i++ {
			parent := i - 1
			switch r.IntN(int(2 + seed%8)) {
			case 0: // a branch off one of the last few: deep
				parent = max(0, i-1-r.IntN(6))
			case 1: // off any: wide
				parent = r.IntN(i)
			}
			role := []string{"user", "assistant", "system"}[r.IntN(3)]
			lw.message(t, "e"+strconv.Itoa(i), "e"+strconv.Itoa(parent), role, fmt.Sprintf("text %d", i))
		}
		tree := lw.scan(t, path)
		rows, err := Build(tree, Options{Full: true})
		require.NoError(t, err)
		want := oldIndents(rows)
		for _, row := range rows {
			w := want[row.ID]
			if row.Depth > MaxGuides {
				deep++
				cols := []rune(w)
				w = "… " + strconv.Itoa(row.Depth) + " › " + string(cols[len(cols)-3:])
			} else {
				shallow++
			}
			require.Equal(t, w, row.Indent, "seed %d, row %s at depth %d", seed, row.ID, row.Depth)
		}
	}
	t.Logf("%d rows up to %d deep, %d deeper", shallow, MaxGuides, deep)
	require.Positive(t, shallow)
	require.Positive(t, deep)
}

// BenchmarkDeepTree is the view of branch points nested 20,000 deep.
func BenchmarkDeepTree(b *testing.B) {
	tree := deepTree(b, 20000)
	b.ReportAllocs()
	for b.Loop() {
		rows, err := Build(tree, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := Write(io.Discard, rows, 100); err != nil {
			b.Fatal(err)
		}
	}
}
