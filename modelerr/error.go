package modelerr

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"
)

// Error is a failed model call, as every adapter returns it. It is a
// model-side failure, never a tool outcome: the loop hands it to the host
// together with a resumable snapshot.
//
// Err is the cause as the SDK or the transport reported it, so errors.As
// with the SDK's own error type and errors.Is with
// context.DeadlineExceeded keep working through an *Error.
//
// Adapters build it with [Classify]; the fields are exported so that hosts
// and tests can build one by hand. An *Error is not modified after it is
// returned and may be shared between goroutines.
type Error struct {
	// Provider names the adapter that failed ("openai", "anthropic"); it
	// prefixes the message. Empty renders as "model".
	Provider string
	// Kind classifies the failure.
	Kind Kind
	// StatusCode is the HTTP status, or 0 when no response arrived.
	StatusCode int
	// RetryAfter is the wait the server asked for (see [RetryAfter]); 0
	// when it gave none.
	RetryAfter time.Duration
	// Err is the underlying cause; never nil for errors built by
	// [Classify].
	Err error
}

// Error renders "<provider>: <kind> [(HTTP <status>)]: <cause>", leaving
// out the status when it is 0 and the cause when it is nil.
func (e *Error) Error() string {
	provider := e.Provider
	if provider == "" {
		provider = "model"
	}
	s := provider + ": " + e.Kind.String()
	if e.StatusCode != 0 {
		s += " (HTTP " + strconv.Itoa(e.StatusCode) + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause, possibly nil.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of a failed model call: the Kind of the first
// [*Error] in err's chain (found with errors.As). Without one it still
// recognises what needs no adapter: context.DeadlineExceeded → [Timeout],
// context.Canceled → [Canceled], a net.Error that timed out → [Timeout],
// any other net.Error (a refused connection, a DNS failure, a
// *url.Error from an HTTP client) → [Unreachable]. Everything else, nil
// included, is [Unknown].
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return transportKind(err)
}

// transportKind classifies the errors a call can fail with before or
// instead of an HTTP response. Context errors come first: the HTTP client
// wraps them in a *url.Error, which is also a net.Error. A *url.Error from
// parsing a URL is not a transport failure.
func transportKind(err error) Kind {
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case err == nil:
		return Unknown
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.As(err, &urlErr) && urlErr.Op == "parse":
		return Unknown
	case errors.As(err, &netErr) && netErr.Timeout():
		return Timeout
	case errors.As(err, &netErr):
		return Unreachable
	}
	return Unknown
}
