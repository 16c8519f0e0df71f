// Package modelkit holds what the model adapters (adapters/openai,
// adapters/anthropic, adapters/gemini, adapters/openairesponses,
// adapters/bedrock) do alike, written once: the request parameters and
// endpoint they report ([Settings], [Endpoint]), the reading of a
// Server-Sent Events stream with its edges classified ([ReadSSE]), the
// errors of a stream that went wrong ([StreamError], [Malformed],
// [InBand]), the grouping of a history into an API's turns ([Turns],
// [ResultsFirst]), tool schemas and arguments as objects ([SchemaObject],
// [ObjectArgs]) and call ids for calls an API sent without one
// ([CallIDs]). Each adapter keeps only what its wire format really
// differs in.
//
// An adapter writes:
//
//	func (m *Model) Describe() react.ModelInfo {
//		return m.settings.Info(Provider, m.model, baseURL, true)
//	}
//
//	// in GenerateStream, after the status was checked:
//	modelkit.ReadSSE(ctx, Provider, resp, "message_stop", 0, p.parse, yield)
//
// It is an exported package of the core, not an internal one, so that an
// adapter module at one version keeps building against a newer core: its
// API follows the core's compatibility rules. It imports only the
// standard library and the core's react and modelerr packages.
//
// # Concurrency
//
// Everything here is a pure function or a value used by one goroutine
// at a time; [ReadSSE] reads on the caller's goroutine and starts none.
package modelkit
