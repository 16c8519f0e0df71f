// Package openai is a [react.Model] on the OpenAI Chat Completions API,
// built on the official SDK (github.com/openai/openai-go/v3). It works
// with any server that speaks that API: OpenAI, Azure OpenAI, and local
// servers such as Ollama, vLLM, LM Studio or llama.cpp.
//
// It lives in its own Go module, so importing the reactguard core never
// pulls in an SDK:
//
//	go get github.com/reactguard/reactguard/adapters/openai
//
// The package name is openai, like the SDK's; import one of them under
// another name:
//
//	import (
//		oai "github.com/openai/openai-go/v3"
//		"github.com/openai/openai-go/v3/option"
//		"github.com/reactguard/reactguard/adapters/openai"
//	)
//
//	client := oai.NewClient(option.WithBaseURL("http://localhost:11434/v1/"), option.WithAPIKey("ollama"))
//	loop, err := react.New(react.Config{Model: openai.New(client, "qwen3:8b", nil), Tools: catalog})
//
// # Conversion
//
// Each [Model.Generate] is one chat completion request, built with the
// shared helpers of package modelkit. The loop's history maps one to one: system → system message, user → user message,
// assistant → assistant message with its text and its tool calls
// ("tool_calls", type function, arguments sent back exactly as the model
// produced them), tool → one "tool" message per call id. The API wants the
// tool messages of a turn directly after it, so a system or user message
// found between an assistant turn with tool calls and the next assistant
// turn is sent after that turn's tool messages (the caller's slice is not
// changed). [react.Message.IsError] has no field in this API; the tool
// message's text already says what happened and what to do next.
//
// Tool specs become function tools whose "parameters" is the spec's input
// schema, sent verbatim; an empty schema means a function without
// parameters.
//
// The first choice of the response becomes the [react.Response]: its text
// (or its refusal when there is no text) and its tool calls in order,
// parallel calls included. Arguments are returned exactly as the server
// sent them, even when they are not valid JSON (a response cut off by
// max_tokens): the loop classifies them (ARG_JSON_INVALID), so the model
// gets a next step instead of the host getting an error. A call without an
// id, or with an id already used in the same response (some compatible
// servers do this), gets a deterministic id derived from the completion id
// so that its result can be paired with it.
//
// The Response also carries what telemetry needs: the completion's id, the
// model that answered ("model", often a dated version of the one
// requested), the first choice's finish_reason as the API words it (stop,
// tool_calls, length, content_filter), and the token [react.Usage]:
// prompt_tokens as InputTokens (cached tokens included, as the API counts
// them), completion_tokens as OutputTokens (reasoning included),
// prompt_tokens_details.cached_tokens and
// completion_tokens_details.reasoning_tokens as the parts. A server that
// sends no "usage" (some compatible ones) gives a nil Usage. A turn whose
// finish_reason is length runs none of its calls (react.CutOff).
// [Model.Describe] names the provider (openai, or [Options].Provider), the
// model, the host and port of the client's base URL and the request
// parameters set in [Options], for the loop's observers, such as the
// OpenTelemetry adapter (adapters/otel).
//
// # Errors
//
// Every failure of Generate is a [*modelerr.Error], the type every model
// adapter returns, so a host handles them all the same way:
// [modelerr.KindOf](err) says why. This adapter only pulls the status,
// the headers and the error type out of the SDK's *openai.Error (or out
// of the last HTTP response when the SDK could not decode an error body);
// [modelerr.Classify] applies the shared rules: 429 →
// [modelerr.RateLimited] (with [modelerr.Error.RetryAfter] from
// retry-after-ms or retry-after), 503 → [modelerr.Overloaded], other 5xx →
// [modelerr.Server], 401/403 → [modelerr.Auth], other 4xx or a request
// never sent (the adapter or the SDK refused to build it) →
// [modelerr.Request], no HTTP response (refused or reset connection, DNS)
// → [modelerr.Unreachable], a deadline → [modelerr.Timeout], cancellation
// → [modelerr.Canceled], a 2xx body that is not a chat completion →
// [modelerr.Malformed]. An error type overloaded_error or rate_limit_error
// in the body (a proxy relaying another provider) wins over the status; an
// error status with a non-JSON body (a proxy's HTML page) is still
// classified by its status. The error's message
// starts with "openai: ". The cause stays in the chain: errors.As with the
// SDK's *openai.Error and errors.Is with context.DeadlineExceeded keep
// working. These are model-side failures: the loop returns them to the
// host with a resumable snapshot and never turns them into a tool outcome.
//
// # Retries
//
// The SDK retries failed requests twice by default and may wait up to two
// minutes on a server's Retry-After. This adapter sets the SDK's retries
// to [Options.MaxRetries], 0 by default: a failure reaches the host at
// once, and the host, which holds the snapshot, decides whether to wait
// ([modelerr.Kind.Retryable], [modelerr.Error.RetryAfter]) and resume. Set
// MaxRetries to let the SDK retry inside one Generate instead.
//
// # Concurrency
//
// A [Model] holds no conversation state and is safe for concurrent use.
// Generate reads its request and never modifies it.
//
// # Streaming
//
// A Model is a [react.StreamModel]: the loop makes every model call
// through [Model.GenerateStream] (in Run as in RunStream), a chat
// completion request with "stream": true and
// stream_options.include_usage, read as Server-Sent Events by the
// adapter itself rather than the SDK's stream helper, so that a stream
// cut before "data: [DONE]" is a [modelerr.Truncated] error (the loop
// executes nothing of the turn and keeps a resumable snapshot), an
// in-band error event is classified by its type ([modelerr.KindOfType]),
// and bare-CR line endings are read. [Options].NoStream turns streaming
// off for a server that cannot stream tool calls: the loop then uses
// [Model.Generate], one JSON response a turn.
package openai
