package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/react"
)

var hello = react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}, Tools: siteTools}

// generateErr runs one Generate against s and returns its *anthropic.Error.
func generateErr(t *testing.T, ctx context.Context, m *anthropic.Model) *anthropic.Error {
	t.Helper()
	got, err := m.Generate(ctx, hello)
	require.Error(t, err, "Generate() = %+v, nil; want an error", got)
	assert.Equal(t, react.Response{}, got, "a failed Generate returns no partial turn")
	var e *anthropic.Error
	require.ErrorAs(t, err, &e)
	return e
}

func TestErrorRateLimited(t *testing.T) {
	s := newServer(t, reply{status: 429, file: "error_rate_limit.json",
		header: map[string]string{"Retry-After-Ms": "120", "Retry-After": "1"}})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindRateLimited, e.Kind)
	assert.Equal(t, 429, e.StatusCode)
	assert.Equal(t, 120*time.Millisecond, e.RetryAfter, "retry-after-ms wins over retry-after")
	assert.True(t, e.Kind.Retryable())
	var apiErr *sdk.Error
	require.ErrorAs(t, e, &apiErr, "the SDK's error stays reachable")
	assert.Equal(t, "rate_limit_error", string(apiErr.Type()))
	assert.Len(t, s.requests(), 1, "no SDK retries by default")
}

func TestErrorRateLimitedRetryAfterSeconds(t *testing.T) {
	s := newServer(t, reply{status: 429, file: "error_rate_limit.json", header: map[string]string{"Retry-After": "20"}})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, 20*time.Second, e.RetryAfter)
}

func TestErrorServer(t *testing.T) {
	s := newServer(t, reply{status: 500, file: "error_api.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindServer, e.Kind)
	assert.Equal(t, 500, e.StatusCode)
	assert.Zero(t, e.RetryAfter)
}

func TestErrorOverloaded(t *testing.T) {
	s := newServer(t, reply{status: 529, file: "error_overloaded.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindOverloaded, e.Kind)
	assert.Equal(t, 529, e.StatusCode)
	assert.True(t, e.Kind.Retryable())
	assert.Len(t, s.requests(), 1, "no SDK retries by default")
}

func TestErrorOverloadedByBodyType(t *testing.T) {
	s := newServer(t, reply{status: 500, file: "error_overloaded.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindOverloaded, e.Kind, "overloaded_error in the body wins over the status")
}

func TestErrorGatewayHTMLBody(t *testing.T) {
	s := newServer(t, reply{status: 502, file: "error_gateway.html", ctype: "text/html"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindServer, e.Kind, "a proxy's HTML error page still classifies by its status")
	assert.Equal(t, 502, e.StatusCode)
}

func TestErrorAuth(t *testing.T) {
	s := newServer(t, reply{status: 401, file: "error_auth.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindAuth, e.Kind)
	assert.False(t, e.Kind.Retryable())
}

func TestErrorBadRequest(t *testing.T) {
	s := newServer(t, reply{status: 400, file: "error_invalid_request.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindRequest, e.Kind)
	assert.Equal(t, 400, e.StatusCode)
}

func TestErrorConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	m := anthropic.New(client(t, "http://"+addr+"/"), "claude-sonnet-4-5", nil)
	e := generateErr(t, context.Background(), m)
	assert.Equal(t, anthropic.KindUnreachable, e.Kind)
	assert.Zero(t, e.StatusCode)
}

func TestErrorMalformedBody(t *testing.T) {
	s := newServer(t, reply{body: `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":`})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindMalformed, e.Kind)
	assert.Equal(t, 200, e.StatusCode)
}

func TestErrorNotJSON(t *testing.T) {
	s := newServer(t, reply{body: "<html>captive portal</html>", ctype: "text/html"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindMalformed, e.Kind)
}

func TestErrorNoContent(t *testing.T) {
	s := newServer(t, reply{body: `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"end_turn"}`})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, anthropic.KindMalformed, e.Kind)
}

func TestErrorDeadline(t *testing.T) {
	s := newServer(t, reply{hang: true})
	ctx := newManualDeadline()
	go func() {
		<-s.arrived
		ctx.expire()
	}()
	e := generateErr(t, ctx, newModel(t, s, nil))
	assert.Equal(t, anthropic.KindTimeout, e.Kind)
	assert.ErrorIs(t, e, context.DeadlineExceeded)
	assert.True(t, e.Kind.Retryable())
}

func TestErrorCanceled(t *testing.T) {
	s := newServer(t, reply{hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.arrived
		cancel()
	}()
	e := generateErr(t, ctx, newModel(t, s, nil))
	assert.Equal(t, anthropic.KindCanceled, e.Kind)
	assert.ErrorIs(t, e, context.Canceled)
}

func TestErrorBadToolSchema(t *testing.T) {
	s := newServer(t)
	m := newModel(t, s, nil)
	tests := []struct {
		name   string
		schema string
		reason string
	}{
		{"not JSON", `{"type":`, "a schema that does not parse cannot be sent"},
		{"array", `[1,2]`, "input_schema must be an object"},
		{"not an object type", `{"type":"string"}`, "input_schema's type is object"},
		{"bad required", `{"type":"object","required":"site_id"}`, "required is a list of names"},
		{"null", `null`, "null is not a schema object"},
		{"trailing", `{} {}`, "two values are not one schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Generate(context.Background(), react.Request{
				Messages: hello.Messages,
				Tools:    []react.ToolSpec{{Name: "x", InputSchema: json.RawMessage(tt.schema)}},
			})
			assert.Equal(t, anthropic.KindRequest, anthropic.KindOf(err), "Generate(schema %s) kind; %s", tt.schema, tt.reason)
		})
	}
	assert.Empty(t, s.requests(), "nothing is sent when the request cannot be built")
}

func TestErrorBadHistory(t *testing.T) {
	s := newServer(t)
	m := newModel(t, s, nil)
	tests := []struct {
		name   string
		msg    react.Message
		reason string
	}{
		{"unknown role", react.Message{Role: "robot", Content: "hi"}, "roles are a closed set"},
		{"tool result without id", react.Message{Role: react.RoleTool, Content: "x"}, "an unpaired result is rejected by the API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Generate(context.Background(), react.Request{Messages: []react.Message{tt.msg}})
			assert.Equal(t, anthropic.KindRequest, anthropic.KindOf(err), "%s", tt.reason)
		})
	}
	assert.Empty(t, s.requests())
}

func TestErrorMessage(t *testing.T) {
	e := &anthropic.Error{Kind: anthropic.KindRateLimited, StatusCode: 429, Err: errors.New("slow down")}
	assert.Equal(t, "anthropic: rate_limited (HTTP 429): slow down", e.Error())
	e = &anthropic.Error{Kind: anthropic.KindUnreachable, Err: errors.New("refused")}
	assert.Equal(t, "anthropic: unreachable: refused", e.Error())
}

func TestKindOf(t *testing.T) {
	assert.Equal(t, anthropic.KindUnknown, anthropic.KindOf(nil))
	assert.Equal(t, anthropic.KindUnknown, anthropic.KindOf(errors.New("x")))
	wrapped := errors.Join(errors.New("loop"), &anthropic.Error{Kind: anthropic.KindServer, Err: errors.New("x")})
	assert.Equal(t, anthropic.KindServer, anthropic.KindOf(wrapped))
}

func TestKindCompleteness(t *testing.T) {
	retryable := map[anthropic.Kind]bool{
		anthropic.KindRateLimited: true, anthropic.KindOverloaded: true, anthropic.KindServer: true,
		anthropic.KindUnreachable: true, anthropic.KindTimeout: true,
	}
	seen := map[string]bool{}
	for k := anthropic.KindUnknown; k <= anthropic.KindRequest; k++ {
		name := k.String()
		assert.NotContains(t, name, "Kind(", "Kind %d has no name", int(k))
		assert.False(t, seen[name], "name %q used twice", name)
		seen[name] = true

		text, err := k.MarshalText()
		require.NoError(t, err)
		var back anthropic.Kind
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, k, back, "round trip of %s", name)
		assert.Equal(t, retryable[k], k.Retryable(), "%s.Retryable()", name)
	}
	bad := anthropic.KindRequest + 1
	assert.Equal(t, "Kind(10)", bad.String())
	_, err := bad.MarshalText()
	assert.Error(t, err)
	assert.False(t, bad.Retryable())
	k := anthropic.KindServer
	assert.Error(t, k.UnmarshalText([]byte("teapot")))
	assert.Equal(t, anthropic.KindServer, k, "a rejected name leaves the value unchanged")
}

func TestErrorRefusedBeforeSending(t *testing.T) {
	m := anthropic.New(sdk.NewClient(option.WithBaseURL("http://[::1"), option.WithAPIKey("test-key")), "claude-sonnet-4-5", nil)
	e := generateErr(t, context.Background(), m)
	assert.Equal(t, anthropic.KindRequest, e.Kind, "a request the SDK cannot build: %v", e.Err)
	assert.Zero(t, e.StatusCode)
}
