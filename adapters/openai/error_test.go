package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/react"
)

var hello = react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}, Tools: siteTools}

// generateErr runs one Generate against s and returns its *openai.Error.
func generateErr(t *testing.T, ctx context.Context, m *openai.Model) *openai.Error {
	t.Helper()
	got, err := m.Generate(ctx, hello)
	require.Error(t, err, "Generate() = %+v, nil; want an error", got)
	assert.Equal(t, react.Response{}, got, "a failed Generate returns no partial turn")
	var e *openai.Error
	require.ErrorAs(t, err, &e)
	return e
}

func TestErrorRateLimited(t *testing.T) {
	s := newServer(t, reply{status: 429, file: "error_rate_limit.json",
		header: map[string]string{"Retry-After-Ms": "120", "Retry-After": "1"}})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindRateLimited, e.Kind)
	assert.Equal(t, 429, e.StatusCode)
	assert.Equal(t, 120*time.Millisecond, e.RetryAfter, "retry-after-ms wins over retry-after")
	assert.True(t, e.Kind.Retryable())
	var apiErr *oai.Error
	require.ErrorAs(t, e, &apiErr, "the SDK's error stays reachable")
	assert.Equal(t, "rate_limit_exceeded", apiErr.Code)
	assert.Len(t, s.requests(), 1, "no SDK retries by default")
}

func TestErrorRateLimitedRetryAfterSeconds(t *testing.T) {
	s := newServer(t, reply{status: 429, file: "error_rate_limit.json", header: map[string]string{"Retry-After": "20"}})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, 20*time.Second, e.RetryAfter)
}

func TestErrorServer(t *testing.T) {
	s := newServer(t, reply{status: 500, file: "error_server.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindServer, e.Kind)
	assert.Equal(t, 500, e.StatusCode)
	assert.Zero(t, e.RetryAfter)
}

func TestErrorOverloaded(t *testing.T) {
	s := newServer(t, reply{status: 503, file: "error_overloaded.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindOverloaded, e.Kind)
}

func TestErrorGatewayHTMLBody(t *testing.T) {
	s := newServer(t, reply{status: 502, file: "error_gateway.html", ctype: "text/html"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindServer, e.Kind, "a proxy's HTML error page still classifies by its status")
	assert.Equal(t, 502, e.StatusCode)
}

func TestErrorAuth(t *testing.T) {
	s := newServer(t, reply{status: 401, file: "error_auth.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindAuth, e.Kind)
	assert.False(t, e.Kind.Retryable())
}

func TestErrorBadRequest(t *testing.T) {
	s := newServer(t, reply{status: 400, file: "error_context_length.json"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindRequest, e.Kind)
	assert.Equal(t, 400, e.StatusCode)
}

func TestErrorConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	m := openai.New(client(t, "http://"+addr+"/v1/"), "gpt-4.1", nil)
	e := generateErr(t, context.Background(), m)
	assert.Equal(t, openai.KindUnreachable, e.Kind)
	assert.Zero(t, e.StatusCode)
}

func TestErrorMalformedBody(t *testing.T) {
	s := newServer(t, reply{body: `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":`})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindMalformed, e.Kind)
	assert.Equal(t, 200, e.StatusCode)
}

func TestErrorNotJSON(t *testing.T) {
	s := newServer(t, reply{body: "<html>captive portal</html>", ctype: "text/html"})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindMalformed, e.Kind)
}

func TestErrorNoChoices(t *testing.T) {
	s := newServer(t, reply{body: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[]}`})
	e := generateErr(t, context.Background(), newModel(t, s, nil))
	assert.Equal(t, openai.KindMalformed, e.Kind)
}

func TestErrorDeadline(t *testing.T) {
	s := newServer(t, reply{hang: true})
	ctx := newManualDeadline()
	go func() {
		<-s.arrived
		ctx.expire()
	}()
	e := generateErr(t, ctx, newModel(t, s, nil))
	assert.Equal(t, openai.KindTimeout, e.Kind)
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
	assert.Equal(t, openai.KindCanceled, e.Kind)
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
		{"array", `[1,2]`, "parameters must be an object"},
		{"null", `null`, "null is not a schema object"},
		{"trailing", `{} {}`, "two values are not one schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Generate(context.Background(), react.Request{
				Messages: hello.Messages,
				Tools:    []react.ToolSpec{{Name: "x", InputSchema: json.RawMessage(tt.schema)}},
			})
			assert.Equal(t, openai.KindRequest, openai.KindOf(err), "Generate(schema %s) kind; %s", tt.schema, tt.reason)
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
			assert.Equal(t, openai.KindRequest, openai.KindOf(err), "%s", tt.reason)
		})
	}
	assert.Empty(t, s.requests())
}

func TestErrorMessage(t *testing.T) {
	e := &openai.Error{Kind: openai.KindRateLimited, StatusCode: 429, Err: errors.New("slow down")}
	assert.Equal(t, "openai: rate_limited (HTTP 429): slow down", e.Error())
	e = &openai.Error{Kind: openai.KindUnreachable, Err: errors.New("refused")}
	assert.Equal(t, "openai: unreachable: refused", e.Error())
}

func TestKindOf(t *testing.T) {
	assert.Equal(t, openai.KindUnknown, openai.KindOf(nil))
	assert.Equal(t, openai.KindUnknown, openai.KindOf(errors.New("x")))
	wrapped := errors.Join(errors.New("loop"), &openai.Error{Kind: openai.KindServer, Err: errors.New("x")})
	assert.Equal(t, openai.KindServer, openai.KindOf(wrapped))
}

func TestKindCompleteness(t *testing.T) {
	retryable := map[openai.Kind]bool{
		openai.KindRateLimited: true, openai.KindOverloaded: true, openai.KindServer: true,
		openai.KindUnreachable: true, openai.KindTimeout: true,
	}
	seen := map[string]bool{}
	for k := openai.KindUnknown; k <= openai.KindRequest; k++ {
		name := k.String()
		assert.NotContains(t, name, "Kind(", "Kind %d has no name", int(k))
		assert.False(t, seen[name], "name %q used twice", name)
		seen[name] = true

		text, err := k.MarshalText()
		require.NoError(t, err)
		var back openai.Kind
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, k, back, "round trip of %s", name)
		assert.Equal(t, retryable[k], k.Retryable(), "%s.Retryable()", name)
	}
	bad := openai.KindRequest + 1
	assert.Equal(t, "Kind(10)", bad.String())
	_, err := bad.MarshalText()
	assert.Error(t, err)
	assert.False(t, bad.Retryable())
	k := openai.KindServer
	assert.Error(t, k.UnmarshalText([]byte("teapot")))
	assert.Equal(t, openai.KindServer, k, "a rejected name leaves the value unchanged")
}

func TestErrorRefusedBeforeSending(t *testing.T) {
	m := openai.New(oai.NewClient(option.WithBaseURL("http://[::1"), option.WithAPIKey("test-key")), "gpt-4.1", nil)
	e := generateErr(t, context.Background(), m)
	assert.Equal(t, openai.KindRequest, e.Kind, "a request the SDK cannot build: %v", e.Err)
	assert.Zero(t, e.StatusCode)
}
