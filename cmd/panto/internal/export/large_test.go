package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/testgen"
	"github.com/panto-dev/panto/sessionlog"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// writeLog records msgs in a new log file (in batches, as a session
// would) and reads it back.
func writeLog(t testing.TB, msgs []conversation.Message) (*sessionlog.Log, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := sessionlog.Create(path, sessionlog.Header{Cwd: "/home/u/project"})
	require.NoError(t, err)
	for len(msgs) > 0 {
		n := min(len(msgs), 2000)
		batch := make([]sessionlog.Entry, n)
		for i := range batch {
			batch[i] = sessionlog.MessageEntry(msgs[i])
		}
		_, err := w.Append(batch...)
		require.NoError(t, err)
		msgs = msgs[n:]
	}
	require.NoError(t, w.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	l, err := sessionlog.Read(path)
	require.NoError(t, err)
	return l, st.Size()
}

// A session of 20,000 messages exports in well under a few seconds, and
// its size is linear in its content: each distinct prompt is rendered
// once, not once per message.
func TestLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20,000-message session")
	}
	t.Parallel()
	msgs := testgen.Messages(20000)
	l, logSize := writeLog(t, msgs)

	limit := 5 * time.Second
	if raceEnabled {
		limit *= 10
	}
	var h, md bytes.Buffer
	start := time.Now()
	require.NoError(t, HTML(&h, l, Options{}))
	htmlTime := time.Since(start)
	start = time.Now()
	require.NoError(t, Markdown(&md, l, Options{}))
	mdTime := time.Since(start)
	t.Logf("log %d bytes; HTML %d bytes in %v; Markdown %d bytes in %v", logSize, h.Len(), htmlTime, md.Len(), mdTime)
	require.Less(t, htmlTime, limit)
	require.Less(t, mdTime, limit)
	require.Less(t, h.Len(), int(logSize)*2, "the HTML is not linear in the log")
	require.Less(t, md.Len(), int(logSize)*2, "the Markdown is not linear in the log")

	// The distinct prompt states, as EffectiveSystem gives them for each
	// prefix (they change only at system messages).
	distinct := map[string]bool{}
	var states [][]conversation.SystemText
	for i, m := range msgs {
		if m.Role != conversation.RoleSystem {
			continue
		}
		s := conversation.EffectiveSystem(msgs[:i+1])
		key, _ := json.Marshal(blocksOf(s))
		if !distinct[string(key)] {
			distinct[string(key)] = true
			states = append(states, s)
		}
	}
	require.Greater(t, len(distinct), 10)

	d := parseHTML(t, h.Bytes())
	require.Equal(t, len(distinct), promptSections(d))
	require.Len(t, all(d.root, "article", ""), 20000-countSystem(msgs))
	checkLinks(t, d)

	// The seed's text is in the page once per state that holds it, and
	// once as its system event: never once per message.
	seed := msgs[0].Content[0].Text
	holding := 0
	for _, s := range states {
		for _, b := range s {
			if b.Text == seed {
				holding++
			}
		}
	}
	seen := 0
	walk(d.root, func(n *html.Node) {
		if n.Type == html.TextNode && n.Data == seed {
			seen++
		}
	})
	require.Equal(t, holding+1, seen)
}

func countSystem(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == conversation.RoleSystem {
			n++
		}
	}
	return n
}
