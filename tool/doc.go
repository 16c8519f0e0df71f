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
// uses). A [Catalog] holds the tools of an agent; registering a tool without
// a name, a schema that does not resolve, or a duplicate name is refused.
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
// [Unavailable], [RateLimited], [BusinessFailure] (with the downstream code),
// and [Reject] for a built-in tool's rule-based refusal, which always
// carries an error code and a next step and becomes a REJECTED observation.
// Any other error becomes FAILED TOOL_ERROR; context deadlines become
// TOOL_TIMEOUT. Classification happens in one place, the default invoker.
package tool
