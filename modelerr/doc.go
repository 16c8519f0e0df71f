// Package modelerr says what kind of failure a model call had, so that a
// host handles the errors of every model adapter the same way.
//
// A model call fails for reasons that have nothing to do with the tools:
// a rate limit, an overloaded or broken server, a refused connection, a
// body that does not decode, the caller's deadline. These are model-side
// failures. The loop never turns them into a tool outcome; it returns them
// to the host as Go errors together with a resumable snapshot, and the
// host decides whether to wait and resume, alert, or give up.
//
// # Kinds
//
// [Kind] is the closed set of reasons: [RateLimited], [Overloaded],
// [Server], [Unreachable], [Timeout], [Canceled], [Malformed], [Auth],
// [Request], [Truncated] (a stream cut before its end marker), and the
// zero value [Unknown]. [Kind.Retryable] says whether
// sending the same request again later may succeed. The names
// ("rate_limited", ...) are stable and are the text form.
//
// # Errors
//
// Every model adapter (adapters/openai, adapters/openairesponses,
// adapters/anthropic, adapters/gemini, adapters/bedrock) returns an
// [*Error] from Generate: the kind, the HTTP status, the server's
// Retry-After and the cause. The cause stays in the chain, so errors.As
// with an SDK's own error type and errors.Is with context.DeadlineExceeded
// keep working. A host asks [KindOf], which walks the chain and also
// recognises context and network errors that no adapter wrapped:
//
//	res, err := loop.Run(ctx, node, userInput)
//	if k := modelerr.KindOf(err); k.Retryable() {
//		// wait (errors.As gives *modelerr.Error and its RetryAfter), then
//		// loop.Resume(ctx, res.Snapshot, react.Continue())
//	}
//
// # For adapters
//
// An adapter pulls the HTTP response and the body's error type out of its
// SDK's error and calls [Classify], the one place where the rules live: context errors first, then the HTTP status
// ([KindOfStatus]), then transport failures, then a request never sent,
// then a 2xx body that did not decode. [RetryAfter] reads the wait from
// Retry-After-Ms and Retry-After (seconds or HTTP-date) without reading
// the wall clock.
//
// # Concurrency
//
// Everything here is a pure function or an immutable value, safe for
// concurrent use. Only the standard library is imported.
package modelerr
