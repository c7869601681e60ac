// Command panto is an LLM agent host whose system prompt is conversation
// state, recorded in an append-only session log and extensible by
// out-of-process plugins.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "panto: the command-line interface is not built yet; see README.md")
	os.Exit(2)
}
