// Package mcp turns the tools of an MCP server, reached through a client
// session of the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk),
// into reactguard tools, and classifies every call's outcome into the error
// codes of the specification (§5).
//
// It is its own Go module, so that importing reactguard never pulls in the
// SDK. Its package name clashes with the SDK's; import one of them under
// another name:
//
//	import (
//		sdk "github.com/modelcontextprotocol/go-sdk/mcp"
//		rgmcp "github.com/reactguard/reactguard/adapters/mcp"
//	)
//
// # Converting tools
//
// [Tools] lists a session's tools and converts each with [Convert]: the
// name (optionally prefixed), the description (or the title when there is
// none), the input schema as a *jsonschema.Schema of
// github.com/google/jsonschema-go, and the effect. A tool the server
// annotates readOnlyHint=true is a [tool.Read]; every other tool, an
// unannotated one included, is a [tool.Write], since MCP's default for
// readOnlyHint is false. The host overrides effects per tool name
// ([Options].Effects) or with a function ([Options].Effect): annotations
// are hints from the server, and the write gate depends on them.
//
// # Classification
//
// Each tool's Func sends tools/call on the session and classifies what
// comes back, in one place and in this order:
//
//	caller's ctx cancelled                  ctx's error, unclassified: the invoker returns it as a Go error
//	deadline (context.DeadlineExceeded)     tool.KindTimeout → TOOL_TIMEOUT (the error still matches
//	                                        context.DeadlineExceeded: when the caller's own deadline
//	                                        passed, the invoker reports cancellation instead)
//	EOF, closed connection, lost HTTP       tool.KindUnreachable → TOOL_UNREACHABLE
//	session, refused or failed network
//	connection, killed server, first
//	JSON-RPC error of the chain -32005
//	JSON-RPC error -32602                   tool.KindMCPInvalidParams → MCP_INVALID_PARAMS
//	                                        (the SDK also answers an unknown tool so)
//	any other JSON-RPC error                tool.KindMCPRPC → MCP_RPC_ERROR
//	                                        (the model reads "JSON-RPC error <code>")
//	any other error                         tool.KindUnreachable → TOOL_UNREACHABLE, outcome unknown
//	                                        (never TOOL_ERROR: see "Uncertain outcomes")
//	isError result: argument validation     tool.Reject ARG_REJECTED (see below)
//	isError result: anything else           tool.KindMCPToolError → MCP_TOOL_ERROR, the result's text as message
//	success                                 the structured content if present, else the text
//	                                        (several text contents joined by newlines), else the
//	                                        contents themselves, else nil
//
// A deadline is checked first because context.DeadlineExceeded also
// satisfies net.Error; transport conditions are checked before JSON-RPC
// codes because the SDK reports an HTTP transport failure as JSON-RPC code
// -32005. Only the first JSON-RPC error of the chain is compared with
// -32005.
//
// # What the model reads
//
// The errors the SDK returns hold server URLs, session ids, network
// addresses and the server's own error texts. None of it reaches the
// model: each classified error carries a fixed message as its model-facing
// detail ("the MCP server could not be reached", "JSON-RPC error -32603",
// "the exchange with the MCP server failed and the call's outcome is
// unknown") and the SDK's error as its cause, which goes to the log and
// the observer only (see tool.DetailOf). The one text of the server's that
// the model reads is the content of an isError result: MCP defines it as
// the tool's own report for the model, like the content of a successful
// result; the invoker keeps its first line, clipped to tool.MaxDetail
// bytes. A server that writes secrets into its results leaks them either
// way. Schema-validation messages are rewritten by tool.SchemaDetail so
// that no Go rendering of a value or schema reaches the model.
//
// # Uncertain outcomes
//
// A failed call of a write tool is either definitive (the write did not
// take effect, a new attempt may run it) or uncertain (it may have taken
// effect: the write gate verifies it by idempotency key before anything
// runs it again; see guard.UncertainWrite). The adapter reports a CallTool
// error as definitive only when it is proven to have happened before the
// request reached the server, and no error of the SDK proves that: the
// SDK reports failures before sending and after it (an HTTP request whose
// answer was lost, a session that failed while calls were in flight, a
// result that does not decode, a multi-round-trip retry that gave up) with
// the same plain errors. So the rule is:
//
//   - the failures the adapter detects itself before calling CallTool
//     (arguments that are not a JSON object) are rejections: nothing was
//     sent;
//   - a JSON-RPC error is the server's own answer: MCP_INVALID_PARAMS
//     (-32602, the server refused the parameters) or MCP_RPC_ERROR, which
//     the write gate's default treats as uncertain;
//   - a deadline is TOOL_TIMEOUT, a transport condition TOOL_UNREACHABLE,
//     and every other error TOOL_UNREACHABLE with the reason that the
//     call's outcome is unknown: all uncertain, never TOOL_ERROR.
//
// Measured with go-sdk v1.8.0 over streamable HTTP on its default protocol
// (2026-07-28): when a server refuses the notifications/cancelled the SDK
// sends after a client-side timeout (go-sdk issue #1212), the session
// fails, and a write call that was in flight on it returns
// `calling "tools/call": sending "notifications/cancelled": Bad Request`
// after the server ran it. That call is TOOL_UNREACHABLE, so the write
// gate records it as uncertain and the same write does not run again.
//
// # Argument rejections
//
// The SDK validates a typed tool's arguments against its input schema
// before the handler runs and reports a violation not as JSON-RPC -32602
// but as an isError result whose text starts with `validating "arguments": `.
// That is the specification's argument rejection, not a tool failure: the
// call never ran. The rule is: an isError result whose text (its text
// contents joined by newlines) starts with that prefix is a
// tool.Reject(errcode.ArgRejected, reason, next) — REJECTED ARG_REJECTED —
// whose reason names the offending argument ("count", "items[].x", or every
// missing required property) and the validator's message, and whose next
// step is NEXT_FIX_ARGS, in the language of [Options].Lang. Any other
// isError result is MCP_TOOL_ERROR. Arguments that are not JSON or not a
// JSON object are rejected as ARG_JSON_INVALID before anything is sent.
//
// # Transports and deadlines
//
// The adapter works with any transport the session uses: in memory,
// streamable HTTP, stdio subprocesses. A call returns when its context is
// done, even if the server never answers. Closing a stdio session whose
// server does not exit when its stdin closes (one stuck in a handler) waits
// for the [sdk.CommandTransport]'s TerminateDuration, 5 s by default, before
// the process is signalled: set it lower when servers may hang.
//
// After a timeout over streamable HTTP on protocol version 2026-07-28, the
// SDK's cancellation notification can be refused and end the session
// (go-sdk issue #1212); calls in flight and later calls then report
// TOOL_UNREACHABLE (see "Uncertain outcomes"). A write whose call timed out
// may still have run on the server: that is the uncertain write the write
// gate verifies before any re-execution.
//
// # Concurrency
//
// The tools are immutable and safe for concurrent use; they share the
// session, which multiplexes concurrent calls. They stay usable while the
// session is open. Tools does not follow tools/list_changed notifications:
// call it again to pick up changes.
package mcp
