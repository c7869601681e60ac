package export

import (
	"io"
	"testing"

	"github.com/panto-dev/panto/internal/testgen"
	"github.com/panto-dev/panto/sessionlog"
)

// The export of a 20,000-message session.
func BenchmarkExport(b *testing.B) {
	l, _ := writeLog(b, testgen.Messages(20000))
	for _, f := range []struct {
		name string
		fn   func(io.Writer, *sessionlog.Log, Options) error
	}{{"HTML", HTML}, {"Markdown", Markdown}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.fn(io.Discard, l, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
