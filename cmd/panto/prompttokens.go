package main

import (
	"context"
	"encoding/json"

	"github.com/panto-dev/panto/cmd/panto/internal/contextview"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
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
	sess, err := a.OpenReadOnly(ctx, path)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	events := sess.Subscribe(context.WithoutCancel(ctx)) // read to its end: Close ends it
	go func() {
		defer close(done)
		lineloop.ShowNotices(e.stderr, events)
	}()
	b, berr := contextview.Of(sess, path, nil)
	err = sess.Close(ctx)
	<-done
	if berr != nil {
		return berr
	}
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
