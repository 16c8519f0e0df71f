package openai

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	sdk "github.com/openai/openai-go/v3"
)

// Kind says why the model could not answer. It is what a host branches on
// to decide whether to wait and resume, alert, or give up.
//
// The zero value is [KindUnknown]; it is never retryable.
type Kind int

// The kinds of model-side failure. The numeric values are stable.
const (
	// KindUnknown is an error no rule below recognised.
	KindUnknown Kind = 0
	// KindRateLimited is HTTP 429: the account or model is over its rate
	// or quota. [Error.RetryAfter] carries the server's hint when it gave
	// one.
	KindRateLimited Kind = 1
	// KindOverloaded is HTTP 503 (OpenAI's "engine is overloaded").
	KindOverloaded Kind = 2
	// KindServer is any other HTTP 5xx.
	KindServer Kind = 3
	// KindUnreachable is a request that got no HTTP response: refused or
	// reset connection, DNS failure, TLS failure, a body cut off mid-read.
	KindUnreachable Kind = 4
	// KindTimeout is a deadline: the caller's context deadline or a
	// transport timeout.
	KindTimeout Kind = 5
	// KindCanceled is the caller's context being canceled.
	KindCanceled Kind = 6
	// KindMalformed is a successful HTTP status whose body is not a usable
	// chat completion: not JSON, or no choices.
	KindMalformed Kind = 7
	// KindAuth is HTTP 401 or 403: the key is missing, wrong or lacks
	// access to the model.
	KindAuth Kind = 8
	// KindRequest is any other HTTP 4xx (bad request, unknown model,
	// context too long), or a request that was never sent: the adapter
	// could not build it (a tool whose input schema is not a JSON object,
	// an unknown role) or the SDK refused it (no base URL). Sending it
	// again unchanged fails again.
	KindRequest Kind = 9

	kindMin = KindUnknown
	kindMax = KindRequest
)

var kindNames = [...]string{
	KindUnknown:     "unknown",
	KindRateLimited: "rate_limited",
	KindOverloaded:  "overloaded",
	KindServer:      "server",
	KindUnreachable: "unreachable",
	KindTimeout:     "timeout",
	KindCanceled:    "canceled",
	KindMalformed:   "malformed",
	KindAuth:        "auth",
	KindRequest:     "request",
}

var (
	_ encoding.TextMarshaler   = Kind(0)
	_ encoding.TextUnmarshaler = (*Kind)(nil)
)

// String returns the kind's stable name ("rate_limited"), or "Kind(n)" for
// a value outside the defined set.
func (k Kind) String() string {
	if k < kindMin || k > kindMax {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// MarshalText returns the stable name. It fails for a value outside the
// defined set.
func (k Kind) MarshalText() ([]byte, error) {
	if k < kindMin || k > kindMax {
		return nil, fmt.Errorf("openai: invalid Kind %d", int(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText parses a stable name; unknown names are rejected and leave
// k unchanged.
func (k *Kind) UnmarshalText(text []byte) error {
	for i, name := range kindNames {
		if name == string(text) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("openai: unknown Kind %q", text)
}

// Retryable reports whether sending the same request again later may
// succeed: rate limits, overload, 5xx, unreachable server and timeouts.
// A host that resumes the loop's snapshot after such an error replays the
// same model turn; nothing is lost.
func (k Kind) Retryable() bool {
	switch k {
	case KindRateLimited, KindOverloaded, KindServer, KindUnreachable, KindTimeout:
		return true
	case KindUnknown, KindCanceled, KindMalformed, KindAuth, KindRequest:
		return false
	}
	return false
}

// Error is every failure [Model.Generate] returns. It is a model-side
// failure, never a tool outcome: the loop hands it to the host together
// with a resumable snapshot.
//
// Err is the cause as the SDK or the transport reported it, so
// errors.As(err, new(*openai.Error)) with the SDK's error type and
// errors.Is(err, context.DeadlineExceeded) keep working through it.
type Error struct {
	// Kind classifies the failure.
	Kind Kind
	// StatusCode is the HTTP status, or 0 when no response arrived.
	StatusCode int
	// RetryAfter is the wait the server asked for (headers retry-after-ms
	// or retry-after in seconds); 0 when it gave none. HTTP-date values are
	// ignored.
	RetryAfter time.Duration
	// Err is the underlying cause; never nil for errors built by this
	// package.
	Err error
}

// Error renders "openai: <kind> [(status)]: <cause>".
func (e *Error) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("openai: %s (HTTP %d): %v", e.Kind, e.StatusCode, e.Err)
	}
	return fmt.Sprintf("openai: %s: %v", e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the [Kind] of the first [*Error] in err's chain, or
// [KindUnknown] when there is none (including for nil).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindUnknown
}

// classify is the one place that turns what the SDK returned into an
// [*Error]. resp is the last HTTP response the SDK saw, nil when none
// arrived. The order matters: context errors first (the transport wraps
// them in *url.Error), then the SDK's API error, then an HTTP status the
// SDK could not turn into an API error (a non-JSON error body), then
// transport failures, then a request refused before sending, then a 2xx
// body that did not decode.
func classify(err error, resp *http.Response) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	out := &Error{Kind: KindUnknown, Err: err}
	if resp != nil {
		out.StatusCode = resp.StatusCode
	}
	var apiErr *sdk.Error
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		out.Kind = KindTimeout
	case errors.Is(err, context.Canceled):
		out.Kind = KindCanceled
	case errors.As(err, &apiErr):
		out.StatusCode = apiErr.StatusCode
		out.Kind = kindOfStatus(apiErr.StatusCode)
		if apiErr.Response != nil {
			resp = apiErr.Response
		}
	case resp != nil && resp.StatusCode >= 400:
		out.Kind = kindOfStatus(resp.StatusCode)
	case errors.As(err, &netErr) && netErr.Timeout():
		out.Kind = KindTimeout
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		out.Kind = KindUnreachable
	case resp == nil:
		out.Kind = KindRequest // refused before sending: bad options or base URL
	case resp.StatusCode < 300:
		out.Kind = KindMalformed
	}
	if resp != nil && out.StatusCode >= 400 {
		out.RetryAfter = retryAfter(resp.Header)
	}
	return out
}

// kindOfStatus maps an HTTP error status to a kind.
func kindOfStatus(status int) Kind {
	switch {
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return KindAuth
	case status == http.StatusServiceUnavailable:
		return KindOverloaded
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindRequest
	}
	return KindUnknown
}

// retryAfter reads retry-after-ms, then retry-after as seconds. It never
// consults the wall clock, so HTTP-date values yield 0.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if d, ok := scaled(v, time.Millisecond); ok {
			return d
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if d, ok := scaled(v, time.Second); ok {
			return d
		}
	}
	return 0
}

// scaled parses a positive decimal number of units; NaN, infinities and
// values that overflow a Duration are refused.
func scaled(v string, unit time.Duration) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || f >= math.MaxInt64/float64(unit) {
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}
