package openai_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

var hello = react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}, Tools: siteTools}

// generateErr runs one Generate of req and returns its *modelerr.Error.
func generateErr(t *testing.T, ctx context.Context, m *openai.Model, req react.Request) *modelerr.Error {
	t.Helper()
	got, err := m.Generate(ctx, req)
	require.Error(t, err, "Generate() = %+v, nil; want an error", got)
	assert.Equal(t, react.Response{}, got, "a failed Generate returns no partial turn")
	var e *modelerr.Error
	require.ErrorAs(t, err, &e)
	return e
}

// TestErrorResponses: every failure the server causes reaches the host
// as a classified *modelerr.Error, never as a partial turn. The status,
// headers and error type come out of the SDK's real error.
func TestErrorResponses(t *testing.T) {
	tests := []struct {
		name   string
		reply  reply
		stop   stopBy         // how the caller ends a hanging request
		want   modelerr.Error // Kind, StatusCode and RetryAfter are compared
		reason string
	}{
		{"rate limited", reply{status: 429, file: "error_rate_limit.json", header: map[string]string{"Retry-After-Ms": "120", "Retry-After": "1"}},
			stopNever, modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: 120 * time.Millisecond},
			"OpenAI's retry-after-ms reaches the shared rules and wins over retry-after"},
		{"server error", reply{status: 500, file: "error_server.json"},
			stopNever, modelerr.Error{Kind: modelerr.Server, StatusCode: 500}, "5xx, no wait asked"},
		{"overloaded", reply{status: 503, file: "error_overloaded.json"},
			stopNever, modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 503}, "OpenAI's engine is overloaded"},
		{"overloaded by type", reply{status: 500, body: `{"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":null}}`},
			stopNever, modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 500},
			"the SDK error's type reaches the shared rules: overloaded_error wins over 500"},
		{"gateway HTML", reply{status: 502, file: "error_gateway.html", ctype: "text/html"},
			stopNever, modelerr.Error{Kind: modelerr.Server, StatusCode: 502},
			"a proxy's HTML error page still classifies by its status"},
		{"auth", reply{status: 401, file: "error_auth.json"},
			stopNever, modelerr.Error{Kind: modelerr.Auth, StatusCode: 401}, "a bad key"},
		{"context too long", reply{status: 400, file: "error_context_length.json"},
			stopNever, modelerr.Error{Kind: modelerr.Request, StatusCode: 400}, "the same request fails again"},
		{"cut-off body", reply{body: `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":`},
			stopNever, modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, "a 2xx body that does not decode"},
		{"not JSON", reply{body: "<html>captive portal</html>", ctype: "text/html"},
			stopNever, modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, "a captive portal answers 200"},
		{"no choices", reply{body: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[]}`},
			stopNever, modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, "a completion without a choice is no answer"},
		{"deadline", reply{hang: true},
			stopDeadline, modelerr.Error{Kind: modelerr.Timeout}, "the caller's deadline while the server holds the request"},
		{"canceled", reply{hang: true},
			stopCancel, modelerr.Error{Kind: modelerr.Canceled}, "the caller canceled while the server holds the request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.reply)
			ctx := tt.stop.context(s)
			e := generateErr(t, ctx, newModel(t, s, nil), hello)
			got := modelerr.Error{Kind: e.Kind, StatusCode: e.StatusCode, RetryAfter: e.RetryAfter}
			assert.Equal(t, tt.want, got, "Generate() = %v; want %s, HTTP %d, wait %v: %s", e, tt.want.Kind, tt.want.StatusCode, tt.want.RetryAfter, tt.reason)
			assert.Equal(t, "openai", e.Provider)
			if err := ctx.Err(); err != nil {
				assert.ErrorIs(t, e, err, "errors.Is sees the context's error through *modelerr.Error")
			}
			assert.Len(t, s.requests(), 1, "no SDK retries by default")
		})
	}
}

func TestErrorKeepsSDKError(t *testing.T) {
	s := newServer(t, reply{status: 429, file: "error_rate_limit.json", header: map[string]string{"Retry-After": "1"}})
	e := generateErr(t, context.Background(), newModel(t, s, nil), hello)
	var apiErr *oai.Error
	require.ErrorAs(t, e, &apiErr, "the SDK's error stays reachable")
	assert.Equal(t, "rate_limit_exceeded", apiErr.Code)
	assert.True(t, strings.HasPrefix(e.Error(), "openai: rate_limited (HTTP 429): "), "Error() = %q; want the provider, kind and status first", e.Error())
}

// TestErrorNoResponse: a request the adapter or the SDK cannot build is
// modelerr.Request, one that finds no server is modelerr.Unreachable; no
// status either way, and nothing reaches the server.
func TestErrorNoResponse(t *testing.T) {
	s := newServer(t)
	m := newModel(t, s, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/v1/"
	require.NoError(t, ln.Close())
	badURL := openai.New(oai.NewClient(option.WithBaseURL("http://[::1"), option.WithAPIKey("test-key")), "gpt-4.1", nil)
	withSchema := func(schema string) react.Request {
		return react.Request{Messages: hello.Messages, Tools: []react.ToolSpec{{Name: "x", InputSchema: json.RawMessage(schema)}}}
	}
	withMessage := func(msg react.Message) react.Request { return react.Request{Messages: []react.Message{msg}} }

	tests := []struct {
		name   string
		model  *openai.Model
		req    react.Request
		kind   modelerr.Kind
		reason string
	}{
		{"schema not JSON", m, withSchema(`{"type":`), modelerr.Request, "a schema that does not parse cannot be sent"},
		{"schema array", m, withSchema(`[1,2]`), modelerr.Request, "parameters must be an object"},
		{"schema null", m, withSchema(`null`), modelerr.Request, "null is not a schema object"},
		{"schema trailing", m, withSchema(`{} {}`), modelerr.Request, "two values are not one schema"},
		{"unknown role", m, withMessage(react.Message{Role: "robot", Content: "hi"}), modelerr.Request, "roles are a closed set"},
		{"tool result without id", m, withMessage(react.Message{Role: react.RoleTool, Content: "x"}), modelerr.Request,
			"an unpaired result is rejected by the API"},
		{"bad base URL", badURL, hello, modelerr.Request, "the SDK cannot build the request"},
		{"connection refused", openai.New(client(t, closed), "gpt-4.1", nil), hello, modelerr.Unreachable, "no server listens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := generateErr(t, context.Background(), tt.model, tt.req)
			assert.Equal(t, tt.kind, e.Kind, "Generate() kind = %s; want %s: %s (%v)", e.Kind, tt.kind, tt.reason, e)
			assert.Zero(t, e.StatusCode, "no response, no status")
		})
	}
	assert.Empty(t, s.requests(), "nothing reaches the server")
}
