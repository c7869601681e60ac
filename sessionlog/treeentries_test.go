package sessionlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

func TestMoveLabelBranchSummaryRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	h := Header{ID: "child-session", Created: t0, Cwd: "/p", ParentSession: "parent-session", ParentEntry: "00000000000000a7"}
	w, err := Create(path, h)
	require.NoError(t, err)
	rec, err := w.Append(
		MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)),
		MessageEntry(conversation.UserText("first try")),
		MessageEntry(conversation.AssistantText("answer one")),
	)
	require.NoError(t, err)
	sys, u1, a1 := rec[0], rec[1], rec[2]
	more, err := w.Append(
		LabelEntry(a1.ID, "checkpoint"),
		MoveEntry(sys.ID, ""), // from is filled below
	)
	require.Error(t, err, "a move needs from")
	require.Nil(t, more)
	more, err = w.Append(LabelEntry(a1.ID, "checkpoint"))
	require.NoError(t, err)
	label := more[0]
	require.Equal(t, a1.ID, label.ParentID, "a label follows the leaf")
	more, err = w.Append(
		MoveEntry(sys.ID, label.ID),
		BranchSummaryEntry("tried asking directly; the answer was wrong", label.ID),
		MessageEntry(conversation.UserText("second try")),
		LabelEntry(u1.ID, "old question"),
		LabelEntry(u1.ID, ""), // removed again
	)
	require.NoError(t, err)
	move, summary, u2 := more[0], more[1], more[2]
	require.Equal(t, sys.ID, move.ParentID, "a move's parent is its target")
	require.Equal(t, move.ID, summary.ParentID, "the next entry follows the move")
	require.NoError(t, w.Close())

	ls := lines(t, path)
	require.Equal(t, `{"type":"session","version":1,"id":"child-session","created":"2026-03-14T09:26:53.589793Z","cwd":"/p","parent_session":"parent-session","parent_entry":"00000000000000a7"}`, ls[0])
	require.Equal(t, `{"type":"label","id":"`+label.ID+`","parent_id":"`+a1.ID+`","time":"`+formatTime(label.Time)+`","target":"`+a1.ID+`","label":"checkpoint"}`, ls[4])
	require.Equal(t, `{"type":"move","id":"`+move.ID+`","parent_id":"`+sys.ID+`","time":"`+formatTime(move.Time)+`","from":"`+label.ID+`"}`, ls[5])
	require.Equal(t, `{"type":"branch_summary","id":"`+summary.ID+`","parent_id":"`+move.ID+`","time":"`+formatTime(summary.Time)+`","summary":"tried asking directly; the answer was wrong","from":"`+label.ID+`"}`, ls[6])
	require.Contains(t, ls[9], `"target":"`+u1.ID+`","label":""}`, "a removal writes the empty label")

	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, h.ParentSession, log.Header.ParentSession)
	require.Equal(t, h.ParentEntry, log.Header.ParentEntry)
	require.Equal(t, append(append(rec, label), more...), log.Entries)
	require.Equal(t, &Move{From: label.ID}, log.Find(move.ID).Move)
	require.Equal(t, &Label{Target: u1.ID, Text: ""}, log.Leaf().Label)
	require.Equal(t, &BranchSummary{Summary: "tried asking directly; the answer was wrong", From: label.ID}, log.Find(summary.ID).BranchSummary)
	// The conversation after the move: root..target, then what followed.
	require.Equal(t, []string{"seed", "second try"}, texts(log.Messages()))
	at, err := log.MessagesAt(label.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"seed", "first try", "answer one"}, texts(at))
	require.Equal(t, map[string]string{a1.ID: "checkpoint"}, log.Labels())
	_ = u2

	// Copied into another log, every line is the same.
	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	w, err = Create(copyPath, log.Header)
	require.NoError(t, err)
	_, err = w.Append(log.Entries...)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, ls, lines(t, copyPath))
}

func TestHeaderWithoutParentIsUnchanged(t *testing.T) {
	t.Parallel()
	path, _ := writeSample(t, t.TempDir())
	require.NotContains(t, lines(t, path)[0], "parent")
	_, err := Create(filepath.Join(t.TempDir(), "x.jsonl"), Header{Cwd: "/p", ParentEntry: "e1"})
	require.ErrorContains(t, err, "parent entry \"e1\" without a parent session")
}

func TestAppendRejectsBadTreeEntries(t *testing.T) {
	t.Parallel()
	path, rec := writeSample(t, t.TempDir())
	w, _, err := Open(path)
	require.NoError(t, err)
	defer w.Close()
	known := rec[3].ID
	for name, tt := range map[string]struct {
		e    Entry
		want string
	}{
		"label of no entry":          {LabelEntry("0123456789abcdef", "x"), `target "0123456789abcdef" names no entry of the log`},
		"label without target":       {LabelEntry("", "x"), "label entry without a target"},
		"label without payload":      {Entry{Type: TypeLabel}, "label entry without a target"},
		"move to no entry":           {MoveEntry("0123456789abcdef", known), `parent_id "0123456789abcdef" names no entry`},
		"move from no entry":         {MoveEntry(known, "0123456789abcdef"), `from "0123456789abcdef" names no entry`},
		"move without target":        {MoveEntry("", known), "move entry without a target"},
		"move without from":          {MoveEntry(known, ""), "move entry without from"},
		"summary without from":       {BranchSummaryEntry("s", ""), "branch_summary entry without summary and from"},
		"summary without summary":    {BranchSummaryEntry("", known), "branch_summary entry without summary and from"},
		"summary from no entry":      {BranchSummaryEntry("s", "0123456789abcdef"), `from "0123456789abcdef" names no entry`},
		"summary without payload":    {Entry{Type: TypeBranchSummary}, "without summary and from"},
		"move without payload, leaf": {Entry{Type: TypeMove, ParentID: known}, "move entry without from"},
	} {
		_, err := w.Append(tt.e)
		require.ErrorContains(t, err, tt.want, name)
	}
	// In one batch, a label may name an entry recorded before it.
	got, err := w.Append(MessageEntry(conversation.UserText("x")).WithParent(known), Entry{})
	require.Error(t, err)
	require.Nil(t, got)
	e := MessageEntry(conversation.UserText("x"))
	e.ID = "1111111111111111"
	_, err = w.Append(e, LabelEntry(e.ID, "new"), MoveEntry(known, e.ID))
	require.NoError(t, err)
}

func TestReadRefusesBadTreeEntries(t *testing.T) {
	t.Parallel()
	ok1 := line("e1", "", userHi)
	for name, tt := range map[string]struct{ content, want string }{
		"label without target": {testHeader + "\n" + ok1 + "\n" + `{"type":"label","id":"l1","parent_id":"e1","time":"2026-01-01T00:00:01Z","label":"x"}` + "\n",
			"line 3: label entry l1 without a target"},
		"move without from": {testHeader + "\n" + ok1 + "\n" + `{"type":"move","id":"m1","parent_id":"e1","time":"2026-01-01T00:00:01Z"}` + "\n",
			"line 3: move entry m1 without from"},
		"move without target": {testHeader + "\n" + ok1 + "\n" + `{"type":"move","id":"m1","time":"2026-01-01T00:00:01Z","from":"e1"}` + "\n",
			"line 3: move entry m1 without a target"},
		"summary without from": {testHeader + "\n" + ok1 + "\n" + `{"type":"branch_summary","id":"b1","parent_id":"e1","time":"2026-01-01T00:00:01Z","summary":"s"}` + "\n",
			"line 3: branch_summary entry b1 without summary and from"},
		"label of another shape": {testHeader + "\n" + ok1 + "\n" + `{"type":"label","id":"l1","parent_id":"e1","time":"2026-01-01T00:00:01Z","target":"e1","label":{"name":"x"}}` + "\n",
			`line 3: field "label" cannot be a JSON object`},
		// A message that names no earlier entry is refused, even last.
		"message after a bad move": {testHeader + "\n" + ok1 + "\n" + moveText("m1", "zz", "e1") + "\n" + line("e2", "m1", userHi) + "\n",
			`line 4: entry e2: parent_id "m1" names the entry skipped on line 3`},
		"message of unknown parent, last": {testHeader + "\n" + ok1 + "\n" + line("e2", "zz", userHi) + "\n",
			`line 3: entry e2: parent_id "zz" names no earlier entry`},
		// Parents are earlier lines, so the tree has no cycle: one written
		// by hand is refused at its first line.
		"cycle": {testHeader + "\n" + line("e1", "e2", userHi) + "\n" + line("e2", "e1", userHi) + "\n",
			`line 2: entry e1: parent_id "e2" names no earlier entry`},
		"cycle below the root": {testHeader + "\n" + ok1 + "\n" + line("e2", "e3", userHi) + "\n" + line("e3", "e2", userHi) + "\n",
			`line 3: entry e2: parent_id "e3" names no earlier entry`},
		"duplicate of a skipped id": {testHeader + "\n" + ok1 + "\n" + moveText("m1", "zz", "e1") + "\n" + moveText("m1", "e1", "e1") + "\n",
			`line 4: duplicate entry id "m1" (first used on line 3)`},
	} {
		path := writeFile(t, "s.jsonl", tt.content)
		_, err := Read(path)
		require.ErrorContains(t, err, "session log "+path+" ", name)
		require.ErrorContains(t, err, tt.want, name)
		_, _, err = Open(path)
		require.ErrorContains(t, err, tt.want, name)
	}
}

func moveText(id, target, from string) string {
	return `{"type":"move","id":"` + id + `","parent_id":"` + target + `","time":"2026-01-01T00:00:02Z","from":"` + from + `"}`
}

func labelText(id, parent, target, text string) string {
	return `{"type":"label","id":"` + id + `","parent_id":"` + parent + `","time":"2026-01-01T00:00:02Z","target":"` + target + `","label":"` + text + `"}`
}

// TestReadSkipsBadTreeTail: a move or label (or any entry but a message)
// that names no earlier entry is skipped with a warning naming the file
// and line; the writer continues from the entry before it, and the log
// stays readable after more is appended.
func TestReadSkipsBadTreeTail(t *testing.T) {
	t.Parallel()
	ok := testHeader + "\n" + line("e1", "", userHi) + "\n" + line("e2", "e1", userHi) + "\n"
	for name, tt := range map[string]struct{ bad, want string }{
		"move to no entry":        {moveText("m1", "zz", "e2"), `line 4: skipped move entry m1: parent_id "zz" names no earlier entry`},
		"label of no entry":       {labelText("l1", "e2", "zz", "x"), `line 4: skipped label entry l1: target "zz" names no earlier entry`},
		"label of a later entry":  {labelText("l1", "e2", "l1", "x"), `line 4: skipped label entry l1: target "l1" names no earlier entry`},
		"unknown type, no parent": {`{"type":"bookmark","id":"b1","parent_id":"zz"}`, `line 4: skipped bookmark entry b1: parent_id "zz" names no earlier entry`},
		"moves in a cycle": {moveText("m1", "m2", "e2") + "\n" + moveText("m2", "m1", "e2"),
			`line 5: skipped move entry m2: parent_id "m1" names the entry skipped on line 4`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, "s.jsonl", ok+tt.bad+"\n")
			log, err := Read(path)
			require.NoError(t, err)
			require.Len(t, log.Entries, 2)
			require.Equal(t, "e2", log.Leaf().ID)
			require.NotEmpty(t, log.Warnings)
			require.Contains(t, log.Warnings[len(log.Warnings)-1], "session log "+path+" "+tt.want)

			// The writer continues from e2; the host makes it explicit
			// with a move, and the log reads the same way again.
			w, opened, err := Open(path)
			require.NoError(t, err)
			require.Equal(t, log.Warnings, opened.Warnings)
			require.Equal(t, "e2", w.Leaf())
			_, err = w.Append(MoveEntry("e2", "e2"), MessageEntry(conversation.UserText("after the repair")))
			require.NoError(t, err)
			_, err = w.Append(MoveEntry("m1", "e2"))
			require.ErrorContains(t, err, `parent_id "m1" names no entry`, "a skipped entry is no target")
			e := MessageEntry(conversation.UserText("x"))
			e.ID = strings.SplitN(strings.SplitN(tt.bad, `"id":"`, 2)[1], `"`, 2)[0]
			_, err = w.Append(e)
			require.ErrorContains(t, err, "already used", "nor is its id free")
			require.NoError(t, w.Close())
			again, err := Read(path)
			require.NoError(t, err)
			require.Equal(t, log.Warnings, again.Warnings)
			require.Equal(t, []string{"hi", "hi", "after the repair"}, texts(again.Messages()))
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(data), ok+tt.bad+"\n"), "nothing was rewritten")
		})
	}
}

// A forked log may hold a move or a summary whose from names an entry of
// its parent session.
func TestForkedLogAcceptsFromOfTheParent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fork.jsonl")
	w, err := Create(path, Header{Cwd: "/p", ParentSession: "6f1c2a5e-3b7d-4c09-8e2f-1a2b3c4d5e6f", ParentEntry: "00000000000000a1"})
	require.NoError(t, err)
	defer w.Close()
	es, err := w.Append(MessageEntry(conversation.UserText("u1")))
	require.NoError(t, err)
	_, err = w.Append(MoveEntry(es[0].ID, "00000000000000ff"), BranchSummaryEntry("tried", "00000000000000ff"))
	require.NoError(t, err)
}
