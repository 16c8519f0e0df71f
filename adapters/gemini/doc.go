// Package gemini is a [react.Model] and [react.StreamModel] on Google
// Gemini, through the official SDK (google.golang.org/genai): the Gemini
// API and Vertex AI backends alike, whichever the client was made for.
//
// It lives in its own Go module, so importing the reactguard core never
// pulls in an SDK:
//
//	go get github.com/reactguard/reactguard/adapters/gemini
//
//	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: os.Getenv("GEMINI_API_KEY"), Backend: genai.BackendGeminiAPI})
//	// or &genai.ClientConfig{Backend: genai.BackendVertexAI, Project: "my-project", Location: "us-central1"}
//	model := gemini.New(client, "gemini-2.5-flash", nil)
//	loop, err := react.New(react.Config{Model: model, Tools: catalog})
//
// # Conversion
//
// Each [Model.Generate] is one generateContent request, built with the
// shared conversion of package modelkit: the system messages are the
// systemInstruction; user messages text parts of "user" contents; tool
// messages functionResponse parts of one "user" content per turn (the
// call's id when the API gave one, the tool's name, the text under
// "output", or under "error" for a result that is not a SUCCESS);
// assistant messages a "model" content with its parts as the API sent
// them. Tool specs become function declarations whose
// parametersJsonSchema is the spec's schema, verbatim.
//
// The first candidate becomes the [react.Response]: its text parts
// (thought parts apart: a thought summary is not the turn's text), its
// functionCall parts as the tool calls in order, parallel calls included,
// arguments as JSON; the response id, the model version, the finish
// reason as the API words it (STOP, MAX_TOKENS, SAFETY, …; a blocked
// prompt's block reason) and the usage: promptTokenCount (with
// toolUsePromptTokenCount) as InputTokens, candidatesTokenCount with
// thoughtsTokenCount as OutputTokens, cachedContentTokenCount and
// thoughtsTokenCount as the parts. A call the API sent without an id gets
// one from the response id (call_<responseId>_<i>), kept on this side:
// it is not sent back.
//
// # Thought signatures
//
// Gemini's thinking models attach an opaque thoughtSignature to parts of
// their answer and require it back, on the same part, when the turn is
// replayed with its function calls. [react.Response].Parts keep every
// part's signature and the thought parts ([API] names their format); the
// loop keeps them in the transcript and its snapshots, and this adapter
// sends them back exactly. A turn recorded with another provider, or
// written by the host, has none of its own: its first function call is
// sent with the skip signature, the value Google documents for calls the
// model did not produce, since Gemini 3 refuses a replayed step whose
// first call has no signature (models named gemini-1… and gemini-2…,
// which require none, get the turn as it is).
//
// # Cut-off turns
//
// A candidate whose finish reason is MAX_TOKENS ran out of output tokens:
// the loop runs none of its calls (react.CutOff), each is answered
// REJECTED TOOL_CALL_CUT_OFF with a next step.
//
// # Errors
//
// Every failure is a [*modelerr.Error]. The SDK's genai.APIError gives
// the status code and the status name: RESOURCE_EXHAUSTED (429) →
// [modelerr.RateLimited], with [modelerr.Error.RetryAfter] from
// google.rpc.RetryInfo's retryDelay; UNAVAILABLE (503) →
// [modelerr.Overloaded]; other 5xx → [modelerr.Server]; 401/403 →
// [modelerr.Auth]; other 4xx (an invalid key is INVALID_ARGUMENT 400) →
// [modelerr.Request]; no response → [modelerr.Unreachable] or
// [modelerr.Timeout]; cancellation → [modelerr.Canceled]; a 2xx body
// that does not decode, or that the SDK's converter cannot take (it
// panics on some: the adapter recovers) → [modelerr.Malformed]. The
// SDK's error stays in the chain (errors.As with genai.APIError). The
// error's message starts with "gemini: ".
//
// # Streaming
//
// [Model.GenerateStream] streams through the SDK's stream with its
// automatic continuation off: the API has no end marker, so a stream
// that ends before a chunk carried the finish reason is
// [modelerr.Truncated] and nothing of the turn runs; an error object
// sent in the stream is classified by its status. [Options].NoStream
// turns streaming off.
//
// # Concurrency
//
// A [Model] holds no conversation state and is safe for concurrent use.
// Generate and GenerateStream read their request and never modify it.
package gemini
