package sessionlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// treeLog is the example of docs/session-format.md's "The tree", with
// hex ids: after u1 a1 u2 a2, a move back to a1, a branch summary, u3 a3,
// and a label of a2.
func treeLog(t *testing.T) string {
	ids := map[string]string{"s1": "00000000000000a1", "l1": "00000000000000a2", "u1": "00000000000000a3", "a1": "00000000000000a4",
		"u2": "00000000000000b5", "a2": "00000000000000b6", "m1": "00000000000000c7", "b1": "00000000000000c8",
		"u3": "00000000000000c9", "a3": "00000000000000ca", "t1": "00000000000000cb"}
	path := filepath.Join(t.TempDir(), "tree.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	add := func(name string, e Entry) {
		e.ID = ids[name]
		_, err := w.Append(e)
		require.NoError(t, err)
	}
	add("s1", MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)))
	add("l1", LifecycleEntry(LifecycleStarted, true, nil))
	add("u1", MessageEntry(conversation.UserText("first question")))
	add("a1", MessageEntry(conversation.AssistantText("answer")))
	add("u2", MessageEntry(conversation.UserText("second question")))
	add("a2", MessageEntry(conversation.AssistantText("answer 2")))
	add("m1", MoveEntry(ids["a1"], ids["a2"]))
	add("b1", BranchSummaryEntry("asked u2; a2 was wrong", ids["a2"]))
	add("u3", MessageEntry(conversation.UserText("second question, rephrased")))
	add("a3", MessageEntry(conversation.AssistantText("answer 2, better")))
	add("t1", LabelEntry(ids["a2"], "first attempt"))
	require.NoError(t, w.Close())
	return path
}

func TestTreeQueries(t *testing.T) {
	t.Parallel()
	path := treeLog(t)
	log, err := Read(path)
	require.NoError(t, err)
	scanned, err := Scan(path)
	require.NoError(t, err)
	for name, tr := range map[string]*Tree{"Log.Tree": log.Tree(), "Scan": scanned} {
		require.Equal(t, 11, tr.Len(), name)
		require.Equal(t, "00000000000000cb", tr.Leaf(), name)
		kids, err := tr.Children("00000000000000a4") // a1: u2, then the move, in file order
		require.NoError(t, err, name)
		require.Equal(t, []string{"00000000000000b5", "00000000000000c7"}, kids, name)
		kids, err = tr.Children("00000000000000cb")
		require.NoError(t, err, name)
		require.Empty(t, kids, name)
		chain, err := tr.Chain("00000000000000ca")
		require.NoError(t, err, name)
		require.Equal(t, []string{"00000000000000a1", "00000000000000a2", "00000000000000a3", "00000000000000a4",
			"00000000000000c7", "00000000000000c8", "00000000000000c9", "00000000000000ca"}, chain, name)
		require.Equal(t, map[string]string{"00000000000000b6": "first attempt"}, tr.Labels(), name)
		require.Equal(t, []string{"00000000000000b6", "00000000000000ca"}, tr.Branches(), name)

		n, err := tr.Node("00000000000000b6")
		require.NoError(t, err, name)
		require.Equal(t, Node{ID: "00000000000000b6", ParentID: "00000000000000b5", Type: TypeMessage,
			Role: conversation.RoleAssistant, Label: "first attempt", Messages: 5}, n, name)
		n, err = tr.Node("00000000000000c7")
		require.NoError(t, err, name)
		require.Equal(t, Node{ID: "00000000000000c7", ParentID: "00000000000000a4", Type: TypeMove, Messages: 3, Children: 1}, n, name)
		n, err = tr.Node("00000000000000a1")
		require.NoError(t, err, name)
		require.Equal(t, Node{ID: "00000000000000a1", Type: TypeMessage, Role: conversation.RoleSystem, Messages: 1, Children: 1}, n, name)

		id, err := tr.NthMessage(4)
		require.NoError(t, err, name)
		require.Equal(t, "00000000000000c9", id, name)
		_, err = tr.NthMessage(6)
		require.EqualError(t, err, "session log "+path+": no message 6: the current branch has 5 messages", name)

		sys, err := tr.SystemAt("00000000000000ca")
		require.NoError(t, err, name)
		require.Equal(t, 5, sys.Count, name)
		require.Equal(t, []int{0}, sys.Positions, name)
		require.Equal(t, []string{"seed"}, texts(sys.Messages), name)

		es, err := tr.Entries("00000000000000c8", "00000000000000a3")
		require.NoError(t, err, name)
		require.Equal(t, "asked u2; a2 was wrong", es[0].BranchSummary.Summary, name)
		require.Equal(t, "first question", es[1].Message.Text(), name)

		_, err = tr.Node("0000000000000bad")
		require.EqualError(t, err, `session log `+path+`: no entry "0000000000000bad"`, name)
		_, err = tr.Children("nope")
		require.EqualError(t, err, `session log `+path+`: no entry "nope"`, name)
	}
	require.Equal(t, []string{"seed", "first question", "answer", "second question, rephrased", "answer 2, better"}, texts(log.Messages()))
}

func TestResolve(t *testing.T) {
	t.Parallel()
	path := treeLog(t)
	log, err := Read(path)
	require.NoError(t, err)
	ld, err := Load(path)
	require.NoError(t, err)
	for name, resolve := range map[string]func(string) (string, error){"Log": log.Resolve, "Tree": ld.Tree.Resolve} {
		for ref, want := range map[string]string{
			"00000000000000cb": "00000000000000cb", // a whole id
			"00000000000000c9": "00000000000000c9",
			"00000000000000b5": "00000000000000b5",
			"00000000000000a2": "00000000000000a2",
			"0000000000000":    "",
		} {
			got, err := resolve(ref)
			if want == "" {
				require.Error(t, err)
				continue
			}
			require.NoError(t, err, name)
			require.Equal(t, want, got, name)
		}
		for ref, msg := range map[string]string{
			"00000000000000b":   `"00000000000000b" is ambiguous: it starts 2 entry ids (00000000000000b5, 00000000000000b6); give more of the id`,
			"0":                 `"0" is ambiguous: it starts 11 entry ids (00000000000000a1, 00000000000000a2, 00000000000000a3, 00000000000000a4, 00000000000000b5, and 6 more); give more of the id`,
			"00000000000000d":   `no entry "00000000000000d" (and no entry id starts with it)`,
			"x":                 `no entry "x" (and no entry id starts with it)`,
			"00000000000000cbb": `no entry "00000000000000cbb" (and no entry id starts with it)`,
			"":                  `no entry id given`,
		} {
			_, err := resolve(ref)
			require.EqualError(t, err, "session log "+path+": "+msg, name)
		}
	}
	// Other ids resolve by prefix too, and an exact id wins over the
	// longer ids it starts.
	other := writeFile(t, "o.jsonl", testHeader+"\n"+line("e1", "", userHi)+"\n"+line("e10", "e1", userHi)+"\n"+line("e11", "e10", userHi)+"\n"+line("f", "e11", userHi)+"\n")
	ol, err := Load(other)
	require.NoError(t, err)
	for ref, want := range map[string]string{"e1": "e1", "e10": "e10", "f": "f"} {
		got, err := ol.Tree.Resolve(ref)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err = ol.Tree.Resolve("e")
	require.ErrorContains(t, err, `"e" is ambiguous: it starts 3 entry ids (e1, e10, e11)`)
}

func TestLoadOfTestdataIsRead(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	for _, p := range paths {
		checkAgainstRead(t, p)
	}
}

// A log written in another key order (a tool that re-encodes JSON sorts
// the keys, putting parent_id after id and message) reads the same: the
// scan's fast path only takes lines in panto's own layout.
func TestScanReadsAnyKeyOrder(t *testing.T) {
	t.Parallel()
	path := treeLog(t)
	want, err := Scan(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		// type and id first, as panto writes them, parent_id last.
		var e map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &e))
		keys := []string{"type", "id"}
		for k := range e {
			if k != "type" && k != "id" && k != "parent_id" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys[2:])
		if _, ok := e["parent_id"]; ok {
			keys = append(keys, "parent_id")
		}
		var b strings.Builder
		for j, k := range keys {
			b.WriteString(map[bool]string{true: "{", false: ","}[j == 0])
			fmt.Fprintf(&b, "%q:%s", k, e[k])
		}
		lines[i] = b.String() + "}"
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	got, err := Scan(path)
	require.NoError(t, err)
	require.Equal(t, want.Leaf(), got.Leaf())
	for _, leaf := range []string{"00000000000000ca", "00000000000000b6"} {
		w, err := want.Chain(leaf)
		require.NoError(t, err)
		g, err := got.Chain(leaf)
		require.NoError(t, err)
		require.Equal(t, w, g)
	}
	require.Equal(t, want.Labels(), got.Labels())
	loaded, err := Load(path)
	require.NoError(t, err)
	msgs := loaded.Messages()
	require.Equal(t, "answer 2, better", msgs[len(msgs)-1].Text())
}
