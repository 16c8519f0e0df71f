package modelerr

import (
	"errors"
	"net/http"
)

// Response is what an adapter could read about the HTTP response of a
// failed call, pulled out of its SDK's error or the last response the SDK
// saw. The zero value means no response arrived.
type Response struct {
	// StatusCode is the HTTP status; 0 when no response arrived.
	StatusCode int
	// Header is the response's header, for [RetryAfter]; nil is treated
	// as empty.
	Header http.Header
	// ErrorType is the error type the body names, such as Anthropic's
	// "overloaded_error" or "rate_limit_error"; empty when the body had
	// none or could not be read.
	ErrorType string
}

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

// Classify is the one place that turns a failed model call into an
// [*Error]. provider names the adapter; err is what the SDK returned (it
// becomes [Error.Err]); resp is what the adapter read about the response.
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
func Classify(provider string, err error, resp Response) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	out := &Error{Provider: provider, StatusCode: resp.StatusCode, Err: err}
	transport := transportKind(err)
	switch {
	case transport == Timeout || transport == Canceled:
		out.Kind = transport
	case resp.StatusCode >= 400:
		out.Kind = KindOfStatus(resp.StatusCode, resp.ErrorType)
		now, _ := http.ParseTime(resp.Header.Get("Date"))
		out.RetryAfter = RetryAfter(resp.Header, now)
	case transport != Unknown:
		out.Kind = transport
	case resp.StatusCode == 0:
		out.Kind = Request
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		out.Kind = Malformed
	default:
		out.Kind = Unknown
	}
	return out
}
