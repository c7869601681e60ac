package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/sdk"
)

// call runs tool name of an ext rooted at dir with a raw JSON input, the
// way the SDK does: a returned error is an error result.
func call(t *testing.T, dir, name, input string) sdk.ToolResult {
	t.Helper()
	return callCtx(t, context.Background(), dir, name, input)
}

func callCtx(t *testing.T, ctx context.Context, dir, name, input string) sdk.ToolResult {
	t.Helper()
	for _, tool := range (&ext{dir: dir}).Tools() {
		if tool.Name == name {
			res, err := tool.Run(ctx, nil, sdk.ToolCall{ID: "c1", Name: name, Input: json.RawMessage(input)})
			if err != nil {
				return sdk.ToolResult{Content: err.Error(), IsError: true}
			}
			return res
		}
	}
	t.Fatalf("no tool %q", name)
	return sdk.ToolResult{}
}

// js encodes v as JSON, for inputs with awkward strings.
func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func TestSchemas(t *testing.T) {
	t.Parallel()
	nameRE := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	seen := map[string]bool{}
	for _, tool := range (&ext{dir: t.TempDir()}).Tools() {
		require.Regexp(t, nameRE, tool.Name)
		require.False(t, seen[tool.Name], "tool %s twice", tool.Name)
		seen[tool.Name] = true
		require.NotEmpty(t, tool.Description, tool.Name)
		require.NotEmpty(t, tool.Guidance, tool.Name)
		require.NotContains(t, tool.Guidance, "\n", "%s: guidance is one paragraph", tool.Name)
		require.NotNil(t, tool.Run, tool.Name)

		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		require.NoError(t, json.Unmarshal(tool.Parameters, &s), tool.Name)
		require.Equal(t, "object", s.Type, tool.Name)
		require.NotEmpty(t, s.Properties, tool.Name)
		for name, raw := range s.Properties {
			var p struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			}
			require.NoError(t, json.Unmarshal(raw, &p))
			require.NotEmpty(t, p.Type, "%s.%s", tool.Name, name)
			require.NotEmpty(t, p.Description, "%s.%s", tool.Name, name)
		}
		for _, r := range s.Required {
			require.Contains(t, s.Properties, r, tool.Name)
		}
	}
	require.Len(t, seen, 7)
}

func TestInvalidInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "hello\n"})
	for _, tc := range []struct {
		tool, input, want string
	}{
		{"read", `{"path":`, "not valid JSON"},
		{"read", `["f.txt"]`, "must be a JSON object"},
		{"read", `{}`, `missing required field "path"`},
		{"read", ``, `missing required field "path"`},
		{"read", `{"path":null}`, `missing required field "path"`},
		{"read", `{"path":7}`, `field "path" must be a string, not number`},
		{"read", `{"path":"f.txt","offset":"2"}`, `field "offset" must be an integer, not string`},
		{"read", `{"path":"f.txt","offset":1.5}`, `field "offset" must be an integer`},
		{"read", `{"path":"f.txt","offset":-1}`, `field "offset" must be 1 or more`},
		{"read", `{"path":"f.txt","limit":5000}`, `field "limit" must be between 1 and 2000`},
		{"read", `{"file_path":"f.txt"}`, `missing required field "path"`},
		{"read", `{"path":"f.txt","file_path":"f.txt"}`, `unknown field "file_path" (the fields are: limit, offset, path)`},
		{"write", `{"path":"g.txt"}`, `missing required field "content"`},
		{"write", `{"path":"g.txt","content":["a"]}`, `field "content" must be a string, not array`},
		{"edit", `{"path":"f.txt"}`, `missing required field "edits"`},
		{"edit", `{"path":"f.txt","edits":[]}`, `field "edits" must hold at least one edit`},
		{"edit", `{"path":"f.txt","edits":{"old_text":"a"}}`, `field "edits" must be an array, not object`},
		{"edit", `{"path":"f.txt","edits":[{"new_text":"a"}]}`, `edits[0]: missing required field "old_text"`},
		{"edit", `{"path":"f.txt","edits":[{"old_text":"a","new_text":"b"},{"old_text":"a"}]}`, `edits[1]: missing required field "new_text"`},
		{"edit", `{"path":"f.txt","edits":[{"old_text":1,"new_text":"b"}]}`, `field "edits.old_text" must be a string, not number`},
		{"bash", `{}`, `missing required field "command"`},
		{"bash", `{"command":"true","timeout":601}`, `field "timeout" must be between 1 and 600, not 601`},
		{"bash", `{"command":"true","timeout":-1}`, `field "timeout" must be between 1 and 600`},
		{"bash", `{"command":"  "}`, `field "command" is empty`},
		{"ls", `{"limit":"x"}`, `field "limit" must be an integer, not string`},
		{"find", `{"path":"."}`, `missing required field "pattern"`},
		{"find", `{"pattern":"[a"}`, `field "pattern": malformed glob`},
		{"find", `{"pattern":"{a,b"}`, `field "pattern": unmatched {`},
		{"grep", `{"pattern":"("}`, `field "pattern": error parsing regexp`},
		{"grep", `{"pattern":"a","glob":"[x"}`, `field "glob": malformed glob`},
		{"grep", `{"pattern":"a","ignore_case":"yes"}`, `field "ignore_case" must be a boolean, not string`},
	} {
		t.Run(tc.tool+" "+tc.input, func(t *testing.T) {
			t.Parallel()
			res := call(t, dir, tc.tool, tc.input)
			require.True(t, res.IsError, res.Content)
			require.Contains(t, res.Content, tc.want)
		})
	}
}

func numbered(from, to int, text func(int) string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(text(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := func(i int) string { return "line " + strings.Repeat("x", i%3) }
	writeFiles(t, dir, map[string]string{
		"a.txt":      "alpha\n\tbeta\ngamma", // no final newline
		"long.txt":   numbered(1, 2500, line),
		"wide.txt":   numbered(1, 100, func(int) string { return strings.Repeat("w", 1000) }),
		"oneline":    strings.Repeat("é", 3000) + "\n",
		"empty.txt":  "",
		"bin.dat":    "PK\x03\x04\x00\x00binary",
		"sub/c.txt":  "in sub\n",
		"crlf.txt":   "one\r\ntwo\r\n",
		"lines3.txt": "1\n2\n3\n",
	})
	for _, tc := range []struct {
		name, input string
		want        []string // substrings of the result
		exact       string   // the whole result, when set
		isErr       bool
	}{
		{name: "whole file", input: `{"path":"a.txt"}`, exact: "     1\talpha\n     2\t\tbeta\n     3\tgamma\n"},
		{name: "offset and limit", input: `{"path":"lines3.txt","offset":2,"limit":1}`,
			exact: "     2\t2\n\n[Showing lines 2-2 of 3. Use offset=3 to read on.]\n"},
		{name: "offset to end", input: `{"path":"lines3.txt","offset":3}`, exact: "     3\t3\n"},
		{name: "subdir", input: `{"path":"sub/c.txt"}`, exact: "     1\tin sub\n"},
		{name: "absolute", input: js(t, map[string]string{"path": filepath.Join(dir, "sub", "c.txt")}), exact: "     1\tin sub\n"},
		{name: "cut at 2000 lines", input: `{"path":"long.txt"}`,
			want: []string{"  2000\tline xx\n", "[Showing lines 1-2000 of 2500. Use offset=2001 to read on.]"}},
		{name: "read on", input: `{"path":"long.txt","offset":2001}`, want: []string{"  2001\tline \n", "  2500\tline x\n"}},
		{name: "cut at 50 KB", input: `{"path":"wide.txt"}`,
			want: []string{"    50\t", "[Output cut at 50 KB. Showing lines 1-50 of 100. Use offset=51 to read on.]"}},
		{name: "long line cut", input: `{"path":"oneline"}`, want: []string{"… [line cut: 6000 bytes]"}},
		{name: "crlf kept", input: `{"path":"crlf.txt"}`, exact: "     1\tone\r\n     2\ttwo\r\n"},
		{name: "empty", input: `{"path":"empty.txt"}`, want: []string{"empty.txt is empty"}},
		{name: "binary", input: `{"path":"bin.dat"}`, want: []string{"binary file (12 bytes)"}, isErr: true},
		{name: "directory", input: `{"path":"sub"}`, want: []string{"is a directory; list it with ls"}, isErr: true},
		{name: "missing", input: `{"path":"nope.txt"}`, want: []string{"nope.txt: no such file or directory"}, isErr: true},
		{name: "offset past end", input: `{"path":"lines3.txt","offset":9}`, want: []string{"offset 9 is past the end of the file (3 lines)"}, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, dir, "read", tc.input)
			require.Equal(t, tc.isErr, res.IsError, res.Content)
			if tc.exact != "" {
				require.Equal(t, tc.exact, res.Content)
			}
			for _, w := range tc.want {
				require.Contains(t, res.Content, w)
			}
			require.LessOrEqual(t, len(res.Content), maxBytes+200)
		})
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"old.txt": "old\n"})

	res := call(t, dir, "write", `{"path":"new/deep/f.txt","content":"héllo\n"}`)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "Created "+filepath.Join(dir, "new/deep/f.txt")+": wrote 7 bytes.", res.Content)
	got, err := os.ReadFile(filepath.Join(dir, "new/deep/f.txt"))
	require.NoError(t, err)
	require.Equal(t, "héllo\n", string(got))

	res = call(t, dir, "write", `{"path":"old.txt","content":""}`)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "Overwrote")
	require.Contains(t, res.Content, "wrote 0 bytes")
	got, err = os.ReadFile(filepath.Join(dir, "old.txt"))
	require.NoError(t, err)
	require.Empty(t, got)

	res = call(t, dir, "write", `{"path":"new","content":"x"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "is a directory")
}

func TestEdit(t *testing.T) {
	t.Parallel()
	const orig = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	for _, tc := range []struct {
		name  string
		edits []map[string]string
		want  string // the file afterwards; orig when the edit fails
		msg   string
		isErr bool
	}{
		{name: "one edit", edits: []map[string]string{{"old_text": "func a() {\n\treturn 1", "new_text": "func a() {\n\treturn 2"}},
			want: strings.Replace(orig, "return 1", "return 2", 1), msg: "applied 1 edit (at line 1)"},
		{name: "in order, on the result", edits: []map[string]string{
			{"old_text": "func a", "new_text": "func first"},
			{"old_text": "func b() {\n\treturn 1", "new_text": "func b() {\n\treturn 3"},
			{"old_text": "first", "new_text": "alpha"},
		}, want: "func alpha() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 3\n}\n", msg: "applied 3 edits (at line 1, 5, 1)"},
		{name: "delete", edits: []map[string]string{{"old_text": "\nfunc b() {\n\treturn 1\n}\n", "new_text": ""}},
			want: "func a() {\n\treturn 1\n}\n", msg: "applied 1 edit"},
		{name: "missing", edits: []map[string]string{
			{"old_text": "func a", "new_text": "func z"},
			{"old_text": "func c", "new_text": "func d"},
		}, want: orig, msg: `edit 2 of 2: old_text not found: "func c"; nothing was written`, isErr: true},
		{name: "ambiguous", edits: []map[string]string{{"old_text": "return 1", "new_text": "return 2"}},
			want: orig, msg: "edit 1 of 1: old_text occurs 2 times; include more surrounding text", isErr: true},
		{name: "ambiguous after an earlier edit", edits: []map[string]string{
			{"old_text": "func a", "new_text": "func b"},
			{"old_text": "func b", "new_text": "func c"},
		}, want: orig, msg: "edit 2 of 2: old_text occurs 2 times", isErr: true},
		{name: "empty old_text", edits: []map[string]string{{"old_text": "", "new_text": "x"}},
			want: orig, msg: "edit 1 of 1: old_text is empty", isErr: true},
		{name: "no change", edits: []map[string]string{{"old_text": "func a", "new_text": "func a"}},
			want: orig, msg: "leave the file unchanged; nothing was written", isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f.go": orig})
			res := call(t, dir, "edit", js(t, map[string]any{"path": "f.go", "edits": tc.edits}))
			require.Equal(t, tc.isErr, res.IsError, res.Content)
			require.Contains(t, res.Content, tc.msg)
			got, err := os.ReadFile(filepath.Join(dir, "f.go"))
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}
}

func TestEditFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"crlf.txt": "a\r\nb\r\n", "bin": "a\x00b"})
	res := call(t, dir, "edit", `{"path":"crlf.txt","edits":[{"old_text":"a\nb","new_text":"c"}]}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "CRLF line endings")
	res = call(t, dir, "edit", `{"path":"bin","edits":[{"old_text":"a","new_text":"c"}]}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "binary file")
	res = call(t, dir, "edit", `{"path":"none","edits":[{"old_text":"a","new_text":"c"}]}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "no such file or directory")
}

func TestApplyEdits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		content string
		edits   []Edit
		want    string
		lines   []int
		err     string
	}{
		{"single", "abc", []Edit{{"b", "B"}}, "aBc", []int{1}, ""},
		{"line number", "x\ny\nz", []Edit{{"z", "Z"}}, "x\ny\nZ", []int{3}, ""},
		{"overlapping occurrences are ambiguous", "aaa", []Edit{{"aa", "b"}}, "", nil, "edit 1 of 1: old_text occurs 2 times"},
		{"count of many", "a a a a", []Edit{{"a", "b"}}, "", nil, "occurs 4 times"},
		{"second edit missing", "ab", []Edit{{"a", "c"}, {"a", "d"}}, "", nil, "edit 2 of 2: old_text not found"},
		{"new text may create a new match", "ab", []Edit{{"a", "bb"}, {"bbb", "c"}}, "c", []int{1, 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, lines, err := applyEdits(tc.content, tc.edits)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Empty(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.lines, lines)
		})
	}
}

func FuzzApplyEdits(f *testing.F) {
	f.Add("hello world", "world", "there", "", "")
	f.Add("aaa", "aa", "b", "b", "c")
	f.Add("x\ny\n", "y\n", "", "x", "z")
	f.Fuzz(func(t *testing.T, content, old1, new1, old2, new2 string) {
		out, lines, err := applyEdits(content, []Edit{{old1, new1}})
		if err == nil {
			n := 0
			for i := range len(content) - len(old1) + 1 {
				if strings.HasPrefix(content[i:], old1) {
					n++
				}
			}
			if old1 == "" || n != 1 {
				t.Fatalf("applied %q to %q, which occurs %d times", old1, content, n)
			}
			if want := strings.Replace(content, old1, new1, 1); out != want {
				t.Fatalf("got %q, want %q", out, want)
			}
			if len(lines) != 1 || lines[0] < 1 {
				t.Fatalf("lines %v", lines)
			}
		} else if out != "" || lines != nil {
			t.Fatalf("failed apply returned %q %v", out, lines)
		}
		_, _, _ = applyEdits(content, []Edit{{old1, new1}, {old2, new2}})
	})
}

// Parallel edits of one file, as one model reply may ask for, all land:
// none reads the file while another is writing it.
func TestParallelEditsOfOneFileAllApply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var want strings.Builder
	for i := range 20 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	p := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(p, []byte(want.String()), 0o644))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			old, repl := fmt.Sprintf("line %d\n", i), fmt.Sprintf("LINE %d\n", i)
			_, err := editFile(t.Context(), dir, editInput{Path: "f.txt", Edits: []editSpec{{OldText: &old, NewText: &repl}}})
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, strings.ToUpper(want.String()), string(data))
}
