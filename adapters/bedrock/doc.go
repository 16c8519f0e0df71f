// Package bedrock is a [react.Model] and [react.StreamModel] on the
// Amazon Bedrock Converse API, through the official SDK
// (github.com/aws/aws-sdk-go-v2/service/bedrockruntime): Converse, and
// ConverseStream for streaming.
//
// It lives in its own Go module, so importing the reactguard core never
// pulls in an SDK:
//
//	go get github.com/reactguard/reactguard/adapters/bedrock
//
//	cfg, err := config.LoadDefaultConfig(ctx) // github.com/aws/aws-sdk-go-v2/config
//	model := bedrock.New(bedrockruntime.NewFromConfig(cfg), "us.anthropic.claude-haiku-4-5-20251001-v1:0", nil)
//	loop, err := react.New(react.Config{Model: model, Tools: catalog})
//
// # Conversion
//
// Each turn is one Converse request, built with modelkit's shared
// conversion: system messages are the system blocks; user messages text
// blocks of a user message; tool messages toolResult blocks (toolUseId,
// the text, status error for a result that is not a SUCCESS), all the
// results of a turn in one user message, first; assistant messages an
// assistant message with its blocks as the model produced them —
// reasoningContent blocks with their signatures (Claude's extended
// thinking with tools requires them back), texts apart and in their
// place, toolUse blocks with their input as an object — or, for a turn
// recorded with another model, its text then one toolUse block per call.
// Tool specs become tool specifications whose JSON input schema is the
// spec's.
//
// The answer becomes the [react.Response]: its text blocks concatenated,
// its toolUse blocks in order (parallel calls included, inputs as JSON),
// the Parts that keep the blocks' order and the reasoning blocks ([API]
// names their format), the stop reason as the API words it (end_turn,
// tool_use, max_tokens, …), the AWS request id as the response id, and
// the usage: inputTokens plus the cache reads and writes as InputTokens
// (Bedrock leaves them out of inputTokens), the cache reads as
// CachedInputTokens, the writes as CacheCreationInputTokens. A message
// that stopped for max_tokens (or model_context_window_exceeded) runs
// none of its calls (react.CutOff).
//
// # Errors
//
// Every failure is a [*modelerr.Error], by the shared rules
// ([modelerr.Classify]) applied to the SDK's response error (status,
// Retry-After) and the exception it names, which wins over the status:
// ThrottlingException and ServiceQuotaExceededException →
// [modelerr.RateLimited], ServiceUnavailableException and
// ModelNotReadyException → [modelerr.Overloaded], other 5xx →
// [modelerr.Server], AccessDeniedException (403) → [modelerr.Auth],
// ValidationException and other 4xx → [modelerr.Request], no response →
// [modelerr.Unreachable] or [modelerr.Timeout], cancellation →
// [modelerr.Canceled], a 2xx body that does not decode →
// [modelerr.Malformed]. The SDK's exception types stay in the chain
// (errors.As with *types.ThrottlingException). The SDK retries nothing
// unless [Options].MaxRetries says so: the host, which holds the
// snapshot, decides. The messages start with "bedrock: ".
//
// # Streaming
//
// ConverseStream answers in the AWS event-stream binary encoding, read
// by the SDK's own decoder. The edges are the same as for the SSE
// adapters: a stream that ends without messageStop is
// [modelerr.Truncated] and nothing of the turn runs (a call cut
// mid-input never executes); an exception frame (throttlingException,
// serviceUnavailableException, modelStreamErrorException,
// internalServerException, validationException) is classified by its
// type; a frame the decoder cannot read is [modelerr.Malformed].
// [Options].NoStream turns streaming off.
//
// # Concurrency
//
// A [Model] holds no conversation state and is safe for concurrent use.
package bedrock
