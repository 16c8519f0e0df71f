package modelerr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/modelerr"
)

func TestKindOfStatus(t *testing.T) {
	tests := []struct {
		status  int
		errType string
		want    modelerr.Kind
		reason  string
	}{
		{429, "", modelerr.RateLimited, "too many requests"},
		{401, "", modelerr.Auth, "no or wrong key"},
		{403, "", modelerr.Auth, "the key lacks access"},
		{503, "", modelerr.Overloaded, "OpenAI's engine is overloaded"},
		{529, "", modelerr.Overloaded, "Anthropic's overloaded status"},
		{500, "", modelerr.Server, "internal server error"},
		{502, "", modelerr.Server, "a gateway in front of the API"},
		{599, "", modelerr.Server, "the last 5xx"},
		{600, "", modelerr.Server, "beyond 5xx is still not the client's fault"},
		{400, "", modelerr.Request, "bad request"},
		{404, "", modelerr.Request, "unknown model"},
		{413, "", modelerr.Request, "request too large"},
		{422, "", modelerr.Request, "unprocessable"},
		{200, "", modelerr.Unknown, "not an error status"},
		{302, "", modelerr.Unknown, "a redirect is not an error status"},
		{0, "", modelerr.Unknown, "no status"},
		{500, "overloaded_error", modelerr.Overloaded, "the body's overloaded_error wins over 500"},
		{529, "overloaded_error", modelerr.Overloaded, "status and body agree"},
		{400, "rate_limit_error", modelerr.RateLimited, "the body's rate_limit_error wins over 400"},
		{500, "api_error", modelerr.Server, "other types leave it to the status"},
		{429, "requests", modelerr.RateLimited, "OpenAI's rate-limit type is not special"},
		{401, "authentication_error", modelerr.Auth, "a type that agrees with the status"},
		{400, "Overloaded_Error", modelerr.Request, "types are matched exactly"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status)+"/"+tt.errType, func(t *testing.T) {
			got := modelerr.KindOfStatus(tt.status, tt.errType)
			assert.Equal(t, tt.want, got, "KindOfStatus(%d, %q) = %s; want %s: %s", tt.status, tt.errType, got, tt.want, tt.reason)
		})
	}
}

func TestClassify(t *testing.T) {
	date := "Wed, 21 Oct 2015 07:28:00 GMT"
	tests := []struct {
		name       string
		err        error
		resp       exchange
		want       modelerr.Kind
		retryAfter time.Duration
		reason     string
	}{
		{"rate limited", &sdkError{}, exchange{status: 429, header: header("Retry-After-Ms", "120", "Retry-After", "1")},
			modelerr.RateLimited, 120 * time.Millisecond, "retry-after-ms wins over retry-after"},
		{"rate limited seconds", &sdkError{}, exchange{status: 429, header: header("Retry-After", "20")},
			modelerr.RateLimited, 20 * time.Second, "delay-seconds"},
		{"rate limited date", &sdkError{}, exchange{status: 429,
			header: header("Date", date, "Retry-After", "Wed, 21 Oct 2015 07:28:30 GMT")},
			modelerr.RateLimited, 30 * time.Second, "an HTTP-date is measured from the response's Date"},
		{"date without Date", &sdkError{}, exchange{status: 429, header: header("Retry-After", date)},
			modelerr.RateLimited, 0, "no Date header, no reference: the date form is ignored"},
		{"overloaded body", &sdkError{}, exchange{status: 500, errType: "overloaded_error"},
			modelerr.Overloaded, 0, "the body's type wins over the status"},
		{"server", &sdkError{}, exchange{status: 500, header: http.Header{}}, modelerr.Server, 0, "5xx"},
		{"html page", errors.New("invalid character '<'"), exchange{status: 502},
			modelerr.Server, 0, "an error status whose body is not JSON is classified by its status"},
		{"auth", &sdkError{}, exchange{status: 401}, modelerr.Auth, 0, "401"},
		{"request", &sdkError{}, exchange{status: 400}, modelerr.Request, 0, "400"},
		{"deadline", fmt.Errorf("post: %w", context.DeadlineExceeded), exchange{}, modelerr.Timeout, 0,
			"the caller's deadline"},
		{"deadline over status", context.DeadlineExceeded, exchange{status: 500}, modelerr.Timeout, 0,
			"a deadline hit while reading an error body is still the deadline"},
		{"canceled", context.Canceled, exchange{}, modelerr.Canceled, 0, "the caller canceled"},
		{"refused", refused(), exchange{}, modelerr.Unreachable, 0, "no response arrived"},
		{"net timeout", timeoutError{}, exchange{}, modelerr.Timeout, 0, "a transport timeout"},
		{"status over transport", refused(), exchange{status: 503}, modelerr.Overloaded, 0,
			"a response arrived: its status decides"},
		{"never sent", errors.New("requestconfig: bad base URL"), exchange{}, modelerr.Request, 0,
			"no response and no transport error: the SDK refused to send"},
		{"malformed", errors.New("unexpected end of JSON input"), exchange{status: 200}, modelerr.Malformed, 0,
			"a 2xx body that did not decode"},
		{"malformed 201", errors.New("x"), exchange{status: 201}, modelerr.Malformed, 0, "any 2xx"},
		{"redirect", errors.New("x"), exchange{status: 302}, modelerr.Unknown, 0, "a 3xx the client did not follow"},
		{"retry-after on success", errors.New("x"), exchange{status: 200, header: header("Retry-After", "5")},
			modelerr.Malformed, 0, "Retry-After is read only from error responses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := modelerr.Classify("openai", tt.err, tt.resp.response(), tt.resp.errType)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Kind, "Classify(%v, %d).Kind = %s; want %s: %s", tt.err, tt.resp.status, got.Kind, tt.want, tt.reason)
			assert.Equal(t, tt.retryAfter, got.RetryAfter, "Classify(%v).RetryAfter: %s", tt.err, tt.reason)
			assert.Equal(t, tt.resp.status, got.StatusCode, "the status is kept whatever the kind")
			assert.Equal(t, "openai", got.Provider)
			assert.Equal(t, tt.err, got.Err, "the cause is kept as it is")
			assert.Equal(t, tt.want, modelerr.KindOf(got), "KindOf agrees with Classify")
		})
	}
}

func TestClassifyKeepsAnError(t *testing.T) {
	inner := &modelerr.Error{Provider: "anthropic", Kind: modelerr.Request, Err: errCause}
	wrapped := fmt.Errorf("build: %w", inner)
	got := modelerr.Classify("openai", wrapped, &http.Response{StatusCode: 500}, "")
	assert.Same(t, inner, got, "an already classified error is returned unchanged, not classified twice")
}

func TestClassifyNilError(t *testing.T) {
	got := modelerr.Classify("openai", nil, &http.Response{StatusCode: 503}, "")
	require.NotNil(t, got, "Classify never returns nil")
	assert.Equal(t, modelerr.Overloaded, got.Kind, "classified by the response alone")
	assert.Equal(t, "openai: overloaded (HTTP 503)", got.Error())
}

// exchange is what a failed call got back: no response when status is 0.
type exchange struct {
	status  int
	header  http.Header
	errType string
}

// response returns the *http.Response of x, nil for no response. Its
// Header may be nil: Classify must cope.
func (x exchange) response() *http.Response {
	if x.status == 0 {
		return nil
	}
	return &http.Response{StatusCode: x.status, Header: x.header}
}

// header builds an http.Header from name, value pairs.
func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestKindOfType(t *testing.T) {
	for _, tt := range []struct {
		typ  string
		want modelerr.Kind
		why  string
	}{
		{"overloaded_error", modelerr.Overloaded, "Anthropic's overload, sent in-band with status 200"},
		{"rate_limit_error", modelerr.RateLimited, "Anthropic's rate limit"},
		{"rate_limit_exceeded", modelerr.RateLimited, "OpenAI's rate limit code"},
		{"insufficient_quota", modelerr.RateLimited, "OpenAI's quota"},
		{"authentication_error", modelerr.Auth, "a key that does not fix itself"},
		{"invalid_request_error", modelerr.Request, "the same request fails the same way"},
		{"context_length_exceeded", modelerr.Request, "the history is too long"},
		{"api_error", modelerr.Server, "a server failure mid-answer"},
		{"server_error", modelerr.Server, "OpenAI's server failure"},
		{"", modelerr.Server, "no type: still the server's failure"},
		{"brand_new_error", modelerr.Server, "an unknown type is the server's failure, retryable"},
	} {
		assert.Equal(t, tt.want, modelerr.KindOfType(tt.typ), "%q: %s", tt.typ, tt.why)
	}
}
