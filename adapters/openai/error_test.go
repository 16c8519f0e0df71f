package openai_test

import (
	"context"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
)

// TestErrorResponses: every failure a Chat Completions server causes
// (the bodies are OpenAI's) reaches the host as a classified
// *modelerr.Error; the status, headers and error type come out of the
// SDK's real error.
func TestErrorResponses(t *testing.T) {
	adapter.RunErrorCases(t, hello, []chattest.ErrorCase{
		{Name: "rate limited", Reply: reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After-Ms": "120", "Retry-After": "1"}},
			Want:   modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: 120 * time.Millisecond},
			Reason: "OpenAI's retry-after-ms reaches the shared rules and wins over retry-after"},
		{Name: "server error", Reply: reply{Status: 500, File: "error_server.json"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 500}, Reason: "5xx, no wait asked"},
		{Name: "overloaded", Reply: reply{Status: 503, File: "error_overloaded.json"},
			Want: modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 503}, Reason: "OpenAI's engine is overloaded"},
		{Name: "overloaded by type", Reply: reply{Status: 500, Body: `{"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":null}}`},
			Want:   modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 500},
			Reason: "the SDK error's type reaches the shared rules: overloaded_error wins over 500"},
		{Name: "gateway HTML", Reply: reply{Status: 502, File: "error_gateway.html", ContentType: "text/html"},
			Want:   modelerr.Error{Kind: modelerr.Server, StatusCode: 502},
			Reason: "a proxy's HTML error page still classifies by its status"},
		{Name: "auth", Reply: reply{Status: 401, File: "error_auth.json"},
			Want: modelerr.Error{Kind: modelerr.Auth, StatusCode: 401}, Reason: "a bad key"},
		{Name: "context too long", Reply: reply{Status: 400, File: "error_context_length.json"},
			Want: modelerr.Error{Kind: modelerr.Request, StatusCode: 400}, Reason: "the same request fails again"},
		{Name: "cut-off body", Reply: reply{Body: `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a 2xx body that does not decode"},
		{Name: "not JSON", Reply: reply{Body: "<html>captive portal</html>", ContentType: "text/html"},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a captive portal answers 200"},
		{Name: "no choices", Reply: reply{Body: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[]}`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a completion without a choice is no answer"},
		{Name: "deadline", Reply: reply{Hang: true},
			Stop: chattest.StopDeadline, Want: modelerr.Error{Kind: modelerr.Timeout}, Reason: "the caller's deadline while the server holds the request"},
		{Name: "canceled", Reply: reply{Hang: true},
			Stop: chattest.StopCancel, Want: modelerr.Error{Kind: modelerr.Canceled}, Reason: "the caller canceled while the server holds the request"},
	})
}

func TestErrorKeepsSDKError(t *testing.T) {
	s := adapter.NewServer(t, reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "1"}})
	e := chattest.GenerateErr(t, context.Background(), newModel(t, s, nil), hello)
	var apiErr *oai.Error
	require.ErrorAs(t, e, &apiErr, "the SDK's error stays reachable")
	assert.Equal(t, "rate_limit_exceeded", apiErr.Code)
	assert.True(t, strings.HasPrefix(e.Error(), "openai: rate_limited (HTTP 429): "), "Error() = %q; want the provider, kind and status first", e.Error())
}

// TestErrorNoResponse: a request the adapter or the SDK cannot build is
// modelerr.Request, one that finds no server is modelerr.Unreachable; no
// status either way, and nothing reaches the server.
func TestErrorNoResponse(t *testing.T) {
	badURL := openai.New(oai.NewClient(option.WithBaseURL("http://[::1"), option.WithAPIKey("test-key")), "gpt-4.1", nil)
	adapter.RunNoResponseCases(t, hello,
		chattest.NoResponseCase{Name: "bad base URL", Model: badURL, Req: hello, Kind: modelerr.Request, Reason: "the SDK cannot build the request"})
}
