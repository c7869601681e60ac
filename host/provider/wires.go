package provider

import (
	"context"
	"io"
	"net/http"

	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
	"github.com/panto-dev/panto/serializers/openai"
)

type anthropicProvider struct{ http httpCore }

func (p *anthropicProvider) Name() string { return Anthropic }

func (p *anthropicProvider) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	version := p.http.cfg.AnthropicVersion
	if version == "" {
		version = anthropic.DefaultVersion
	}
	body, err := anthropic.EncodeRequest(req, anthropic.Options{Version: version})
	if err != nil {
		return serializers.Reply{}, err
	}
	h := http.Header{}
	h.Set("content-type", "application/json")
	h.Set("anthropic-version", version)
	h.Set("x-api-key", p.http.cfg.APIKey)
	if req.Stream {
		h.Set("accept", "text/event-stream")
	}
	return p.http.post(ctx, wire{
		name:      Anthropic,
		url:       joinURL(p.http.cfg.BaseURL, "/v1/messages"),
		header:    h,
		requestID: "request-id",
		decodeErr: anthropic.DecodeError,
		decodeOK:  decodeWith(anthropic.DecodeResponse, anthropic.DecodeStream),
	}, body, req.Stream, fn)
}

type openaiProvider struct{ http httpCore }

func (p *openaiProvider) Name() string { return OpenAI }

func (p *openaiProvider) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	body, err := openai.EncodeRequest(req, openai.Options{})
	if err != nil {
		return serializers.Reply{}, err
	}
	h := http.Header{}
	h.Set("content-type", "application/json")
	if k := p.http.cfg.APIKey; k != "" {
		h.Set("authorization", "Bearer "+k)
	}
	if req.Stream {
		h.Set("accept", "text/event-stream")
	}
	return p.http.post(ctx, wire{
		name:      OpenAI,
		url:       joinURL(p.http.cfg.BaseURL, "/chat/completions"),
		header:    h,
		requestID: "x-request-id",
		decodeErr: openai.DecodeError,
		decodeOK:  decodeWith(openai.DecodeResponse, openai.DecodeStream),
	}, body, req.Stream, fn)
}

func decodeWith(plain func([]byte) (serializers.Reply, error), stream func(io.Reader, serializers.DeltaFunc) (serializers.Reply, error)) func(io.Reader, bool, serializers.DeltaFunc) (serializers.Reply, error) {
	return func(r io.Reader, isStream bool, fn serializers.DeltaFunc) (serializers.Reply, error) {
		if isStream {
			return stream(r, fn)
		}
		body, err := io.ReadAll(io.LimitReader(r, 64<<20))
		if err != nil {
			return serializers.Reply{}, err
		}
		return plain(body)
	}
}
