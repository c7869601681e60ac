package provider

import (
	"context"
	"errors"
	"fmt"
	"github.com/panto-dev/panto/conversation"
	"io"
	"net/http"

	"github.com/panto-dev/panto/serializers"
	"github.com/panto-dev/panto/serializers/anthropic"
	"github.com/panto-dev/panto/serializers/openai"
)

// Encode is the body a request puts on wire (Anthropic or OpenAI) with
// the encoder options opts (WireOptions gives a provider's): exactly what
// Send posts, so a request recorded as its settings and conversation can
// be rebuilt byte for byte (panto request --at). echo sends no body.
func Encode(wire string, opts map[string]string, req serializers.Request) ([]byte, error) {
	switch wire {
	case Anthropic:
		return anthropic.EncodeRequest(req, anthropic.Options{Version: opts["version"]})
	case OpenAI:
		return openai.EncodeRequest(req, openai.Options{MaxTokensField: opts["max_tokens_field"],
			PromptCacheKey: opts["prompt_cache_key"] == "true"})
	case Echo:
		return nil, errors.New("the echo provider sends no request body (it answers offline)")
	}
	return nil, fmt.Errorf("unknown wire %q: want anthropic or openai", wire)
}

// WireOptions are the encoder options of a provider's requests, as
// Encode takes them; nil for none.
func WireOptions(p Provider) map[string]string {
	if o, ok := p.(interface{ wireOptions() map[string]string }); ok {
		return o.wireOptions()
	}
	return nil
}

// WireOf is the wire and the encoder options of the provider cfg
// configures, as Encode takes them: what its requests would be encoded
// with, without a key or a connection.
func WireOf(cfg Config) (wire string, opts map[string]string) {
	switch cfg.Name {
	case Anthropic:
		return Anthropic, anthropicOptions(cfg)
	case OpenAI:
		return OpenAI, openaiOptions(cfg)
	}
	return cfg.Name, nil
}

// openaiOptions are the options of the OpenAI provider cfg configures:
// "prompt_cache_key" is "true" where the server takes the key (the
// config's prompt_cache_key, or by default OpenAI's own API:
// OpenAIKeysCache); nil when nothing differs from the encoder's defaults.
func openaiOptions(cfg Config) map[string]string {
	send := OpenAIKeysCache(cfg.BaseURL)
	if cfg.PromptCacheKey != nil {
		send = *cfg.PromptCacheKey
	}
	if !send {
		return nil
	}
	return map[string]string{"prompt_cache_key": "true"}
}

func anthropicOptions(cfg Config) map[string]string {
	v := cfg.AnthropicVersion
	if v == "" {
		v = anthropic.DefaultVersion
	}
	return map[string]string{"version": v}
}

type anthropicProvider struct{ http httpCore }

func (p *anthropicProvider) Name() string { return Anthropic }

func (p *anthropicProvider) wireOptions() map[string]string { return anthropicOptions(p.http.cfg) }

func (p *anthropicProvider) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	opts := p.wireOptions()
	version := opts["version"]
	body, err := Encode(Anthropic, opts, req)
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

func (p *openaiProvider) wireOptions() map[string]string { return openaiOptions(p.http.cfg) }

func (p *openaiProvider) Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error) {
	body, err := Encode(OpenAI, p.wireOptions(), req)
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

// SystemText is the system prompt as one text, as Anthropic's wire sends
// it (each block without its trailing newlines, empty ones left out,
// joined by a "---" line between blank lines): what a diff of the
// prompt compares, so that it shows what the model reads.
func SystemText(blocks []conversation.SystemText) string { return anthropic.SystemText(blocks) }
