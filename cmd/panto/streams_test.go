package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// JSON at a terminal: written a piece at a time, cut anywhere, it comes
// out safe and decodes to the same values.
func TestJSONTermCutAnywhere(t *testing.T) {
	t.Parallel()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	for _, h := range termtext.Hostile {
		require.NoError(t, enc.Encode(map[string]string{"text": h.Text}))
	}
	for _, n := range []int{1, 2, 3, 7, 1 << 20} {
		var out bytes.Buffer
		j := &jsonTerm{w: &out}
		data := want.Bytes()
		for i := 0; i < len(data); i += n {
			_, err := j.Write(data[i:min(i+n, len(data))])
			require.NoError(t, err)
		}
		require.NoError(t, j.Flush())
		require.NoError(t, termtext.Check(out.Bytes()), "chunks of %d", n)
		dec, wdec := json.NewDecoder(&out), json.NewDecoder(bytes.NewReader(data))
		for wdec.More() {
			var a, b map[string]string
			require.NoError(t, wdec.Decode(&a))
			require.NoError(t, dec.Decode(&b))
			require.Equal(t, a, b)
		}
	}
}

// Without a terminal, JSON goes to stdout as it is.
func TestJSONStdoutPiped(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	e := &env{stdout: &out}
	require.Same(t, &out, e.jsonStdout())
}
