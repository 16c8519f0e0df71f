package tool

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/reactguard/reactguard/errcode"
)

// Kind is the kind of failure a [*Error] reports.
type Kind uint8

// The kinds a tool may report. Each maps to one error code.
const (
	KindNotFound         Kind = 1  // → TOOL_NOT_FOUND
	KindForbidden        Kind = 2  // → TOOL_FORBIDDEN
	KindUnavailable      Kind = 3  // → TOOL_UNAVAILABLE (retryable by default)
	KindRateLimited      Kind = 4  // → TOOL_RATE_LIMITED (retryable by default)
	KindBusinessFailure  Kind = 5  // → TOOL_BUSINESS_FAILED, downstream code in the reason
	KindUnreachable      Kind = 6  // → TOOL_UNREACHABLE
	KindIO               Kind = 7  // → TOOL_IO_ERROR
	KindTimeout          Kind = 8  // → TOOL_TIMEOUT
	KindMCPToolError     Kind = 9  // → MCP_TOOL_ERROR: an MCP result with isError set
	KindMCPRPC           Kind = 10 // → MCP_RPC_ERROR: a JSON-RPC error from an MCP server
	KindMCPInvalidParams Kind = 11 // → MCP_INVALID_PARAMS: JSON-RPC -32602
	KindTooLarge         Kind = 12 // → TOOL_RESULT_TOO_LARGE: the result is too large (HTTP 413)
)

// String returns the kind's name in lower case with spaces (e.g. "not
// found", "rate limited"), or "kind(n)" for an undefined kind. The zero Kind
// is undefined and reads "kind(0)".
func (k Kind) String() string {
	switch k {
	case KindNotFound:
		return "not found"
	case KindForbidden:
		return "forbidden"
	case KindUnavailable:
		return "unavailable"
	case KindRateLimited:
		return "rate limited"
	case KindBusinessFailure:
		return "business failure"
	case KindUnreachable:
		return "unreachable"
	case KindIO:
		return "i/o error"
	case KindTimeout:
		return "timeout"
	case KindMCPToolError:
		return "mcp tool error"
	case KindMCPRPC:
		return "mcp rpc error"
	case KindMCPInvalidParams:
		return "mcp invalid params"
	case KindTooLarge:
		return "too large"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Code returns the error code the kind maps to; an undefined kind (the zero
// Kind included) maps to [errcode.ToolError].
func (k Kind) Code() errcode.Code {
	switch k {
	case KindNotFound:
		return errcode.ToolNotFound
	case KindForbidden:
		return errcode.ToolForbidden
	case KindUnavailable:
		return errcode.ToolUnavailable
	case KindRateLimited:
		return errcode.ToolRateLimited
	case KindBusinessFailure:
		return errcode.ToolBusinessFailed
	case KindUnreachable:
		return errcode.ToolUnreachable
	case KindIO:
		return errcode.ToolIOError
	case KindTimeout:
		return errcode.ToolTimeout
	case KindMCPToolError:
		return errcode.MCPToolError
	case KindMCPRPC:
		return errcode.MCPRPCError
	case KindMCPInvalidParams:
		return errcode.MCPInvalidParams
	case KindTooLarge:
		return errcode.ToolResultTooLarge
	}
	return errcode.ToolError
}

// Error is a classified tool failure. Build it with [NotFound], [Forbidden],
// [Unavailable], [RateLimited], [Unreachable], [BusinessFailure] or
// [Classified]; it may be wrapped any number of times and is found with
// [AsError] or [errors.As]. A zero or undefined Kind is classified as
// TOOL_ERROR.
type Error struct {
	// Kind says what kind of failure this is.
	Kind Kind
	// Downstream is the downstream system's own code (for
	// KindBusinessFailure), e.g. "system.50001". It goes into the reason
	// text, never into an errcode.
	Downstream string
	// Message says what happened, for the model: it is the only part of
	// the error the model reads (clipped by [ClipDetail]), so it must not
	// carry secrets. May be empty; the model is then told that the
	// details are withheld.
	Message string
	// Err is the underlying error, if any. It goes to the log and the
	// observer, never to the model.
	Err error
}

// Error implements error: "<kind>: [<downstream>] <message>: <err>", empty
// parts left out.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	sep := ": "
	if e.Downstream != "" {
		b.WriteString(sep + "[" + e.Downstream + "]")
		sep = " "
	}
	if e.Message != "" {
		b.WriteString(sep + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Detail returns what the model is told about e: its Message, clipped by
// [ClipDetail], or "" when it has none. The underlying error is never part
// of it. The default invoker puts it into the reason text (see
// [DetailOf]).
func (e *Error) Detail() string { return ClipDetail(e.Message) }

// Unwrap returns the underlying error; nil for a nil e.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// NotFound reports that the resource the tool was asked about does not exist.
func NotFound(format string, args ...any) error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf(format, args...)}
}

// Forbidden reports that the backend refused permission.
func Forbidden(format string, args ...any) error {
	return &Error{Kind: KindForbidden, Message: fmt.Sprintf(format, args...)}
}

// Unavailable reports that the backend is temporarily unavailable.
func Unavailable(format string, args ...any) error {
	return &Error{Kind: KindUnavailable, Message: fmt.Sprintf(format, args...)}
}

// RateLimited reports that the backend is rate limiting.
func RateLimited(format string, args ...any) error {
	return &Error{Kind: KindRateLimited, Message: fmt.Sprintf(format, args...)}
}

// Unreachable reports that the backend could not be reached. err goes to
// the log only; the model is told that the details are withheld (use
// [Classified] with a message, or [WithDetail], to tell it more).
func Unreachable(err error) error {
	return &Error{Kind: KindUnreachable, Err: err}
}

// Classified returns an [*Error] of kind k wrapping err, with message as
// what the model is told (err is for the log only). Adapters use it to
// report transport and protocol conditions (timeouts, MCP errors) they
// have already recognised.
func Classified(k Kind, message string, err error) error {
	return &Error{Kind: k, Message: message, Err: err}
}

// BusinessFailure reports a business failure with the downstream system's
// code (e.g. "system.50001"; may be empty) and message.
func BusinessFailure(downstream, message string) error {
	return &Error{Kind: KindBusinessFailure, Downstream: downstream, Message: message}
}

// Rejection is a built-in tool's rule-based refusal (the specification's
// ToolRejectedException). It always carries a defined code and a next step;
// the default invoker turns it into a REJECTED observation wherever it sits
// in the error chain. Build it with [Reject].
type Rejection struct {
	code   errcode.Code
	reason string
	next   string
}

// Reject returns a [*Rejection]. It panics if code is undefined or next is
// empty: a rejection without a way forward cannot be built.
func Reject(code errcode.Code, reason, next string) *Rejection {
	if !code.IsValid() {
		panic(fmt.Sprintf("tool.Reject: undefined code %v", code))
	}
	if next == "" {
		panic("tool.Reject: a rejection needs a next step")
	}
	return &Rejection{code: code, reason: reason, next: next}
}

// Error implements error.
func (r *Rejection) Error() string { return r.code.String() + ": " + r.reason }

// Code returns the rejection's error code.
func (r *Rejection) Code() errcode.Code { return r.code }

// Reason returns what was wrong.
func (r *Rejection) Reason() string { return r.reason }

// Next returns the step the model must take.
func (r *Rejection) Next() string { return r.next }

// ArgsError reports that a typed tool could not decode its arguments. The
// default invoker classifies it as REJECTED ARG_JSON_INVALID with
// [ArgsError.Detail] in the reason.
type ArgsError struct {
	Tool string // the tool's name
	Err  error  // the decoding error
}

// Error implements error.
func (e *ArgsError) Error() string {
	if e.Err == nil {
		return "tool " + e.Tool + ": arguments do not decode"
	}
	return "tool " + e.Tool + ": arguments: " + e.Err.Error()
}

// Detail describes the decoding error for the model with [JSONDetail]: in
// JSON words, without Go type or field names.
func (e *ArgsError) Detail() string {
	if e.Err == nil {
		return "the arguments do not decode"
	}
	return JSONDetail(e.Err)
}

// Unwrap returns the decoding error.
func (e *ArgsError) Unwrap() error { return e.Err }

// AsError returns the first [*Error] in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
