// Package openairesponses is a [react.Model] and [react.StreamModel] on
// the OpenAI Responses API, built on the official SDK
// (github.com/openai/openai-go/v3, its responses client).
//
// It lives in its own Go module, so importing the reactguard core never
// pulls in an SDK:
//
//	go get github.com/reactguard/reactguard/adapters/openairesponses
//
//	client := openai.NewClient() // OPENAI_API_KEY
//	model := openairesponses.New(client, "gpt-5", nil)
//	loop, err := react.New(react.Config{Model: model, Tools: catalog})
//
// # Conversion
//
// Each turn is one POST /responses with the whole history as input items
// (modelkit's shared conversion): the system messages are the request's
// instructions; a user message an input message; an assistant message
// its items as the API produced them — assistant messages, function_call
// items (with their own fc_ ids) and reasoning items — or, for a turn
// recorded with another model, its text then one function_call per call;
// a tool message a function_call_output for its call id, placed right
// after its call. Tool specs become function tools, not strict, whose
// parameters are the spec's schema verbatim.
//
// # Reasoning items, without previous_response_id
//
// By default the adapter asks the API to store nothing (store: false)
// and to include the reasoning items' encrypted content; it keeps each
// reasoning item in [react.Response].Parts ([API] names their format),
// the loop keeps them in the transcript and its sealed snapshots, and
// the adapter sends them back in place, before the calls they led to, as
// the API requires for reasoning models with function calls. No
// previous_response_id is needed: a snapshot resumes in another process,
// on another server, with the reasoning intact. [Options].Store turns
// storage on. Without storage, a reasoning item that came without its
// encrypted content (answered while Store was on, or by a server that
// sends none) is left out, and the function calls of its turn go without
// their item ids: the API would look it up by id and refuse the request.
//
// The response becomes the [react.Response]: its message items' texts
// (or a refusal), its function_call items in order, parallel calls
// included, arguments verbatim; the response's id and model; usage
// (input_tokens, output_tokens, cached and reasoning details); and the
// finish reason: "completed", or an incomplete response's reason
// (max_output_tokens, content_filter). A response incomplete for
// max_output_tokens runs none of its calls (react.CutOff).
//
// # Errors
//
// Every failure is a [*modelerr.Error] by the shared rules
// ([modelerr.Classify]): 429 → RateLimited with Retry-After, 503 →
// Overloaded, other 5xx → Server, 401/403 → Auth, other 4xx → Request,
// no response → Unreachable or Timeout, cancellation → Canceled, a body
// that does not decode or a response that is not finished →
// Malformed, a failed response (status failed) → the kind its error code
// names (server_error: Server). The SDK's *openai.Error stays in the
// chain. The messages start with "openairesponses: ".
//
// # Streaming
//
// [Model.GenerateStream] posts the same request with "stream": true and
// reads the events itself (modelkit.ReadSSE): a stream cut before
// response.completed or response.incomplete is [modelerr.Truncated] and
// nothing of the turn runs; response.failed and error events are
// classified by their code. [Options].NoStream turns streaming off.
//
// # Concurrency
//
// A [Model] holds no conversation state and is safe for concurrent use.
package openairesponses
