package main

import (
	"context"
	"encoding/json"

	"github.com/panto-dev/panto/cmd/panto/internal/contextview"
	"github.com/panto-dev/panto/host"
)

// runPromptTokens is panto prompt --tokens: where the tokens of the next
// request go — each block of the system prompt, each extension's tools,
// the conversation by role — as estimates, beside the provider's count
// of the last request when the log recorded one, and what is left of
// the window. The session is opened as panto prompt opens it, in memory;
// nothing is recorded.
func runPromptTokens(ctx context.Context, e *env, o *options, asJSON bool) error {
	a, path, err := promptApp(e, o, "")
	if err != nil {
		return err
	}
	defer a.Close()
	var b contextview.Breakdown
	err = inMemory(ctx, e, a, path, func(sess *host.Session) (err error) {
		b, err = contextview.Of(sess, path, nil)
		return err
	})
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(e.jsonStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	contextview.Write(e.stdout, b)
	return nil
}
