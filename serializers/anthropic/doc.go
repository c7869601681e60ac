// Package anthropic is the Anthropic Messages API wire format: it encodes
// a serializers.Request into the JSON body of POST /v1/messages, and
// decodes what comes back, a JSON Message (DecodeResponse), an SSE event
// stream (DecodeStream) or an error body (DecodeError), into
// serializers.Reply and serializers.APIError.
//
// The system prompt is conversation state: EncodeRequest derives it with
// conversation.EffectiveSystem (never by a rule of its own), strips each
// surviving block's trailing newlines and joins the blocks with
// SystemSeparator into the top-level "system" string, as the design doc
// (§1.3, §1.4) says. System messages never appear in "messages". A
// request that asks for prompt caching (Request.Cache.Mark) sends the same
// text as one text block marked with cache_control, and marks the newest
// message too (cache.go).
//
// Two API versions are known, DefaultVersion (2023-06-01) and
// Version20261021; Options.Version says which one a body is for, and the
// caller sends the same value as the anthropic-version header.
//
// What is not here: HTTP. URLs, headers, keys, retries and rate limits
// belong to the provider code in the host; this package only turns values
// into bytes and bytes into values, and never panics on any input.
package anthropic
