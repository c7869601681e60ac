package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkACPFirstReply measures panto acp as an editor starts it: from
// the process's start to the initialize response (init-ms), and to the
// first agent_message_chunk of a turn (first-chunk-ms), against a local
// fake Anthropic server, with no extension.
func BenchmarkACPFirstReply(b *testing.B) {
	h := newHarness(b)
	h.env["ANTHROPIC_API_KEY"], h.env["PANTO_LOG_LEVEL"] = "k", "off"
	srv, _ := firstByteServer(b)
	var initTotal, chunkTotal time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cmd := h.command("", "acp", "--provider", "anthropic", "--base-url", srv.URL, "--no-extensions")
		cmd.Stdin = nil // the harness's; the benchmark writes the client's
		stdin, err := cmd.StdinPipe()
		require.NoError(b, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(b, err)
		lines := bufio.NewReader(stdout)
		send := func(msg string) {
			_, err := io.WriteString(stdin, msg+"\n")
			require.NoError(b, err)
		}
		read := func(want string) string {
			for {
				line, err := lines.ReadString('\n')
				require.NoError(b, err)
				if strings.Contains(line, want) {
					return line
				}
			}
		}
		b.StartTimer()
		start := time.Now()
		require.NoError(b, cmd.Start())
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		read(`"id":1,"result"`)
		initTotal += time.Since(start)
		send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + quote(h.project) + `,"mcpServers":[]}}`)
		var created struct {
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		require.NoError(b, json.Unmarshal([]byte(read(`"id":2,"result"`)), &created))
		send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + created.Result.SessionID + `","prompt":[{"type":"text","text":"hi"}]}}`)
		read(`"agent_message_chunk"`)
		chunkTotal += time.Since(start)
		b.StopTimer()
		read(`"id":3,"result"`)
		stdin.Close()
		require.NoError(b, cmd.Wait())
	}
	b.ReportMetric(float64(initTotal.Milliseconds())/float64(b.N), "init-ms")
	b.ReportMetric(float64(chunkTotal.Milliseconds())/float64(b.N), "first-chunk-ms")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
