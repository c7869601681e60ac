package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// randomLog writes, through a Writer, a log of n random steps: messages
// of every role (system ones appending, replacing and keyed), lifecycle,
// model_change, extension_data, unknown entries, compactions (mostly of a
// message on the branch, sometimes not), moves to any earlier entry with
// a branch summary now and then, labels and their removal; some ids are
// not hex. It returns the log's path.
func randomLog(t testing.TB, dir string, seed uint64, n int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x11))
	path := filepath.Join(dir, fmt.Sprintf("r%d.jsonl", seed))
	w, err := Create(path, Header{Cwd: "/p", ParentSession: map[bool]string{true: "parent"}[seed%3 == 0], ParentEntry: map[bool]string{true: "e1"}[seed%3 == 0]})
	require.NoError(t, err)
	defer w.Close()
	var all []string // every entry id
	parent, isMsg := map[string]string{}, map[string]bool{}
	branchMessages := func() []string {
		var out []string
		for id := w.Leaf(); id != ""; id = parent[id] {
			if isMsg[id] {
				out = append(out, id)
			}
		}
		return out
	}
	text := func() string { return fmt.Sprintf("t%d", r.IntN(1000)) }
	for step := range n {
		var e Entry
		switch k := r.IntN(100); {
		case k < 12:
			switch r.IntN(4) {
			case 0:
				e = MessageEntry(conversation.SystemMessage(text(), conversation.ModeReplace).WithSource("s"))
			case 1:
				e = MessageEntry(conversation.KeyedSystemMessage(fmt.Sprint("k", r.IntN(3)), map[bool]string{true: ""}[r.IntN(4) == 0]+text()))
			default:
				e = MessageEntry(conversation.SystemMessage(text(), conversation.ModeAppend))
			}
		case k < 35:
			e = MessageEntry(conversation.UserText(text()))
		case k < 37:
			e = MessageEntry(conversation.UserText("")) // no text: not a title
		case k < 55:
			// Most replies record their request's usage (no random
			// draw: the seeds' logs stay as they were otherwise).
			var u *Usage
			if step%4 != 0 {
				u = &Usage{InputTokens: step + 1, OutputTokens: step % 7, CacheReadTokens: step % 3 * 100, ReasoningTokens: step % 2}
			}
			e = ReplyEntry(conversation.AssistantText(text()), u)
		case k < 60:
			e = MessageEntry(conversation.Message{Role: conversation.RoleTool, Content: []conversation.Block{conversation.ToolResult("t1", text(), false)}})
		case k < 63:
			e = LifecycleEntry(LifecycleResumed, r.IntN(2) == 0, []string{"x"})
		case k < 65:
			e = ModelChangeEntry("p", text())
		case k < 68:
			e = ExtensionDataEntry("ext", json.RawMessage(`{"n":1}`))
		case k < 70 && w.Leaf() != "":
			id := fmt.Sprintf("u%d", step)
			e = Entry{Type: "bookmark", Raw: json.RawMessage(`{"type":"bookmark","id":"` + id + `","parent_id":"` + w.Leaf() + `","note":{"a":[1]}}`)}
		case k < 76 && w.Leaf() != "":
			msgs := branchMessages()
			first := all[r.IntN(len(all))] // sometimes not a message of the branch
			if len(msgs) > 0 && r.IntN(5) > 0 {
				first = msgs[r.IntN(len(msgs))]
			}
			e = CompactionEntry("summary "+text(), first, r.IntN(1000))
		case k < 86 && w.Leaf() != "":
			target := all[r.IntN(len(all))]
			got, err := w.Append(MoveEntry(target, w.Leaf()))
			require.NoError(t, err)
			all = append(all, got[0].ID)
			parent[got[0].ID] = target
			if r.IntN(2) == 0 {
				e = BranchSummaryEntry("left "+text(), all[len(all)-2])
			} else {
				continue
			}
		case k < 94 && w.Leaf() != "":
			txt := text()
			if r.IntN(4) == 0 {
				txt = ""
			}
			e = LabelEntry(all[r.IntN(len(all))], txt)
		default:
			e = MessageEntry(conversation.AssistantText(text()))
		}
		if r.IntN(10) == 0 && e.Raw == nil {
			e.ID = fmt.Sprintf("x%d", step) // not 16 hex characters
		}
		got, err := w.Append(e)
		require.NoError(t, err)
		all = append(all, got[0].ID)
		parent[got[0].ID], isMsg[got[0].ID] = got[0].ParentID, got[0].Type == TypeMessage
	}
	return path
}

// expectLoaded is what Load must give, computed from Read's whole log by
// the rule Loaded documents.
func expectLoaded(t *testing.T, log *Log) (entries []Entry, positions []int, cut string, skipped, count int) {
	leaf := log.Leaf()
	if leaf == nil {
		return nil, nil, "", 0, 0
	}
	branch, err := log.Branch(leaf.ID)
	require.NoError(t, err)
	cutPos := 0
	for p := len(branch) - 1; p >= 0; p-- {
		if c := branch[p].Compaction; c != nil {
			for q := range branch {
				if branch[q].ID == c.FirstKeptID && branch[q].Type == TypeMessage {
					cutPos, cut = q, c.FirstKeptID
				}
			}
			break
		}
	}
	for p, e := range branch {
		if e.Message != nil {
			count++
		}
		switch {
		case p >= cutPos,
			e.Message != nil && e.Message.Role == conversation.RoleSystem,
			e.Type == TypeLifecycle, e.Type == TypeModelChange, e.Type == TypeCompaction,
			e.Type == TypeMove, e.Type == TypeLabel, e.Type == TypeBranchSummary:
			entries = append(entries, e)
			positions = append(positions, p)
		case e.Message != nil:
			skipped++
		}
	}
	return
}

// checkAgainstRead checks Load and Scan of the log at path against Read.
func checkAgainstRead(t *testing.T, path string) {
	t.Helper()
	log, err := Read(path)
	require.NoError(t, err)
	ld, err := Load(path)
	require.NoError(t, err)
	entries, positions, cut, skipped, count := expectLoaded(t, log)
	require.Equal(t, log.Header, ld.Header)
	require.Equal(t, log.Warnings, ld.Warnings)
	require.Equal(t, entries, ld.Entries)
	require.Equal(t, positions, ld.Positions)
	require.Equal(t, cut, ld.Cut)
	require.Equal(t, skipped, ld.Skipped)
	require.Equal(t, count, ld.MessageCount)

	// The prompt as of every point of the branch is the same from the
	// partial load, and so is every message from the cut on.
	all := log.Messages()
	var sys []conversation.Message
	for n, m := range all {
		if m.Role == conversation.RoleSystem {
			sys = append(sys, m)
		}
		require.Equal(t, conversation.Texts(conversation.EffectiveSystem(all[:n+1])), conversation.Texts(conversation.EffectiveSystem(sys)))
	}
	require.Equal(t, len(all)-skipped, len(ld.Messages()))
	cutPos := 0
	for k, e := range ld.Entries {
		if ld.Cut != "" && e.ID == ld.Cut {
			cutPos = ld.Positions[k]
		}
	}
	var fromCut []conversation.Message
	for k, e := range ld.Entries {
		if ld.Positions[k] >= cutPos && e.Message != nil {
			fromCut = append(fromCut, *e.Message)
		}
	}
	require.Equal(t, all[len(all)-len(fromCut):], fromCut)

	scanned, err := Scan(path)
	require.NoError(t, err)
	for _, tree := range []*Tree{scanned, ld.Tree} {
		checkTrees(t, log, log.Tree(), tree)
	}
}

// checkTrees checks that a scanned tree answers as the tree of the log
// in memory, and as the log itself.
func checkTrees(t *testing.T, log *Log, want, got *Tree) {
	t.Helper()
	require.Equal(t, want.Len(), got.Len())
	require.Equal(t, len(log.Entries), got.Len())
	require.Equal(t, want.Leaf(), got.Leaf())
	require.Equal(t, want.Labels(), got.Labels())
	require.Equal(t, want.Branches(), got.Branches())
	for k, e := range log.Entries {
		if len(log.Entries) > 300 && k%997 != 0 && k < len(log.Entries)-3 {
			continue // a sample of a large log: each check walks a chain
		}
		wn, err := want.Node(e.ID)
		require.NoError(t, err)
		gn, err := got.Node(e.ID)
		require.NoError(t, err)
		require.Equal(t, wn, gn)
		require.Equal(t, e.ParentID, gn.ParentID)
		require.Equal(t, e.Type, gn.Type)
		wc, _ := want.Children(e.ID)
		gc, err := got.Children(e.ID)
		require.NoError(t, err)
		require.Equal(t, wc, gc)
		chain, err := got.Chain(e.ID)
		require.NoError(t, err)
		branch, err := log.Branch(e.ID)
		require.NoError(t, err)
		require.Equal(t, ids(branch), chain)
		at, err := log.MessagesAt(e.ID)
		require.NoError(t, err)
		require.Equal(t, len(at), gn.Messages)
		ws, err := want.SystemAt(e.ID)
		require.NoError(t, err)
		gs, err := got.SystemAt(e.ID)
		require.NoError(t, err)
		require.Equal(t, ws, gs)
		require.Equal(t, len(at), gs.Count)
		for k, m := range gs.Messages {
			require.Equal(t, at[gs.Positions[k]], m)
		}
		require.Equal(t, conversation.EffectiveSystem(at), reindex(conversation.EffectiveSystem(gs.Messages), gs.Positions))
		for _, n := range []int{1, 3, 8, 16} {
			ref := e.ID[:min(n, len(e.ID))]
			wr, werr := want.Resolve(ref)
			gr, gerr := got.Resolve(ref)
			require.Equal(t, wr, gr, ref)
			require.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), ref)
		}
		es, err := got.Entries(e.ID)
		require.NoError(t, err)
		require.Equal(t, []Entry{e}, es)
	}
	msgs := log.Messages()
	for n := 1; n <= len(msgs); n += 1 + len(msgs)/100 {
		wid, err := want.NthMessage(n)
		require.NoError(t, err)
		gid, err := got.NthMessage(n)
		require.NoError(t, err)
		require.Equal(t, wid, gid)
	}
	_, err := got.NthMessage(len(msgs) + 1)
	require.Error(t, err)
}

// reindex maps the Index of prompt blocks derived from system messages
// alone to the positions of those messages in the whole conversation.
func reindex(blocks []conversation.SystemText, positions []int) []conversation.SystemText {
	for i := range blocks {
		blocks[i].Index = positions[blocks[i].Index]
	}
	return blocks
}

// relayout rewrites every entry line of the log at path in another
// layout — keys sorted, spaces — so the scan reads none of them by its
// shortcut.
func relayout(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var out bytes.Buffer
	out.WriteString(ls[0] + "\n")
	for _, l := range ls[1:] {
		var v map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(l), &v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				out.WriteString(" , ")
			}
			kb, _ := json.Marshal(k)
			out.Write(kb)
			out.WriteString(" : ")
			out.Write(v[k])
		}
		out.WriteString(" }\n")
	}
	p := path + ".relayout.jsonl"
	require.NoError(t, os.WriteFile(p, out.Bytes(), 0o600))
	return p
}

func TestLoadMatchesReadProperty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for seed := range uint64(24) {
		path := randomLog(t, dir, seed, 20+int(seed)*7)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkAgainstRead(t, path)
			checkAgainstRead(t, relayout(t, path))
		})
	}
}

func TestLoadSkipsWhatTheNextRequestDoesNotNeed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	rec, err := w.Append(
		MessageEntry(conversation.SystemMessage("seed", conversation.ModeAppend)),
		LifecycleEntry(LifecycleStarted, true, nil),
		MessageEntry(conversation.UserText("u1")),
		ExtensionDataEntry("x", nil),
		MessageEntry(conversation.AssistantText("a1")),
		MessageEntry(conversation.KeyedSystemMessage("env", "cwd")),
		MessageEntry(conversation.UserText("u2")),
		MessageEntry(conversation.AssistantText("a2")),
	)
	require.NoError(t, err)
	_, err = w.Append(CompactionEntry("they said u1 and a1", rec[6].ID, 10), MessageEntry(conversation.UserText("u3")))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	ld, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, rec[6].ID, ld.Cut)
	require.Equal(t, 2, ld.Skipped)
	require.Equal(t, 7, ld.MessageCount)
	require.Equal(t, []int{0, 1, 5, 6, 7, 8, 9}, ld.Positions)
	require.Equal(t, []string{"seed", "cwd", "u2", "a2", "u3"}, texts(ld.Messages()))
	require.Equal(t, TypeLifecycle, ld.Entries[1].Type)
	require.Equal(t, "u3", ld.Leaf().Message.Text())

	// Without the compaction, everything on the branch.
	w, _, err = Open(path)
	require.NoError(t, err)
	_, err = w.Append(MoveEntry(rec[7].ID, w.Leaf()), MessageEntry(conversation.UserText("u3 again")))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	ld, err = Load(path)
	require.NoError(t, err)
	require.Empty(t, ld.Cut)
	require.Zero(t, ld.Skipped)
	require.Equal(t, []string{"seed", "u1", "a1", "cwd", "u2", "a2", "u3 again"}, texts(ld.Messages()))
	require.Len(t, ld.Entries, 10)
}

func TestOpenLoaded(t *testing.T) {
	t.Parallel()
	path, rec := writeSample(t, t.TempDir())
	complete, err := os.ReadFile(path)
	require.NoError(t, err)
	torn := `{"type":"message","id":"ffffffffffffffff","parent_id":"00000000000000af","time":"2026-03-14T09:27:09Z","message":{"role":"user","content":[{"type":"te`
	require.NoError(t, os.WriteFile(path, append(bytes.Clone(complete), torn...), 0o600))

	ld, err := Load(path)
	require.NoError(t, err)
	require.Len(t, ld.Warnings, 1)
	require.Contains(t, ld.Warnings[0], fmt.Sprintf("session log %s line %d: skipped torn last line", path, len(rec)+2))

	w, ld, err := OpenLoaded(path)
	require.NoError(t, err)
	require.Contains(t, ld.Warnings[0], "repaired torn last line")
	_, _, err = OpenLoaded(path)
	require.ErrorIs(t, err, ErrLocked)
	require.Equal(t, rec[len(rec)-1].ID, w.Leaf())
	_, err = w.Append(MessageEntry(conversation.UserText("more")))
	require.NoError(t, err)
	_, err = w.Append(Entry{Type: TypeModelChange, ID: rec[0].ID, ModelChange: &ModelChange{"p", "m"}})
	require.ErrorContains(t, err, "already used", "the Tree knows the log's ids")
	_, err = w.Append(LabelEntry(rec[2].ID, "x"), MoveEntry(rec[3].ID, rec[5].ID))
	require.NoError(t, err)
	_, err = w.Append(LabelEntry("0123456789abcdef", "x"))
	require.ErrorContains(t, err, "names no entry")
	require.NoError(t, w.Close())
	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, rec, log.Entries[:len(rec)])
	require.Equal(t, "more", log.Entries[len(rec)].Message.Text())

	// A last line without its newline gets one.
	require.NoError(t, os.WriteFile(path, bytes.TrimSuffix(complete, []byte("\n")), 0o600))
	w, ld, err = OpenLoaded(path)
	require.NoError(t, err)
	require.Contains(t, ld.Warnings[0], "added the missing newline")
	require.NoError(t, w.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, complete, got)

	_, _, err = OpenLoaded(filepath.Join(t.TempDir(), "none.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestScanErrorsAsRead(t *testing.T) {
	t.Parallel()
	ok1 := line("e1", "", userHi)
	for name, content := range map[string]string{
		"empty":             "",
		"header":            "hello\n" + ok1 + "\n",
		"newer":             `{"type":"session","version":2,"id":"s","created":"2026-01-01T00:00:00Z"}` + "\n",
		"middle":            testHeader + "\n" + ok1 + "\n{not json\n" + line("e3", "e1", userHi) + "\n",
		"not an object":     testHeader + "\n[1,2]\n",
		"second header":     testHeader + "\n" + testHeader + "\n",
		"no type":           testHeader + "\n" + `{"id":"e1"}` + "\n",
		"no id":             testHeader + "\n" + `{"type":"message","time":"2026-01-01T00:00:01Z","message":` + userHi + `}` + "\n",
		"unknown no id":     testHeader + "\n" + `{"type":"bookmark","name":"x"}` + "\n",
		"unknown parent":    testHeader + "\n" + ok1 + "\n" + line("e2", "zz", userHi) + "\n",
		"second root":       testHeader + "\n" + ok1 + "\n" + line("e2", "", userHi) + "\n",
		"duplicate":         testHeader + "\n" + ok1 + "\n" + line("e1", "e1", userHi) + "\n",
		"duplicate hex":     testHeader + "\n" + line("00000000000000a1", "", userHi) + "\n" + line("00000000000000a2", "00000000000000a1", userHi) + "\n" + line("00000000000000a1", "00000000000000a2", userHi) + "\n",
		"cycle":             testHeader + "\n" + line("e1", "e2", userHi) + "\n" + line("e2", "e1", userHi) + "\n",
		"label no target":   testHeader + "\n" + ok1 + "\n" + `{"type":"label","id":"l1","parent_id":"e1","time":"2026-01-01T00:00:01Z","label":"x"}` + "\n",
		"after skipped":     testHeader + "\n" + ok1 + "\n" + moveText("m1", "zz", "e1") + "\n" + line("e2", "m1", userHi) + "\n",
		"bad leaf message":  testHeader + "\n" + ok1 + "\n" + line("e2", "e1", `{"role":"robot","content":[]}`) + "\n",
		"dup of skipped id": testHeader + "\n" + ok1 + "\n" + moveText("m1", "zz", "e1") + "\n" + moveText("m1", "e1", "e1") + "\n",
	} {
		path := writeFile(t, "s.jsonl", content)
		_, rerr := Read(path)
		require.Error(t, rerr, name)
		_, lerr := Load(path)
		require.Error(t, lerr, name)
		require.Equal(t, rerr.Error(), lerr.Error(), name)
		_, _, oerr := OpenLoaded(path)
		require.Equal(t, rerr.Error(), oerr.Error(), name)
		require.NoFileExists(t, path+".lock")
	}
}

func TestLoadToleratesAsRead(t *testing.T) {
	t.Parallel()
	ok := testHeader + "\n" + line("e1", "", userHi) + "\n" + line("e2", "e1", userHi) + "\n"
	for name, content := range map[string]string{
		"bad move":        ok + moveText("m1", "zz", "e2") + "\n",
		"bad label":       ok + labelText("l1", "e2", "zz", "x") + "\n",
		"moves in cycle":  ok + moveText("m1", "m2", "e2") + "\n" + moveText("m2", "m1", "e2") + "\n",
		"bad then good":   ok + moveText("m1", "zz", "e2") + "\n" + moveText("m2", "e1", "e2") + "\n" + line("e3", "m2", userHi) + "\n",
		"torn":            ok + `{"type":"message","id":"e3","parent_id":"e2","ti`,
		"no newline":      ok + line("e3", "e2", userHi),
		"blank lines":     testHeader + "\r\n\n" + line("e1", "", userHi) + "\r\n   \n" + line("e2", "e1", userHi) + "\n\n",
		"blank no eol":    ok + "  ",
		"header only":     testHeader,
		"header with eol": testHeader + "\n",
	} {
		path := writeFile(t, "s.jsonl", content)
		log, err := Read(path)
		require.NoError(t, err, name)
		ld, err := Load(path)
		require.NoError(t, err, name)
		require.Equal(t, log.Warnings, ld.Warnings, name)
		want, _, _, _, _ := expectLoaded(t, log)
		require.Equal(t, want, ld.Entries, name)
		checkTrees(t, log, log.Tree(), ld.Tree)

		// Open and OpenLoaded repair alike.
		var after []string
		for k, open := range []func(string) (*Writer, error){
			func(p string) (*Writer, error) { w, _, err := Open(p); return w, err },
			func(p string) (*Writer, error) { w, _, err := OpenLoaded(p); return w, err },
		} {
			p := writeFile(t, fmt.Sprintf("o%d.jsonl", k), content)
			w, err := open(p)
			require.NoError(t, err, name)
			require.Equal(t, log.Tree().Leaf(), w.Leaf(), name)
			require.NoError(t, w.Close())
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			after = append(after, string(data))
		}
		require.Equal(t, after[0], after[1], "%s: the same repair", name)
	}
}

func TestLoadInManyChunks(t *testing.T) {
	t.Parallel()
	// Over several scan jobs, with a line longer than a job.
	long := strings.Repeat("0123456789abcdef", scanChunk/16+100)
	content := bigLog(12000, func(i int) string {
		if i == 7000 || i == 11999 {
			return long
		}
		return fmt.Sprint("message ", i, strings.Repeat("\\n", i%100))
	})
	path := writeFile(t, "big.jsonl", content)
	log, err := Read(path)
	require.NoError(t, err)
	ld, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, log.Entries, ld.Entries)
	require.Equal(t, long, ld.Entries[7000].Message.Text())
	checkTrees(t, log, log.Tree(), ld.Tree)

	// The first bad line is named, in any job.
	for _, bad := range []int{3, 1001, 9990, 11998} {
		broken := strings.Replace(content, fmt.Sprintf(`"id":"e%d","parent_id":"e%d"`, bad, bad-1), fmt.Sprintf(`"id":"e%d","parent_id":"zz"`, bad), 1)
		broken = strings.Replace(broken, `"text":"message 10001`, `"text":"message 10001\x`, 1)
		p := writeFile(t, "broken.jsonl", broken)
		_, rerr := Read(p)
		_, lerr := Load(p)
		require.Error(t, rerr)
		require.Error(t, lerr)
		if bad < 10001 {
			require.Equal(t, rerr.Error(), lerr.Error())
		} else {
			// The scan finds a bad tree before any line is decoded.
			require.ErrorContains(t, lerr, fmt.Sprintf(`line %d: entry e%d: parent_id "zz"`, bad+2, bad))
			require.ErrorContains(t, rerr, "line 10003: invalid JSON")
		}
	}
}
