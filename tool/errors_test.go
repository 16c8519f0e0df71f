package tool_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/tool"
)

func TestKindCode(t *testing.T) {
	cases := []struct {
		kind tool.Kind
		code errcode.Code
		str  string
	}{
		{tool.KindNotFound, errcode.ToolNotFound, "not found"},
		{tool.KindForbidden, errcode.ToolForbidden, "forbidden"},
		{tool.KindUnavailable, errcode.ToolUnavailable, "unavailable"},
		{tool.KindRateLimited, errcode.ToolRateLimited, "rate limited"},
		{tool.KindBusinessFailure, errcode.ToolBusinessFailed, "business failure"},
		{tool.KindUnreachable, errcode.ToolUnreachable, "unreachable"},
		{tool.KindIO, errcode.ToolIOError, "i/o error"},
		{tool.KindTimeout, errcode.ToolTimeout, "timeout"},
		{tool.KindMCPToolError, errcode.MCPToolError, "mcp tool error"},
		{tool.KindMCPRPC, errcode.MCPRPCError, "mcp rpc error"},
		{tool.KindMCPInvalidParams, errcode.MCPInvalidParams, "mcp invalid params"},
		{tool.KindTooLarge, errcode.ToolResultTooLarge, "too large"},
		{tool.Kind(0), errcode.ToolError, "kind(0)"},
		{tool.Kind(99), errcode.ToolError, "kind(99)"},
	}
	seenCode := map[errcode.Code]tool.Kind{}
	for _, tc := range cases {
		got := tc.kind.Code()
		assert.Equalf(t, tc.code, got, "%v.Code() = %v; want %v", tc.kind, got, tc.code)
		assert.True(t, got.IsValid(), "every kind maps to a defined code")
		assert.Equal(t, tc.str, tc.kind.String())
		if tc.code != errcode.ToolError {
			prev, dup := seenCode[got]
			assert.Falsef(t, dup, "%v and %v map to the same code %v", prev, tc.kind, got)
			seenCode[got] = tc.kind
		}
	}
	// Every defined kind is in the table above.
	for k := tool.Kind(1); k < 64; k++ {
		if k.String() != fmt.Sprintf("kind(%d)", k) {
			assert.Containsf(t, seenCode, k.Code(), "kind %v is not covered by this test", k)
		}
	}
}

func TestErrorConstructors(t *testing.T) {
	dial := errors.New("dial tcp 10.0.0.1:443: connection refused")
	cases := []struct {
		name   string
		reason string
		err    error
		kind   tool.Kind
		str    string // Error()
		detail string // Detail(): the message only, never the cause
	}{
		{"not found", "formats the message", tool.NotFound("order %s", "A1"), tool.KindNotFound, "not found: order A1", "order A1"},
		{"forbidden", "", tool.Forbidden("no access to %q", "hr"), tool.KindForbidden, `forbidden: no access to "hr"`, `no access to "hr"`},
		{"unavailable", "", tool.Unavailable("maintenance"), tool.KindUnavailable, "unavailable: maintenance", "maintenance"},
		{"rate limited", "", tool.RateLimited("%d requests per minute", 60), tool.KindRateLimited, "rate limited: 60 requests per minute", "60 requests per minute"},
		{"unreachable", "the cause is for the log; no detail for the model", tool.Unreachable(dial), tool.KindUnreachable, "unreachable: " + dial.Error(), ""},
		{"business", "the downstream code is kept apart", tool.BusinessFailure("system.50001", "insufficient stock"), tool.KindBusinessFailure, "business failure: [system.50001] insufficient stock", "insufficient stock"},
		{"business without code", "", tool.BusinessFailure("", "insufficient stock"), tool.KindBusinessFailure, "business failure: insufficient stock", "insufficient stock"},
		{"business code only", "", tool.BusinessFailure("E1", ""), tool.KindBusinessFailure, "business failure: [E1]", ""},
		{"classified", "message and cause; only the message is for the model", tool.Classified(tool.KindMCPRPC, "server error", io.EOF), tool.KindMCPRPC, "mcp rpc error: server error: EOF", "server error"},
		{"classified bare", "nothing but the kind", tool.Classified(tool.KindIO, "", nil), tool.KindIO, "i/o error", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := fmt.Errorf("outer: %w", fmt.Errorf("middle: %w", tc.err))
			e, ok := tool.AsError(wrapped)
			require.True(t, ok, "AsError finds a wrapped *tool.Error")
			assert.Equal(t, tc.kind, e.Kind)
			assert.Equalf(t, tc.str, e.Error(), "Error() = %q; want %q %s", e.Error(), tc.str, tc.reason)
			assert.Equal(t, tc.detail, e.Detail())
		})
	}
	assert.Same(t, dial, errors.Unwrap(tool.Unreachable(dial)), "Unwrap returns the cause")
	assert.True(t, errors.Is(tool.Classified(tool.KindIO, "read", io.ErrUnexpectedEOF), io.ErrUnexpectedEOF))
	_, ok := tool.AsError(errors.New("plain"))
	assert.False(t, ok, "AsError(plain) = true; want false")
	_, ok = tool.AsError(nil)
	assert.False(t, ok)
	e, ok := tool.AsError(errors.Join(errors.New("a"), tool.NotFound("b")))
	require.True(t, ok, "AsError looks inside errors.Join")
	assert.Equal(t, tool.KindNotFound, e.Kind)
}

func TestReject(t *testing.T) {
	r := tool.Reject(errcode.ApprovalToolMismatch, "approval was requested for a, but b is waiting", "approve b")
	assert.Equal(t, errcode.ApprovalToolMismatch, r.Code())
	assert.Equal(t, "approval was requested for a, but b is waiting", r.Reason())
	assert.Equal(t, "approve b", r.Next())
	assert.Equal(t, "APPROVAL_TOOL_MISMATCH: approval was requested for a, but b is waiting", r.Error())

	var got *tool.Rejection
	require.True(t, errors.As(fmt.Errorf("wrapped: %w", r), &got))
	assert.Same(t, r, got)

	assert.PanicsWithValue(t, "tool.Reject: a rejection needs a next step", func() {
		_ = tool.Reject(errcode.ApprovalToolMismatch, "x", "")
	}, "a rejection without a next step cannot be built")
	assert.Panics(t, func() { _ = tool.Reject(0, "x", "y") }, "a rejection without a code cannot be built")
	assert.Panics(t, func() { _ = tool.Reject(errcode.Code(1), "x", "y") }, "a rejection with an undefined code cannot be built")
	assert.NotPanics(t, func() { _ = tool.Reject(errcode.FollowUpAnswered, "", "y") }, "the reason may be empty: the code's template stands in")
}

func TestArgsError(t *testing.T) {
	cause := errors.New("unexpected end of JSON input")
	e := &tool.ArgsError{Tool: "weather", Err: cause}
	assert.Equal(t, "tool weather: arguments: unexpected end of JSON input", e.Error())
	assert.Same(t, cause, e.Unwrap())
}
