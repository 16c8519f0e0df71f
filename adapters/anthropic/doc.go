// Package anthropic is a [react.Model] on the Anthropic Messages API,
// built on the official SDK (github.com/anthropics/anthropic-sdk-go/v2).
//
// It lives in its own Go module, so importing the reactguard core never
// pulls in an SDK:
//
//	go get github.com/reactguard/reactguard/adapters/anthropic
//
// The package name is anthropic, like the SDK's; import one of them under
// another name:
//
//	import (
//		sdk "github.com/anthropics/anthropic-sdk-go/v2"
//		"github.com/anthropics/anthropic-sdk-go/v2/option"
//		"github.com/reactguard/reactguard/adapters/anthropic"
//	)
//
//	client := sdk.NewClient(option.WithAPIKey(os.Getenv("ANTHROPIC_API_KEY")))
//	model := anthropic.New(client, "claude-haiku-4-5", &anthropic.Options{MaxTokens: 2048})
//	loop, err := react.New(react.Config{Model: model, Tools: catalog})
//
// # Conversion
//
// Each [Model.Generate] is one Messages API request, built through the
// shared conversion of package modelkit (modelkit.Turns):
//
//   - every system message of the history becomes a block of the
//     top-level "system", in order (the API has no system role);
//   - a user message becomes a text block of a user message;
//   - an assistant message this adapter produced is sent back as the API
//     sent it, from its [react.Message].Parts: text blocks apart and in
//     their place between tool_use blocks, thinking and redacted_thinking
//     blocks with their signatures (as extended thinking with tool use
//     requires); an assistant message without Parts (another model's)
//     becomes its text and one tool_use block per tool call. Arguments
//     that are not a JSON object (a cut-off turn, a history recorded with
//     another model) are sent as {}, since the API requires an object;
//   - a tool message becomes a tool_result block with the call's
//     tool_use_id, the text, and is_error from [react.Message.IsError]
//     (true for every outcome but SUCCESS).
//
// Blocks of the same role in a row form one message, so all the results
// of an assistant turn travel in ONE user message, tool_result blocks
// first, as the API requires; empty texts are left out (the API refuses
// empty text blocks). Tool specs become custom tools whose input_schema is
// the spec's schema, members kept verbatim; an empty schema means no
// parameters, and a schema whose type is not "object" is refused.
//
// The response's text blocks are the [react.Response] text: consecutive
// blocks joined as they are (citations split one sentence over several
// blocks), a text block after a tool_use or thinking block on a new line;
// its tool_use blocks are the tool calls, in order, parallel calls
// included, inputs exactly as the API sent them; Response.Parts keep the
// blocks' order and the thinking blocks ([API] names their format).
// Server-tool blocks are ignored. A turn that stopped for max_tokens runs
// none of its calls (react.CutOff).
//
// The Response also carries what telemetry needs: the message's id, the
// model that answered, its stop_reason as the API words it (end_turn,
// tool_use, max_tokens, stop_sequence, refusal, …) and the token
// [react.Usage]. Anthropic's input_tokens leaves out the tokens read from
// and written to the prompt cache; InputTokens adds them back
// (input_tokens + cache_read_input_tokens + cache_creation_input_tokens),
// so that it counts every input token as the other adapters' does, with
// the cache reads as CachedInputTokens and the writes as
// CacheCreationInputTokens; output_tokens_details.thinking_tokens is
// ReasoningTokens. A body without usage gives a nil Usage.
// [Model.Describe] names the provider (anthropic, or [Options].Provider),
// the model, the host and port of the client's base URL, the request
// parameters (max_tokens, temperature, top_p) and that the API takes the
// system prompt apart, for the loop's observers, such as the
// OpenTelemetry adapter (adapters/otel).
//
// # Errors
//
// Every failure of Generate is a [*modelerr.Error], the type every model
// adapter returns, so a host handles them all the same way:
// [modelerr.KindOf](err) says why. This adapter only pulls the status,
// the headers and the error type out of the SDK's *anthropic.Error (or
// out of the last HTTP response when the SDK could not decode an error
// body); [modelerr.Classify] applies the shared rules: 429 or a
// rate_limit_error body → [modelerr.RateLimited] (with
// [modelerr.Error.RetryAfter] from retry-after-ms or retry-after), 529,
// 503 or an overloaded_error body → [modelerr.Overloaded], other 5xx →
// [modelerr.Server], 401/403 → [modelerr.Auth], other 4xx or a request
// never sent (the adapter or the SDK refused to build it) →
// [modelerr.Request], no HTTP response (refused or reset connection, DNS)
// → [modelerr.Unreachable], a deadline → [modelerr.Timeout], cancellation
// → [modelerr.Canceled], a 2xx body that is not a message →
// [modelerr.Malformed]. The error's message starts with "anthropic: ".
// The cause stays in the chain: errors.As with the SDK's *anthropic.Error
// and errors.Is with context.DeadlineExceeded keep working. These are
// model-side failures: the loop returns them to the host with a resumable
// snapshot and never turns them into a tool outcome.
//
// # Retries
//
// The SDK retries failed requests twice by default. This adapter sets the
// SDK's retries to [Options.MaxRetries], 0 by default: a failure reaches
// the host at once, and the host, which holds the snapshot, decides
// whether to wait ([modelerr.Kind.Retryable], [modelerr.Error.RetryAfter])
// and resume. Set MaxRetries to let the SDK retry inside one Generate
// instead.
//
// # Concurrency
//
// A [Model] holds no conversation state and is safe for concurrent use.
// Generate reads its request and never modifies it.
//
// # Streaming
//
// A Model is a [react.StreamModel]: the loop makes every model call
// through [Model.GenerateStream] (in Run as in RunStream), a Messages
// request with "stream": true read as Server-Sent Events by the adapter
// itself rather than the SDK's stream helper and accumulator, so that a
// stream cut before message_stop is a [modelerr.Truncated] error (the loop
// executes nothing of the turn and keeps a resumable snapshot), an
// in-band error event (overloaded_error, sent with HTTP 200) is
// classified by its type ([modelerr.KindOfType]), a stream without
// "event:" lines or with bare-CR line endings is read whole, and a tool
// input cut by max_tokens stays the invalid JSON it is. [Options].NoStream
// turns streaming off: the loop then uses [Model.Generate].
package anthropic
