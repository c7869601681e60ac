package lineloop

import (
	"context"
	"io"

	"github.com/panto-dev/panto/cmd/panto/internal/contextview"
)

// showContext is /context: where the tokens of the next request go, as
// panto prompt --tokens shows it, beside the provider's count of the
// last request as the log recorded it.
func (c *chat) showContext(_ context.Context, _ string, out io.Writer) error {
	b, err := contextview.Of(c.sess, c.sess.Info().Path, nil)
	contextview.Write(out, b)
	return err
}
