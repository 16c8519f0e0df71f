package modelerr_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/modelerr"
)

// sdkError stands in for an SDK's own error type.
type sdkError struct{ code string }

func (e *sdkError) Error() string { return "sdk: " + e.code }

// timeoutError is a net.Error that timed out, as a transport reports it.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

var errCause = errors.New("cause")

func refused() error {
	return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/v1/chat/completions",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name   string
		err    *modelerr.Error
		want   string
		reason string
	}{
		{"status", &modelerr.Error{Provider: "openai", Kind: modelerr.RateLimited, StatusCode: 429, Err: errors.New("slow down")},
			"openai: rate_limited (HTTP 429): slow down", "the status follows the kind"},
		{"no status", &modelerr.Error{Provider: "anthropic", Kind: modelerr.Unreachable, Err: errors.New("refused")},
			"anthropic: unreachable: refused", "no response, no status"},
		{"no provider", &modelerr.Error{Kind: modelerr.Server, StatusCode: 500, Err: errCause},
			"model: server (HTTP 500): cause", "an empty provider reads as model"},
		{"no cause", &modelerr.Error{Provider: "openai", Kind: modelerr.Request},
			"openai: request", "a hand-built error without a cause prints no <nil>"},
		{"invalid kind", &modelerr.Error{Kind: modelerr.Kind(42), Err: errCause},
			"model: Kind(42): cause", "an invalid kind still renders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error(), "%s", tt.reason)
		})
	}
}

func TestErrorChain(t *testing.T) {
	apiErr := &sdkError{code: "rate_limit_exceeded"}
	err := fmt.Errorf("react: model: %w", &modelerr.Error{Kind: modelerr.RateLimited, Err: apiErr})

	var got *sdkError
	require.ErrorAs(t, err, &got, "the SDK's error stays reachable through *Error")
	assert.Same(t, apiErr, got)

	deadline := &modelerr.Error{Kind: modelerr.Timeout, Err: fmt.Errorf("post: %w", context.DeadlineExceeded)}
	assert.ErrorIs(t, deadline, context.DeadlineExceeded, "errors.Is sees the context error")
	assert.NoError(t, (&modelerr.Error{}).Unwrap(), "a hand-built error may have no cause")
}

func TestKindOf(t *testing.T) {
	server := &modelerr.Error{Kind: modelerr.Server, Err: errCause}
	tests := []struct {
		name   string
		err    error
		want   modelerr.Kind
		reason string
	}{
		{"nil", nil, modelerr.Unknown, "no error has no kind"},
		{"plain", errors.New("x"), modelerr.Unknown, "nothing recognisable"},
		{"sdk error", &sdkError{}, modelerr.Unknown, "an SDK error no adapter classified"},
		{"error", server, modelerr.Server, "an adapter's *Error"},
		{"wrapped", fmt.Errorf("react: %w", server), modelerr.Server, "found through %w"},
		{"joined", errors.Join(errors.New("loop"), server), modelerr.Server, "found through errors.Join"},
		{"error over context", &modelerr.Error{Kind: modelerr.Server, Err: context.DeadlineExceeded}, modelerr.Server,
			"the adapter's classification wins over its cause"},
		{"deadline", context.DeadlineExceeded, modelerr.Timeout, "the caller's deadline, unwrapped"},
		{"deadline in url.Error", &url.Error{Op: "Post", URL: "u", Err: context.DeadlineExceeded}, modelerr.Timeout,
			"the HTTP client wraps the context error; the context wins over the transport"},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), modelerr.Canceled, "the caller canceled"},
		{"canceled in url.Error", &url.Error{Op: "Post", URL: "u", Err: context.Canceled}, modelerr.Canceled,
			"not unreachable: the caller stopped it"},
		{"refused", refused(), modelerr.Unreachable, "a refused connection got no response"},
		{"dns", &net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}, modelerr.Unreachable, "DNS failure"},
		{"net timeout", timeoutError{}, modelerr.Timeout, "a transport timeout is a deadline"},
		{"os deadline", fmt.Errorf("read: %w", os.ErrDeadlineExceeded), modelerr.Timeout, "a socket deadline"},
		{"url parse", &url.Error{Op: "parse", URL: "http://[::1", Err: errors.New("missing ']' in host")}, modelerr.Unknown,
			"an unparsable URL never reached the network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := modelerr.KindOf(tt.err)
			assert.Equal(t, tt.want, got, "KindOf(%v) = %s; want %s: %s", tt.err, got, tt.want, tt.reason)
		})
	}
}
