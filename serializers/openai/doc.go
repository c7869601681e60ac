// Package openai is the OpenAI Chat Completions wire format
// (POST /v1/chat/completions), as spoken by OpenAI and by the
// OpenAI-compatible servers: Ollama, vLLM, llama.cpp's llama-server,
// OpenRouter, DeepSeek and others.
//
// What is here: bytes in, bytes out.
//
//   - EncodeRequest turns a serializers.Request into a request body.
//   - DecodeResponse decodes a chat.completion body into a serializers.Reply.
//   - DecodeStream decodes the SSE stream of chat.completion.chunk objects
//     into a Reply, handing live Deltas to a callback on the way.
//   - DecodeError turns an HTTP error status and body into a
//     *serializers.APIError.
//
// What is not here: URLs, headers, API keys, retries, timeouts or any other
// HTTP policy (the host's providers own those), and the Responses API
// (/v1/responses), which is a different wire format.
//
// # System prompt
//
// The system prompt is derived with conversation.EffectiveSystem and nothing
// else. Each surviving block becomes its own {"role":"system"} message, and
// all of them lead the message list, in order, before every other message;
// the other messages keep their order. Blocks are never joined or trimmed,
// so the prompt stays addressable block by block, and encoding a prefix
// msgs[:n] of a conversation gives the prompt as it was after n messages.
//
// # Prompt caching
//
// OpenAI caches every long enough prefix by itself; the format has no
// marks, so Request.Cache.Mark changes nothing here. With
// Options.PromptCacheKey set, Request.Cache.Key is sent as
// prompt_cache_key (at most MaxPromptCacheKey bytes), which routes a
// session's requests to the same cache; an empty key sends nothing.
//
// # What the format cannot carry
//
//   - Thinking and redacted-thinking blocks of assistant messages are not
//     sent: Chat Completions has no request field for reasoning, and some
//     servers (DeepSeek) reject reasoning_content in requests.
//   - A tool message carries text only, so a tool result's image blocks
//     go in a user message right after the tool messages (nothing else may
//     come between an assistant's tool calls and their results): a text
//     part "The image(s) returned by tool call ID:" and the images as
//     image_url data URIs, one such group per result. In the tool message
//     each image is the text "[image: in the user message after the tool
//     results]".
//   - A failed tool call's result (IsError) is sent as text prefixed with
//     "Error: ", since tool messages have no error flag.
//   - Request.ThinkingBudget has no Chat Completions equivalent; it is
//     mapped onto reasoning_effort: below 4096 tokens "low", below 16384
//     "medium", else "high". 0 leaves the field out.
//   - tool_choice and parallel_tool_calls are sent only with tools: OpenAI
//     rejects them in a request without tools.
//   - A streamed request asks for stream_options.include_usage, so that the
//     reply's usage is known.
//
// # Replies
//
// Only choice 0 is kept. Visible reasoning, which OpenAI does not send but
// DeepSeek, vLLM, Ollama and OpenRouter do (as reasoning_content or
// reasoning), becomes a thinking block without a signature, and
// DeltaThinking deltas. A refusal becomes text and StopRefusal. Tool-call
// arguments must be a JSON object ("" means {}); a missing tool-call id is
// replaced by "panto_call_<index>" so the reply can be answered. The
// assistant message holds its thinking block first, then its text, then
// its tool calls in index order. A stream is a reply only once its
// "data: [DONE]" has arrived; before that it is serializers.ErrTruncated.
package openai
