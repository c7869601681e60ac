package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/host"
)

// The UI's cost per streamed token, everything included: the event's
// Update, the View bubbletea asks for after every Update, and a frame
// tick (which renders the open block) every 4 tokens. At 10k and 100k
// tokens it must be the same per token: nothing re-renders the reply.
func BenchmarkUIStreamPerToken(b *testing.B) {
	words := strings.Fields("the function returns an error when the file is missing so we check it **first** and then read the `session` log line by line")
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			total := 0
			for b.Loop() {
				b.StopTimer()
				m := New(context.Background(), Options{Now: func() time.Time { return fixedNow }})
				m.update(tea.WindowSizeMsg{Width: 100, Height: 30})
				m.sess = newFake()
				m.busy = turning
				b.StartTimer()
				for i := range n {
					tok := words[i%len(words)] + " "
					if i%50 == 49 {
						tok += "\n\n"
					}
					m.update(eventsMsg{evs: []host.Event{host.TextDelta{Text: tok}}, closed: true})
					if i%4 == 3 {
						m.update(flushMsg{})
					}
					_ = m.View()
				}
				total += n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/token")
		})
	}
}
