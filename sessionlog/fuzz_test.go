package sessionlog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/conversation"
	"github.com/stretchr/testify/require"
)

// testdataLogs returns the contents of the logs under testdata/.
func testdataLogs(f *testing.F) [][]byte {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(f, err)
	require.NotEmpty(f, paths)
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		out = append(out, b)
	}
	return out
}

// FuzzDecode: Decode never panics, and a log it accepts, written out again
// the way the writer writes, decodes to the same conversation and tree.
func FuzzDecode(f *testing.F) {
	for _, b := range testdataLogs(f) {
		f.Add(b)
		f.Add(b[:len(b)*2/3]) // a torn tail
	}
	f.Add([]byte(testHeader + "\n" + line("e1", "", `{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`) + "\n"))
	f.Add([]byte(testHeader + "\n" + line("e1", "", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[]}]}`) + "\n"))
	f.Add([]byte(testHeader + "\n" + line("e1", "", `{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{ "a" : [1, 2.5e3] }}]}`) + "\n"))
	f.Add([]byte(testHeader + "\n" +
		line("e1", "", `{"role":"system","mode":"append","key":"k","source":"s \"q\" \u00e9","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`) + "\n" +
		line("e2", "e1", `{"role":"system","key":"k","content":[{"type":"text","text":"a2"}]}`) + "\n" +
		line("e3", "e2", `{"role":"system","mode":"replace","key":"r","content":[{"type":"text","text":""}]}`) + "\n" +
		line("e4", "e3", `{"role":"system","key":"r","source":"","content":[{"type":"text","text":"r2"}]}`) + "\n" +
		line("e5", "e4", `{"role":"system","key":"r","content":[{"type":"text","text":""}]}`) + "\n"))
	f.Add([]byte(treeSeed))
	f.Add([]byte(testHeader + "\n" + line("e1", "", `{"role":"user","content":[{"type":"text","text":"hi"}]}`) + "\n" +
		`{"type":"request_settings","id":"e2","parent_id":"e1","time":"2026-01-01T00:00:01Z","request":{"provider":"p","wire":"anthropic","options":{"version":"v"},"model":"m","max_tokens":5,"temperature":0.5,"tool_choice":{"mode":"tool","name":"t"},"cache":{"marks":true},"tools":[{"owner":"o","name":"t","parameters":{"type":"object"}}]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		log, err := Decode(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		msgs := log.Messages()
		_ = log.MessageCount()
		_ = log.FirstUserText()

		var buf bytes.Buffer
		require.NoError(t, appendHeader(&buf, log.Header))
		for i := range log.Entries {
			require.NoError(t, appendEntry(&buf, &log.Entries[i]))
		}
		again, err := Decode(bytes.NewReader(buf.Bytes()), "again.jsonl")
		if err != nil {
			t.Fatalf("the re-encoded log does not decode: %v\n%s", err, buf.String())
		}
		require.Equal(t, log.Header, again.Header)
		require.Equal(t, normalize(msgs), normalize(again.Messages()))
		require.Equal(t, len(log.Entries), len(again.Entries))
		for i, e := range log.Entries {
			g := again.Entries[i]
			require.Equal(t, [3]string{string(e.Type), e.ID, e.ParentID}, [3]string{string(g.Type), g.ID, g.ParentID})
			require.True(t, e.Time.Equal(g.Time))
		}
		for n := range len(msgs) + 1 {
			require.Equal(t, conversation.EffectiveSystem(msgs[:n]), conversation.EffectiveSystem(again.Messages()[:n]))
		}

		// The one shape: json.Marshal of a message is the log's message,
		// and json.Unmarshal reads it back as the log does.
		for _, m := range msgs {
			data, err := json.Marshal(m)
			require.NoError(t, err)
			var back conversation.Message
			require.NoError(t, json.Unmarshal(data, &back), "%s", data)
			require.Equal(t, normalize([]conversation.Message{m}), normalize([]conversation.Message{back}))
		}
	})
}

// treeSeed is a small log with a branch, moves, labels and a branch
// summary, for the fuzz targets.
const treeSeed = testHeader + "\n" +
	`{"type":"message","id":"e1","time":"2026-01-01T00:00:01Z","message":{"role":"system","mode":"append","content":[{"type":"text","text":"seed"}]}}` + "\n" +
	`{"type":"message","id":"e2","parent_id":"e1","time":"2026-01-01T00:00:01Z","message":{"role":"user","content":[{"type":"text","text":"first"}]}}` + "\n" +
	`{"type":"message","id":"e3","parent_id":"e2","time":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"answer"}]}}` + "\n" +
	`{"type":"label","id":"l1","parent_id":"e3","time":"2026-01-01T00:00:02Z","target":"e2","label":"try one"}` + "\n" +
	`{"type":"move","id":"m1","parent_id":"e1","time":"2026-01-01T00:00:02Z","from":"l1"}` + "\n" +
	`{"type":"branch_summary","id":"b1","parent_id":"m1","time":"2026-01-01T00:00:02Z","summary":"asked first","from":"l1"}` + "\n" +
	`{"type":"message","id":"e4","parent_id":"b1","time":"2026-01-01T00:00:01Z","message":{"role":"user","content":[{"type":"text","text":"second"}]}}` + "\n" +
	`{"type":"compaction","id":"c1","parent_id":"e4","time":"2026-01-01T00:00:02Z","summary":"s","first_kept_id":"e4"}` + "\n" +
	`{"type":"label","id":"l2","parent_id":"c1","time":"2026-01-01T00:00:02Z","target":"e2","label":""}` + "\n" +
	`{"type":"move","id":"m2","parent_id":"e3","time":"2026-01-01T00:00:02Z","from":"l2"}` + "\n" +
	`{"type":"label","id":"l3","parent_id":"m2","time":"2026-01-01T00:00:02Z","target":"zz","label":"bad"}` + "\n"

// normalize compacts tool inputs: the writer writes JSON values compactly.
func normalize(msgs []conversation.Message) []conversation.Message {
	out := make([]conversation.Message, len(msgs))
	for i, m := range msgs {
		m = m.Clone()
		for j, b := range m.Content {
			if len(b.Input) > 0 {
				var c bytes.Buffer
				if json.Compact(&c, b.Input) == nil {
					m.Content[j].Input = c.Bytes()
				}
			}
		}
		out[i] = m
	}
	return out
}

// FuzzFastDecode: where the fast decoder takes a line, encoding/json takes
// it too and decodes it to exactly the same thing.
func FuzzFastDecode(f *testing.F) {
	for _, b := range testdataLogs(f) {
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	for _, s := range []string{
		line("e1", "", `{"role":"user","content":[{"type":"text","text":"tab\t \u00e9 \ud83d\ude80 \/ \\ \" \b\f\n\r"}]}`),
		line("e1", "", `{"role":"user","content":[{"type":"text","text":"caf`+"\xc3\xa9"+` bad `+"\xff"+`"}]}`),
		`{"type":"extension_data","id":"x","time":"2026-01-01T00:00:00+02:00","extension":"e","data":null}`,
		`{"type":"extension_data","id":"x","time":"2026-01-01T00:00:00Z","extension":"e","data":[{"a":"}"},-1.5e+3,true]}`,
		`{"type":"lifecycle","id":"x","time":"2026-01-01T00:00:00Z","event":"started","reseeded":true,"extensions":[]}`,
		` { "type" : "model_change" , "id":"x","Provider":"p","model":"m"} `,
		`{"type":"message","type":"lifecycle"}`,
		`{"type":"message","message":{"role":"tool","content":[{"type":"tool_result","content":[{"type":"text","content":[]}],"is_error":false}]}}`,
		line("e1", "", `{"role":"system","mode":"append","key":"tools/a:b.c-d_e","source":"extension \"tools\" \u00e9 \/ <&>","content":[{"type":"text","text":""}]}`),
		line("e1", "", `{"role":"system","key":"k","key":"k","content":[]}`),
		line("e1", "", `{"role":"system","key":7,"source":null,"content":[]}`),
		line("e1", "", `{"role":"user","content":[{"type":"text","text":"x","key":"k\n","source":"s"}]}`),
		line("e1", "", `{"role":"user","content":[{"type":"text","added":"project /p/.panto/USER_PROMPT.md \u00e9","text":"x"},{"type":"text","text":"y"}]}`),
		line("e1", "", `{"role":"user","content":[{"type":"text","added":"a","added":"b","text":"x"}]}`),
		line("e1", "", `{"role":"user","content":[{"type":"text","added":null,"text":"x"}]}`),
		line("e1", "", `{"role":"user","content":[{"type":"image","media_type":"image/png","sha256":"497790947d4666760ce38f3c00e852c71fdb66cae849bae8e9ede352719e1581","size":70}]}`),
		line("e1", "", `{"role":"user","content":[{"type":"image","media_type":"image/png","sha256":"../../etc/passwd","size":-1}]}`),
		line("e1", "", `{"role":"tool","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","media_type":"image/gif","sha256":"497790947d4666760ce38f3c00e852c71fdb66cae849bae8e9ede352719e1581","size":1e3}]}]}`),
		line("e1", "", `{"role":"assistant","content":[{"type":"text","added":"a","text":"x"}]}`),
		line("e1", "", `{"role":"system","content":[{"type":"system","text":"x","mode":"replace","key":"k","source":"s"}]}`),
		`{"type":"message","id":"e2","parent_id":"e1","time":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"a"}]},"usage":{"input_tokens":12,"output_tokens":3,"cache_read_tokens":100,"cache_write_tokens":0,"reasoning_tokens":1}}`,
		`{"type":"message","id":"e2","parent_id":"e1","time":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[]},"usage":{"input_tokens":-1,"output_tokens":1.5}}`,
		`{"type":"move","id":"m1","parent_id":"e1","time":"2026-01-01T00:00:02Z","from":"e3"}`,
		`{"type":"move","id":"m1","parent_id":"e1","time":"2026-01-01T00:00:02Z","from":"e\u0033","from":"x"}`,
		`{"type":"label","id":"l1","parent_id":"e3","time":"2026-01-01T00:00:02Z","target":"e1","label":"checkpoint \"one\""}`,
		`{"type":"label","id":"l1","parent_id":"e3","time":"2026-01-01T00:00:02Z","target":"e1","label":""}`,
		`{"type":"label","id":"l1","parent_id":"e3","time":"2026-01-01T00:00:02Z","target":"e1","label":{"name":"x"}}`,
		`{"type":"branch_summary","id":"b1","parent_id":"m1","time":"2026-01-01T00:00:02Z","summary":"tried \u00e9","from":"e3"}`,
		`{"type":"compaction","id":"c1","parent_id":"m1","time":"2026-01-01T00:00:02Z","summary":"s","first_kept_id":"e1","tokens_before":12}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fd fastDecoder
		var fast, slow wireEntry
		if !fd.entry(line, &fast) {
			return
		}
		require.NoError(t, json.Unmarshal(line, &slow), "the fast decoder took a line encoding/json refuses")
		require.Equal(t, slow, fast)

		// Again with the same decoder, which now holds the line's id and
		// message from before: the same result.
		var again wireEntry
		require.True(t, fd.entry(line, &again))
		require.Equal(t, slow, again)
	})
}

// FuzzTree: over whole small logs with moves and labels, Read and Load
// never panic; what Read accepts, its Tree answers (Branch, Resolve,
// Labels, Children); and written out again as panto writes, Load and the
// scanned Tree agree with Read.
func FuzzTree(f *testing.F) {
	for _, b := range testdataLogs(f) {
		f.Add(b)
	}
	f.Add([]byte(treeSeed))
	f.Add([]byte(treeSeed[:len(treeSeed)-40]))
	f.Add([]byte(strings.Replace(treeSeed, `"parent_id":"e1","time":"2026-01-01T00:00:02Z","from":"l1"`, `"parent_id":"zz","time":"2026-01-01T00:00:02Z","from":"l1"`, 1)))
	f.Add([]byte(strings.ReplaceAll(treeSeed, `","`, `" , "`)))
	// An unknown entry is kept as its line, a key given twice included.
	f.Add([]byte(testHeader + "\n" + `{"type":"0","id":"0","id":"1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ld, _, lerr := loadFrom(bytes.NewReader(data), int64(len(data)), "fuzz.jsonl")
		if lerr == nil {
			tr := ld.Tree
			_, _ = tr.Branches(), tr.Labels()
			if leaf := tr.Leaf(); leaf != "" {
				_, _ = tr.Children(leaf)
				_, _ = tr.SystemAt(leaf)
				_, _ = tr.Resolve(leaf[:1])
			}
		}
		log, err := Decode(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		tree := log.Tree()
		labels := log.Labels()
		for id := range labels {
			require.NotNil(t, log.Find(id))
		}
		for _, e := range log.Entries {
			for n := 1; n <= len(e.ID); n++ {
				got, err := log.Resolve(e.ID[:n])
				if err == nil {
					require.True(t, strings.HasPrefix(got, e.ID[:n]))
				}
			}
			got, err := log.Resolve(e.ID)
			require.NoError(t, err)
			require.Equal(t, e.ID, got)
			_, err = log.Branch(e.ID)
			require.NoError(t, err)
			_, err = tree.Children(e.ID)
			require.NoError(t, err)
		}

		var buf bytes.Buffer
		require.NoError(t, appendHeader(&buf, log.Header))
		for i := range log.Entries {
			require.NoError(t, appendEntry(&buf, &log.Entries[i]))
		}
		again, err := Decode(bytes.NewReader(buf.Bytes()), "again.jsonl")
		require.NoError(t, err)
		ld, _, err = loadFrom(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "again.jsonl")
		require.NoError(t, err, "Load refuses what Read accepts:\n%s", buf.String())
		entries, positions, cut, skipped, count := expectLoaded(t, again)
		require.Equal(t, entries, ld.Entries)
		require.Equal(t, positions, ld.Positions)
		require.Equal(t, [3]int{len(cut), skipped, count}, [3]int{len(ld.Cut), ld.Skipped, ld.MessageCount})
		checkTrees(t, again, again.Tree(), ld.Tree)
	})
}
