package modelerr

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter returns the wait the headers of an error response ask for,
// or 0 when they ask for none. In order:
//
//  1. Retry-After-Ms: milliseconds, a header OpenAI and Anthropic send
//     next to the standard one, more precise than it.
//  2. Retry-After as delay-seconds ("20"; a decimal fraction is
//     accepted).
//  3. Retry-After as an HTTP-date (RFC 9110 §10.2.3), measured from now.
//     A zero now ignores this form, so RetryAfter never reads the wall
//     clock; [Classify] passes the response's own Date header.
//
// A value that does not parse, is not positive, is not finite, or does
// not fit in a Duration is ignored and the next form is tried; a date not
// after now yields 0. The result is never negative. h may be nil.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := scaled(h.Get("Retry-After-Ms"), time.Millisecond); ok {
		return d
	}
	v := h.Get("Retry-After")
	if d, ok := scaled(v, time.Second); ok {
		return d
	}
	if now.IsZero() || v == "" {
		return 0
	}
	t, err := http.ParseTime(strings.TrimSpace(v))
	if err != nil || !t.After(now) {
		return 0
	}
	return t.Sub(now) // saturates at the largest Duration
}

// scaled parses a positive decimal number of units; NaN, infinities,
// values under a nanosecond and values that overflow a Duration are
// refused.
func scaled(v string, unit time.Duration) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(f > 0) {
		return 0, false
	}
	// float64(math.MaxInt64) is 2^63: anything below it converts exactly.
	x := f * float64(unit)
	if x >= float64(math.MaxInt64) || x < 1 {
		return 0, false
	}
	return time.Duration(x), true
}
