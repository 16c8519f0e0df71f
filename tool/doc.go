// Package tool defines what a tool is: a name, a description, a JSON Schema
// for its input, an effect (read or write), the function that runs it, and
// the optional contracts the guards enforce around it. It also defines the
// typed errors through which a tool tells the runtime what kind of failure
// happened.
//
// # Defining tools
//
// A [Tool] is a plain struct; [New] turns a typed Go function into one, with
// its input schema inferred from the argument type by
// github.com/google/jsonschema-go (the validator the official MCP Go SDK
// uses). A [Catalog] holds the tools of an agent and validates them where
// they are registered, so that a mistake fails at start-up rather than on
// every call: a tool without a name, Func or schema, an input schema that
// does not resolve or is not an object schema, a Params key that is not a
// parameter of the schema, a [Result] source naming a tool the catalog
// does not hold, and a duplicate name are refused with an error that names
// the tool and what to change. [New] panics for an argument type that is
// not a struct or map.
//
// # What a result is
//
// A [Contract] says what a result of the tool is beyond "the function
// returned": its shape, a business failure inside it, whether an empty
// result is an answer ([EmptyAnswers]), the answer itself or a failure,
// where, when and in which version it was obtained (Provenance), how old it
// may be and still be the latest data (MaxAge), whether more pages follow
// ([Paging]), whether it is an accepted job that is not done ([Async]), and
// whether it is a wall instead of the content ([Wall]: a captcha, a login
// page, a rate limit). A node states what it needs of a tool's results
// with a [Requirement] (the latest data, every page). The response
// contract guard applies them and tells the model the business verdict,
// its reason and whether calling again can help
// (docs/observation-contract.md). A parameter [Source] may require the
// output an earlier step of a task verified ([Step]). Names starting with
// "step:" are reserved for those outputs.
//
// # Effects
//
// An undeclared effect counts as [Write]: a write must pass the write gate
// (approval, in-flight and uncertain-result checks), so forgetting to
// declare an effect can only make a tool safer.
//
// # Reporting failures
//
// A tool reports what kind of failure happened by returning one of the
// typed errors of this package, wrapped or not: [NotFound], [Forbidden],
// [Unavailable], [RateLimited], [Unreachable], [BusinessFailure] (with the
// downstream code), [Classified] for conditions an adapter has already
// recognised (timeouts, MCP errors), and [Reject] for a built-in tool's
// rule-based refusal, which always carries an error code and a next step and
// becomes a REJECTED observation. A typed tool built with [New] reports
// arguments it cannot decode as an [*ArgsError] (REJECTED ARG_JSON_INVALID).
// Any other error is classified from the standard library's errors (context
// deadlines become TOOL_TIMEOUT, connection failures TOOL_UNREACHABLE, file
// and system-call errors TOOL_IO_ERROR) or becomes FAILED TOOL_ERROR.
// Classification happens in one place, the default invoker (package
// invoker), which documents the order of its rules.
//
// # What the model reads about a failure
//
// Only text a tool wrote for the model reaches it: the Message of an
// [Error] (the constructors' formatted message) or the detail of
// [WithDetail], which marks any error with a safe text while its chain
// still decides the code. The text of every other error — and the Err of
// an [Error] — goes to the log and the observer only; the model is told
// that the details are withheld. Every detail is cut to its first line and
// [MaxDetail] bytes ([ClipDetail]). Arguments that do not decode are
// described in JSON words ([JSONDetail], [ArgsError.Detail]), and schema
// violations without Go renderings of values ([SchemaDetail]).
//
//	rows, err := db.QueryContext(ctx, q, id) // err may hold the DSN
//	if err != nil {
//		return nil, tool.WithDetail(err, "the orders database is unavailable")
//	}
//
// # Retries
//
// A [RetryPolicy] says how often the retry guard may run a failed call
// again, with exponential backoff, a cap and jitter ([RetryPolicy.Delay]
// takes the random source so tests stay deterministic), and which codes it
// may retry ([RetryPolicy.Allows]).
//
// # Concurrency
//
// A [Tool] is read-only once added to a [Catalog] and may then be shared; a
// [Catalog] is safe for concurrent use; a tool's Func must be safe for
// concurrent calls.
package tool
