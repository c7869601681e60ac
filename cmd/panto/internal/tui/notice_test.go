package tui

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/host"
)

// A Notify flood is kept bounded: notices in a row share one item, the
// oldest go (a line says how many), a repeat counts on the last one, a
// huge notice keeps its start.
func TestNoticeFloodIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFake(), altScreen)
	before := h.m.list.Len()
	for i := range 10_000 {
		h.exec(h.m.event(host.Notice{Level: host.NoticeInfo, By: "spam", Text: fmt.Sprintf("notice %d", i)}))
	}
	require.Equal(t, before+1, h.m.list.Len(), "one item for the run")
	require.Equal(t, maxNotices, h.m.noticeCount)
	s := h.screen()
	require.Contains(t, s, "spam: notice 9999")
	for range 100 {
		h.exec(h.m.event(host.Notice{Level: host.NoticeWarning, By: "spam", Text: "again"}))
	}
	require.Contains(t, h.screen(), "⚠ spam: again ×100")
	h.exec(h.m.event(host.Notice{By: "big", Text: strings.Repeat("x", 1<<20)}))
	require.Contains(t, h.screen(), "more bytes)")
	h.m.list.Top()
	require.Contains(t, h.screen(), "earlier notice(s) not kept")

	// Notices between other items: each run its own item, the bound over
	// them all.
	for i := range 2000 {
		h.m.add(&transcript.User{Text: "x"})
		h.exec(h.m.event(host.Notice{By: "spam", Text: fmt.Sprint(i)}))
	}
	require.Equal(t, maxNotices, h.m.noticeCount)
}

// The memory a flood takes stays flat: a hundred thousand notices keep
// what twenty thousand do.
func TestNoticeFloodMemoryStaysFlat(t *testing.T) {
	h := newHarness(t, newFake())
	flood := func(from, to int) uint64 {
		for i := from; i < to; i++ {
			h.exec(h.m.event(host.Notice{Level: host.NoticeInfo, By: "spam", Text: fmt.Sprintf("notice number %d of the flood", i)}))
			if i%1000 == 0 {
				h.screen()
			}
		}
		h.screen()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	at20k := flood(0, 20_000)
	at100k := flood(20_000, 100_000)
	grew := int64(at100k) - int64(at20k)
	t.Logf("heap after 20k notices %d KiB, after 100k %d KiB", at20k>>10, at100k>>10)
	require.Less(t, grew, int64(2<<20), "80,000 more notices took %d KiB", grew>>10)
}
