package sdk_test

import (
	"flag"
	"io"
	"log"
	"os"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestMain quiets go-plugin's own chatter (its test connections log at
// debug level to stderr, and its broker through the standard logger),
// which would otherwise interleave with benchmark results; -v keeps it.
func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Verbose() {
		hclog.DefaultOutput = io.Discard
		log.SetOutput(io.Discard)
	}
	os.Exit(m.Run())
}
