// Command mcpserver is internal/mcptest's MCP server as a binary, for
// panto's end-to-end tests.
package main

import "github.com/panto-dev/panto/internal/mcptest"

func main() { mcptest.Run() }
