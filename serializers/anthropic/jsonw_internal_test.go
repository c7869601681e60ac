package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// marshalString is what encoding/json writes for s with HTML escaping off,
// the output appendString promises to match byte for byte.
func marshalString(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var stringSeeds = []string{
	"", "plain", `"quoted" \back\slash`, "tab\tnl\ncr\r bs\b ff\f", "\x00\x01\x1f\x7f",
	"<html> & é 日本 🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80 surrogate",
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range stringSeeds {
		require.Equal(t, string(marshalString(t, s)), string(appendString(nil, s)), "%q", s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString([]byte("prefix"), s)
		want := append([]byte("prefix"), marshalString(t, s)...)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, encoding/json says %s", s, got, want)
		}
	})
}

func TestAppendObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      error
	}{
		{`{}`, `{}`, nil},
		{" {\n\t\"a\" : [1, 2 ],\r\n \"b\": \"x y \\\" z\" } ", `{"a":[1,2],"b":"x y \" z"}`, nil},
		{`{"s":"\\"}`, `{"s":"\\"}`, nil},
		{`{"a":`, "", errNotJSON},
		{`{} {}`, "", errNotJSON},
		{`[1]`, "", errNotObject},
		{`"s"`, "", errNotObject},
		{`null`, "", errNotObject},
	}
	for _, tt := range tests {
		got, err := appendObject([]byte("x"), []byte(tt.in))
		if tt.err != nil {
			require.ErrorIs(t, err, tt.err, tt.in)
			require.Equal(t, "x", string(got), "nothing appended on error")
			continue
		}
		require.NoError(t, err)
		require.Equal(t, "x"+tt.want, string(got))
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, []byte(tt.in)))
		require.Equal(t, compact.String(), string(got[1:]), "same as json.Compact")
	}
}
