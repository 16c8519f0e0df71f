package modelerr_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/modelerr"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	tests := []struct {
		name   string
		h      http.Header
		now    time.Time
		want   time.Duration
		reason string
	}{
		{"none", http.Header{}, now, 0, "no header, no wait"},
		{"nil header", nil, now, 0, "a nil header is empty"},
		{"seconds", header("Retry-After", "20"), now, 20 * time.Second, "delay-seconds"},
		{"fraction", header("Retry-After", "0.5"), now, 500 * time.Millisecond, "a decimal fraction is accepted"},
		{"spaces", header("Retry-After", " 3 "), now, 3 * time.Second, "surrounding spaces are ignored"},
		{"ms", header("Retry-After-Ms", "120"), now, 120 * time.Millisecond, "milliseconds"},
		{"ms wins", header("Retry-After-Ms", "120", "Retry-After", "1"), now, 120 * time.Millisecond, "the precise header wins"},
		{"bad ms falls back", header("Retry-After-Ms", "soon", "Retry-After", "2"), now, 2 * time.Second,
			"an unusable retry-after-ms does not hide retry-after"},
		{"zero", header("Retry-After", "0"), now, 0, "zero asks for no wait"},
		{"negative", header("Retry-After", "-3"), now, 0, "a negative wait is ignored"},
		{"NaN", header("Retry-After", "NaN"), now, 0, "not a number"},
		{"Inf", header("Retry-After", "+Inf"), now, 0, "not finite"},
		{"overflow", header("Retry-After", "1e300"), now, 0, "does not fit a Duration"},
		{"just too big", header("Retry-After", "9223372037"), now, 0, "2^63 ns is one past the largest Duration"},
		{"under a nanosecond", header("Retry-After-Ms", "1e-9"), now, 0, "rounds to no wait and is ignored"},
		{"date", header("Retry-After", "Wed, 21 Oct 2015 07:28:30 GMT"), now, 30 * time.Second, "IMF-fixdate from now"},
		{"rfc850 date", header("Retry-After", "Wednesday, 21-Oct-15 07:29:00 GMT"), now, time.Minute, "obsolete RFC 850 form"},
		{"asctime date", header("Retry-After", "Wed Oct 21 07:28:05 2015"), now, 5 * time.Second, "obsolete asctime form"},
		{"past date", header("Retry-After", "Wed, 21 Oct 2015 07:27:00 GMT"), now, 0, "a date in the past asks for no wait"},
		{"date is now", header("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"), now, 0, "a date equal to now asks for no wait"},
		{"date without now", header("Retry-After", "Wed, 21 Oct 2015 07:28:30 GMT"), time.Time{}, 0,
			"a zero now ignores the date form: no wall clock"},
		{"far date", header("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"), now, time.Duration(1<<63 - 1),
			"a date beyond the largest Duration saturates"},
		{"garbage", header("Retry-After", "tomorrow"), now, 0, "neither seconds nor a date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := modelerr.RetryAfter(tt.h, tt.now)
			assert.Equal(t, tt.want, got, "RetryAfter(%v, %v) = %v; want %v: %s", tt.h, tt.now, got, tt.want, tt.reason)
		})
	}
}

// FuzzRetryAfter checks that no header value panics or yields a negative
// wait, that the result depends only on the headers and now, and that a
// date form is never read without a now.
func FuzzRetryAfter(f *testing.F) {
	for _, v := range []string{"1", "0.5", "-3", "NaN", "+Inf", "1e300", "9223372036.854775807", "0x1p-2",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Mon Jan  2 15:04:05 2006", ""} {
		f.Add(v, v, int64(1445412480))
		f.Add("", v, int64(0))
	}
	f.Fuzz(func(t *testing.T, ms, s string, unix int64) {
		h := http.Header{}
		h.Set("Retry-After-Ms", ms)
		h.Set("Retry-After", s)
		var now time.Time
		if unix != 0 {
			now = time.Unix(unix, 0)
		}
		d := modelerr.RetryAfter(h, now)
		if d < 0 {
			t.Fatalf("RetryAfter(ms=%q, s=%q, %v) = %v; want >= 0", ms, s, now, d)
		}
		if again := modelerr.RetryAfter(h, now); again != d {
			t.Fatalf("RetryAfter(ms=%q, s=%q, %v) = %v, then %v; want the same", ms, s, now, d, again)
		}
		if _, err := http.ParseTime(s); err == nil && ms == "" {
			if z := modelerr.RetryAfter(h, time.Time{}); z != 0 {
				t.Fatalf("RetryAfter(s=%q, zero now) = %v; want 0: no date form without now", s, z)
			}
		}
	})
}
