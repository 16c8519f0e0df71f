package modelerr

import (
	"encoding"
	"fmt"
	"strconv"
)

// Kind says why a model call failed. It is what a host branches on to
// decide whether to wait and resume the loop's snapshot, alert, or give
// up; every adapter reports the same kinds for the same conditions.
//
// The zero value is [Unknown]: an error no rule recognised. It is a valid
// kind (it has a name and a text form) and it is never retryable, so an
// unclassified failure is never retried blindly.
type Kind int

// The kinds of model-side failure. The numeric values and the names are
// stable and may be persisted; a value is never reused.
const (
	// Unknown is an error no rule recognised; also the kind of nil.
	Unknown Kind = 0
	// RateLimited is HTTP 429, or a body whose error type is
	// rate_limit_error: the account or model is over its rate or quota.
	// [Error.RetryAfter] carries the server's hint when it gave one.
	RateLimited Kind = 1
	// Overloaded is HTTP 503, Anthropic's 529, or a body whose error type
	// is overloaded_error, whatever its status.
	Overloaded Kind = 2
	// Server is any other HTTP 5xx.
	Server Kind = 3
	// Unreachable is a request that got no HTTP response: refused or reset
	// connection, DNS failure, TLS failure.
	Unreachable Kind = 4
	// Timeout is a deadline: the caller's context deadline or a transport
	// timeout.
	Timeout Kind = 5
	// Canceled is the caller's context being canceled.
	Canceled Kind = 6
	// Malformed is a successful HTTP status whose body is not a usable
	// answer: not JSON, or without the choice or content the API promises.
	Malformed Kind = 7
	// Auth is HTTP 401 or 403: the key is missing, wrong or lacks access to
	// the model.
	Auth Kind = 8
	// Request is any other HTTP 4xx (bad request, unknown model, context
	// too long), or a request that was never sent because the adapter or
	// its SDK could not build it. Sending it again unchanged fails again.
	Request Kind = 9
	// Truncated is a streamed answer that ended before the end marker its
	// API promises ([DONE], message_stop): the connection closed cleanly
	// in the middle of the answer, so what came is not the whole turn.
	// Asking again may get the whole answer.
	Truncated Kind = 10

	minKind = Unknown
	maxKind = Truncated
)

var kindNames = [...]string{
	Unknown:     "unknown",
	RateLimited: "rate_limited",
	Overloaded:  "overloaded",
	Server:      "server",
	Unreachable: "unreachable",
	Timeout:     "timeout",
	Canceled:    "canceled",
	Malformed:   "malformed",
	Auth:        "auth",
	Request:     "request",
	Truncated:   "truncated",
}

var (
	_ encoding.TextMarshaler   = Kind(0)
	_ encoding.TextUnmarshaler = (*Kind)(nil)
)

// IsValid reports whether k is one of the defined kinds ([Unknown]
// included).
func (k Kind) IsValid() bool { return k >= minKind && k <= maxKind }

// String returns the kind's stable name ("rate_limited"), or "Kind(n)" for
// a value outside the defined set.
func (k Kind) String() string {
	if !k.IsValid() {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// MarshalText implements [encoding.TextMarshaler] with the stable name. A
// value outside the defined set is an error, so that it is never
// persisted.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.IsValid() {
		return nil, fmt.Errorf("modelerr: cannot marshal invalid Kind %d", int(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]. It accepts exactly
// the stable names (case-sensitive); anything else is an error and leaves
// k unchanged.
func (k *Kind) UnmarshalText(text []byte) error {
	for i, name := range kindNames {
		if name == string(text) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("modelerr: unknown Kind %q", text)
}

// Retryable reports whether sending the same request again later may
// succeed: [RateLimited], [Overloaded], [Server], [Unreachable],
// [Timeout] and [Truncated]. A host that resumes the loop's snapshot after such an error
// replays the same model turn; nothing is lost. [Canceled] is not
// retryable: the caller asked to stop.
func (k Kind) Retryable() bool {
	switch k {
	case RateLimited, Overloaded, Server, Unreachable, Timeout, Truncated:
		return true
	case Unknown, Canceled, Malformed, Auth, Request:
		return false
	}
	return false
}
