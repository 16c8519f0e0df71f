package modelerr

import (
	"errors"
	"net/http"
)

// statusOverloaded is the status Anthropic uses for overloaded_error.
const statusOverloaded = 529

// KindOfStatus returns the kind of an HTTP error status: 429 →
// [RateLimited], 401 and 403 → [Auth], 503 and 529 → [Overloaded], other
// 5xx → [Server], other 4xx → [Request], anything below 400 → [Unknown].
//
// errorType is the error type named by the response body ("" when none).
// The types "overloaded_error" and "rate_limit_error" win over the status
// (Anthropic reports an overload under several statuses); other types
// leave the decision to the status.
func KindOfStatus(status int, errorType string) Kind {
	switch errorType {
	case "overloaded_error":
		return Overloaded
	case "rate_limit_error":
		return RateLimited
	}
	switch {
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return Auth
	case status == http.StatusServiceUnavailable, status == statusOverloaded:
		return Overloaded
	case status >= 500:
		return Server
	case status >= 400:
		return Request
	}
	return Unknown
}

// KindOfType returns the kind of an error an API reported inside a
// successful response, by the error type (or code) it named: an in-band
// error event of a stream, which arrives with HTTP status 200 so that no
// rule keyed on the status sees it. overloaded_error and overloaded →
// [Overloaded]; rate_limit_error, rate_limit_exceeded and
// insufficient_quota → [RateLimited]; authentication_error,
// permission_error, invalid_api_key → [Auth]; invalid_request_error,
// not_found_error, request_too_large, context_length_exceeded →
// [Request]; anything else (api_error, server_error, a type this list
// does not know, "") → [Server]: the server failed in the middle of its
// answer.
func KindOfType(errorType string) Kind {
	switch errorType {
	case "overloaded_error", "overloaded":
		return Overloaded
	case "rate_limit_error", "rate_limit_exceeded", "insufficient_quota":
		return RateLimited
	case "authentication_error", "permission_error", "invalid_api_key":
		return Auth
	case "invalid_request_error", "not_found_error", "request_too_large", "context_length_exceeded":
		return Request
	}
	return Server
}

// Classify is the one place that turns a failed model call into an
// [*Error]. provider names the adapter; err is what the SDK returned (it
// becomes [Error.Err]); resp is the HTTP response the call got (the one
// inside the SDK's error when there is one), nil when none arrived;
// errorType is the error type the response body names (Anthropic's
// "overloaded_error", ...), "" when none. Only resp's status and header are
// read; its body is not touched.
//
// The rules, first match wins:
//
//  1. err already holds an [*Error]: it is returned unchanged.
//  2. context.DeadlineExceeded → [Timeout], context.Canceled → [Canceled]
//     (checked first because the HTTP client wraps them in transport
//     errors).
//  3. An error status (≥ 400) → [KindOfStatus], with [Error.RetryAfter]
//     read from the header. A status whose body is not JSON (a proxy's
//     HTML page) is still classified by its status.
//  4. A transport failure (see [KindOf]) → [Timeout] or [Unreachable].
//  5. No response → [Request]: the SDK refused to send it (bad options,
//     an unparsable base URL).
//  6. A 2xx response → [Malformed]: the body did not decode.
//  7. Anything else (a 1xx or 3xx status) → [Unknown].
//
// The HTTP-date form of Retry-After is measured from the response's own
// Date header, so Classify reads no clock and a client's clock skew does
// not matter; without a usable Date header that form is ignored.
//
// Classify never returns nil. A nil err still yields an *Error (with a nil
// cause), classified by resp alone.
func Classify(provider string, err error, resp *http.Response, errorType string) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	out := &Error{Provider: provider, Err: err}
	var h http.Header
	if resp != nil {
		out.StatusCode, h = resp.StatusCode, resp.Header
	}
	transport := transportKind(err)
	switch {
	case transport == Timeout || transport == Canceled:
		out.Kind = transport
	case out.StatusCode >= 400:
		out.Kind = KindOfStatus(out.StatusCode, errorType)
		now, _ := http.ParseTime(h.Get("Date"))
		out.RetryAfter = RetryAfter(h, now)
	case transport != Unknown:
		out.Kind = transport
	case out.StatusCode == 0:
		out.Kind = Request
	case out.StatusCode >= 200 && out.StatusCode < 300:
		out.Kind = Malformed
	default:
		out.Kind = Unknown
	}
	return out
}
