package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/panto-dev/panto/serializers"
)

// maxRetryAfter is the longest server-requested wait that is honoured; a
// longer one falls back to the backoff (as the official SDKs do).
const maxRetryAfter = 60 * time.Second

// RetryInfo describes a model request about to be retried.
type RetryInfo struct {
	// Attempt counts the retries from 1, of Max.
	Attempt, Max int
	// Wait is how long the provider waits before it.
	Wait time.Duration
	// Reason is the failure that is retried.
	Reason string
}

type retryKey struct{}

// WithRetryHook returns a copy of ctx with which a request calls f before
// each retry, as net/http/httptrace carries its hooks: the caller that
// shows progress learns of retries without the provider knowing it.
func WithRetryHook(ctx context.Context, f func(RetryInfo)) context.Context {
	return context.WithValue(ctx, retryKey{}, f)
}

// httpCore is what the HTTP providers share: one POST with retries.
type httpCore struct {
	cfg Config
}

func newHTTP(cfg Config) httpCore { return httpCore{cfg: cfg} }

// wire is one provider's part of a request: where, how, and how to read
// the answer.
type wire struct {
	name      string
	url       string
	header    http.Header
	requestID string // response header carrying the request id
	decodeErr func(status int, body []byte, requestID string) *serializers.APIError
	decodeOK  func(body io.Reader, stream bool, fn serializers.DeltaFunc) (serializers.Reply, error)
}

func (h httpCore) post(ctx context.Context, w wire, body []byte, stream bool, fn serializers.DeltaFunc) (serializers.Reply, error) {
	if h.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.cfg.Timeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		reply, retry, wait, err := h.once(ctx, w, body, stream, fn)
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil {
			return serializers.Reply{}, fmt.Errorf("%s: request cancelled: %w", w.name, context.Cause(ctx))
		}
		if !retry || attempt >= h.cfg.Retries {
			if attempt > 0 {
				return serializers.Reply{}, fmt.Errorf("%w (after %d retries)", err, attempt)
			}
			return serializers.Reply{}, err
		}
		if wait <= 0 {
			wait = backoff(attempt)
		}
		h.cfg.Logger.Warn("retrying model request", "provider", w.name, "attempt", attempt+1,
			"of", h.cfg.Retries, "wait", wait.String(), "error", err.Error())
		if f, ok := ctx.Value(retryKey{}).(func(RetryInfo)); ok {
			f(RetryInfo{Attempt: attempt + 1, Max: h.cfg.Retries, Wait: wait, Reason: err.Error()})
		}
		if err := h.cfg.Sleep(ctx, wait); err != nil {
			return serializers.Reply{}, fmt.Errorf("%s: request cancelled: %w", w.name, err)
		}
	}
}

// once makes one attempt. retry says whether a failure may be retried, and
// wait how long the server asked us to wait (0: use the backoff).
func (h httpCore) once(ctx context.Context, w wire, body []byte, stream bool, fn serializers.DeltaFunc) (_ serializers.Reply, retry bool, wait time.Duration, _ error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return serializers.Reply{}, false, 0, fmt.Errorf("%s: build request for %s: %w", w.name, w.url, err)
	}
	req.Header = w.header.Clone()
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		// Connection errors: *url.Error names the method and URL, never
		// the headers, so no key leaks.
		return serializers.Reply{}, true, 0, fmt.Errorf("%s: %w", w.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if k := h.cfg.APIKey; len(k) >= 8 {
			// A server that echoes the key (invalid x-api-key: sk-…) does
			// not get it printed: stderr ends up in CI logs.
			data = bytes.ReplaceAll(data, []byte(k), []byte("[your API key]"))
		}
		apiErr := w.decodeErr(resp.StatusCode, data, resp.Header.Get(w.requestID))
		return serializers.Reply{}, shouldRetry(resp), retryAfter(resp.Header), fmt.Errorf("%s: %w", w.name, apiErr)
	}
	limit := h.cfg.MaxReply
	if limit <= 0 {
		limit = MaxReplyBytes
	}
	reply, err := w.decodeOK(&capped{r: resp.Body, limit: limit, left: limit, name: w.name}, stream, fn)
	if err != nil {
		return serializers.Reply{}, false, 0, err // the decoders name the provider
	}
	return reply, false, 0, nil
}

// shouldRetry follows the official SDKs: x-should-retry decides when
// present; else 408, 409, 429 and every 5xx are retried.
func shouldRetry(resp *http.Response) bool {
	switch resp.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := resp.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// retryAfter reads retry-after-ms (milliseconds), then retry-after
// (seconds or an HTTP date). Out-of-range values give 0.
func retryAfter(h http.Header) time.Duration {
	var d time.Duration
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	} else if v := h.Get("retry-after"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = time.Until(t)
		}
	}
	if d <= 0 || d > maxRetryAfter {
		return 0
	}
	return d
}

// backoff is 0.5 s doubled per attempt, at most 8 s, less up to 25% jitter.
func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(attempt, 4)
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

// MaxReplyBytes bounds what panto reads of one reply: a provider whose
// stream never ends (or a reply of gigabytes) ends the request with an
// error instead of growing panto's memory until the machine runs out.
// Far above any real reply: a whole tool input is at most a message, 64
// MiB, and the stream's framing adds less than as much again.
const MaxReplyBytes = 256 << 20

// ErrReplyTooLarge is the error of a reply over MaxReplyBytes.
var ErrReplyTooLarge = errors.New("the reply is larger than panto reads")

// capped is a response body that fails once more than left bytes were
// read.
type capped struct {
	r           io.Reader
	limit, left int64
	name        string
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("%s: %w (%d bytes): it was cut there", c.name, ErrReplyTooLarge, c.limit)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// sameOrigin is the default client's redirect rule: a model request
// carries the API key in its headers, and net/http forwards a custom
// header such as X-Api-Key on a redirect to any host; panto follows a
// redirect only to where it was sending already (the same scheme, host
// and port), at most 3 times.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refused a redirect from %s to %s://%s: panto sends the API key only to the base URL configured", first.Host, req.URL.Scheme, req.URL.Host)
	}
	if len(via) > 3 {
		return errors.New("stopped after 3 redirects")
	}
	return nil
}
