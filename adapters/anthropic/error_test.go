package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// TestErrorResponses: every failure the Messages API causes (its
// error bodies, its 529) reaches the host as a classified
// *modelerr.Error; the status, headers and error type come out of the
// SDK's real error.
func TestErrorResponses(t *testing.T) {
	adapter.RunErrorCases(t, hello, []chattest.ErrorCase{
		{Name: "rate limited", Reply: reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "20"}},
			Want:   modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: 20 * time.Second},
			Reason: "Anthropic's retry-after in seconds reaches the shared rules"},
		{Name: "rate limited until a date", Reply: reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{
			"Date": "Wed, 21 Oct 2015 07:28:00 GMT", "Retry-After": "Wed, 21 Oct 2015 07:29:00 GMT"}},
			Want:   modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: time.Minute},
			Reason: "an HTTP-date is measured from the response's own Date header"},
		{Name: "rate limit by type", Reply: reply{Status: 400, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Too many tokens"}}`},
			Want:   modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 400},
			Reason: "the SDK error's type reaches the shared rules: rate_limit_error wins over 400"},
		{Name: "api error", Reply: reply{Status: 500, File: "error_api.json"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 500}, Reason: "5xx, no wait asked"},
		{Name: "overloaded", Reply: reply{Status: 529, File: "error_overloaded.json"},
			Want: modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 529}, Reason: "Anthropic's overloaded status"},
		{Name: "overloaded by type", Reply: reply{Status: 500, File: "error_overloaded.json"},
			Want:   modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 500},
			Reason: "overloaded_error in the body wins over the status"},
		{Name: "gateway HTML", Reply: reply{Status: 502, File: "error_gateway.html", ContentType: "text/html"},
			Want:   modelerr.Error{Kind: modelerr.Server, StatusCode: 502},
			Reason: "a proxy's HTML error page still classifies by its status"},
		{Name: "auth", Reply: reply{Status: 401, File: "error_auth.json"},
			Want: modelerr.Error{Kind: modelerr.Auth, StatusCode: 401}, Reason: "a bad key"},
		{Name: "invalid request", Reply: reply{Status: 400, File: "error_invalid_request.json"},
			Want: modelerr.Error{Kind: modelerr.Request, StatusCode: 400}, Reason: "the same request fails again"},
		{Name: "cut-off body", Reply: reply{Body: `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a 2xx body that does not decode"},
		{Name: "not JSON", Reply: reply{Body: "<html>captive portal</html>", ContentType: "text/html"},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a captive portal answers 200"},
		{Name: "no content", Reply: reply{Body: `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"end_turn"}`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a message without content is no answer"},
		{Name: "deadline", Reply: reply{Hang: true},
			Stop: chattest.StopDeadline, Want: modelerr.Error{Kind: modelerr.Timeout}, Reason: "the caller's deadline while the server holds the request"},
		{Name: "canceled", Reply: reply{Hang: true},
			Stop: chattest.StopCancel, Want: modelerr.Error{Kind: modelerr.Canceled}, Reason: "the caller canceled while the server holds the request"},
	})
}

func TestErrorKeepsSDKError(t *testing.T) {
	s := adapter.NewServer(t, reply{Status: 529, File: "error_overloaded.json", Header: map[string]string{"Retry-After": "1"}})
	e := chattest.GenerateErr(t, context.Background(), newModel(t, s, nil), hello)
	var apiErr *sdk.Error
	require.ErrorAs(t, e, &apiErr, "the SDK's error stays reachable")
	assert.Equal(t, "overloaded_error", string(apiErr.Type()))
	assert.True(t, strings.HasPrefix(e.Error(), "anthropic: overloaded (HTTP 529): "), "Error() = %q; want the provider, kind and status first", e.Error())
}

// TestErrorNoResponse: a request the adapter or the SDK cannot build is
// modelerr.Request, one that finds no server is modelerr.Unreachable; no
// status either way, and nothing reaches the server.
func TestErrorNoResponse(t *testing.T) {
	badURL := anthropic.New(sdk.NewClient(option.WithBaseURL("http://[::1"), option.WithAPIKey("test-key")), "claude-sonnet-4-5", nil)
	withSchema := func(schema string) react.Request {
		return react.Request{Messages: hello.Messages, Tools: []react.ToolSpec{{Name: "x", InputSchema: json.RawMessage(schema)}}}
	}
	adapter.RunNoResponseCases(t, hello,
		chattest.NoResponseCase{Name: "schema not an object type", Req: withSchema(`{"type":"string"}`), Kind: modelerr.Request,
			Reason: "input_schema's type is object"},
		chattest.NoResponseCase{Name: "schema bad required", Req: withSchema(`{"type":"object","required":"site_id"}`), Kind: modelerr.Request,
			Reason: "required is a list of names"},
		chattest.NoResponseCase{Name: "bad base URL", Model: badURL, Req: hello, Kind: modelerr.Request, Reason: "the SDK cannot build the request"},
	)
}
