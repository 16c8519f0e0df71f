// Package invoker turns one tool call into one observation: the [Call] that
// travels through a chain, the [Handler] and [Interceptor] shapes, [Chain],
// and the default invoker built by [New], the innermost handler, which runs
// the tool and classifies what happened.
//
// # Handlers and interceptors
//
// A [Handler] turns a [Call] into an [observation.Observation]. An
// [Interceptor] receives the call and the next handler and may act before
// it, instead of it, and after it (the gRPC / Connect / go-kit shape).
// [Chain] composes them once: the first interceptor listed is the
// outermost, nil entries are skipped. A tool failure is always an
// observation; a handler returns a Go error only for an infrastructure
// failure or the cancellation of its context, and then the observation is
// the zero value.
//
// # The execution account
//
// A [Call] may carry an [Execution] in which the guards note what the
// verdict does not say: how many attempts executed, the first attempt's
// verdict (never overwritten when a retry recovers), the last one, a write
// answered from the write ledger, a result short of the business contract.
// The react loop passes one per call and reports the account as the call's
// three layers of success (docs/evaluation.md). Its methods are nil-safe, so a call without one
// costs nothing.
//
// # The default invoker
//
// [New] returns the handler that executes call.Tool.Func with a
// [tool.Request] (run id, call id, raw arguments, attempt from 1, idempotency key)
// under the tool's Timeout, or [Options].DefaultTimeout when the tool has
// none. The tool runs on the caller's goroutine: a timeout cancels the
// tool's context, and a tool must honour it (a tool that ignores its context
// keeps the caller waiting). A nil call.Tool is answered REJECTED
// CATALOG_DENIED without running anything; a context already done is
// returned as an error before the tool runs.
//
// # Classification
//
// Everything a tool returns is classified in one place, in this order; each
// row walks the whole error chain (errors wrapped with %w any number of
// times, and errors.Join trees) with [errors.Is] and [errors.As], and the
// first row that matches decides:
//
//	returned without error                    SUCCESS (RESULT_TOOL_SUCCEEDED, payload kept)
//	the tool panicked                         FAILED  TOOL_ERROR (REASON_TOOL_PANICKED)
//	1. *tool.Rejection                        REJECTED with the rejection's own code, reason and next step
//	2. *tool.ArgsError                        REJECTED ARG_JSON_INVALID
//	3. the caller's ctx is done               no observation: (zero, ctx.Err()) is returned
//	   the per-tool timeout fired,            FAILED  TOOL_TIMEOUT
//	   context.DeadlineExceeded, or an
//	   error whose Timeout() reports true
//	   (net.Error, os.ErrDeadlineExceeded)
//	4. *tool.Error                            FAILED  with Kind.Code(): TOOL_NOT_FOUND, TOOL_FORBIDDEN,
//	                                                  TOOL_UNAVAILABLE, TOOL_RATE_LIMITED, TOOL_BUSINESS_FAILED,
//	                                                  TOOL_UNREACHABLE, TOOL_IO_ERROR, TOOL_TIMEOUT,
//	                                                  MCP_TOOL_ERROR, MCP_RPC_ERROR, MCP_INVALID_PARAMS
//	5. transport: ECONNREFUSED, ECONNRESET,   FAILED  TOOL_UNREACHABLE
//	   ECONNABORTED, EPIPE, EHOSTUNREACH,
//	   ENETUNREACH, ENETDOWN, EHOSTDOWN,
//	   io.EOF, io.ErrUnexpectedEOF,
//	   net.ErrClosed, *net.OpError,
//	   *net.DNSError (also inside *url.Error)
//	6. I/O: *fs.PathError, *os.LinkError,     FAILED  TOOL_IO_ERROR
//	   *os.SyscallError, any syscall.Errno,
//	   io.ErrShortWrite, io.ErrShortBuffer,
//	   io.ErrNoProgress, io.ErrClosedPipe,
//	   fs.ErrClosed
//	7. anything else                          FAILED  TOOL_ERROR
//
// The order matters where rows overlap: a rejection wins over everything
// (a built-in tool's refusal is a rule, whatever else went wrong); the
// caller's cancellation wins over any failure, because it is the host's
// decision and not a tool outcome; a timeout wins over a typed error and
// over transport (context.DeadlineExceeded is itself a net.Error); a typed
// [tool.Error] wins over the transport and I/O errors it wraps, because the
// tool or adapter that built it knew more; transport wins over I/O, because
// a reset connection is also a syscall error. A [tool.Rejection] built
// without [tool.Reject] (no code or next step) is a tool bug and classified
// TOOL_ERROR, as is an error whose own methods panic.
//
// Reasons are rendered with the catalog's code template
// (prompt.Catalog.Reason with {tool} and {detail}); a business failure says
// "business failure [<downstream>]: <message>", or uses
// REASON_BUSINESS_FAILED when the failure has no downstream code. A
// rejection without a reason gets its code's template.
//
// # What the model reads
//
// An error's text is never put into a reason: it holds whatever the tool's
// dependencies put there (a DSN with its password, a URL with a token, a
// file path, a stack, kilobytes of a response). {detail} is only
//
//   - what the tool wrote for the model: the detail of [tool.WithDetail]
//     or the Message of a [tool.Error], the first found in the error chain
//     ([tool.DetailOf]);
//   - for arguments a typed tool could not decode, [tool.ArgsError.Detail]:
//     the problem in JSON words, without Go type or field names;
//   - otherwise a neutral text: DETAIL_DEADLINE ("its time limit of 5s
//     passed") when the tool's own time limit fired, DETAIL_WITHHELD
//     ("details withheld") for everything else.
//
// Every detail is cut to its first line and [tool.MaxDetail] bytes
// ([tool.ClipDetail]). The error itself is the observation's cause
// (observation.Observation.Cause): the loop hands it to its observer
// (react.ToolEvent.Err, logged by the default log observer), and the
// invoker logs it at DEBUG level. Neither the cause nor the error's text is
// ever encoded into a transcript or a snapshot.
//
// # Next steps
//
// Every FAILED verdict, and the REJECTED verdicts the invoker decides itself
// (ARG_JSON_INVALID, CATALOG_DENIED), take their next step from the
// [ToolErrors] table of the specification (§7.2): per (tool, code) first,
// then per code, then [DefaultNext]. A [tool.Rejection] brings its own next
// step.
//
// # Panics and logging
//
// A panicking tool does not take the host down: the panic is recovered, the
// call is FAILED TOOL_ERROR with a reason that says only that the tool
// stopped with an internal error, and the panic value and stack go to
// [Options].Logger at ERROR level, never to the model. The raw error behind
// every non-success goes to the same logger at DEBUG level, and into the
// observation's cause.
//
// # Concurrency
//
// The handler returned by [New] and the handlers built by [Chain] are safe
// for concurrent use; the invoker keeps no per-call state and starts no
// goroutine. [ToolErrors] must be configured before it is shared and is
// then read-only.
package invoker
