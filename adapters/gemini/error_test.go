package gemini_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/reactguard/reactguard/adapters/gemini"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
)

// Every failure a Gemini server causes (the bodies are the API's) reaches
// the host as a classified *modelerr.Error, answered or streamed.
func TestErrorResponses(t *testing.T) {
	cases := []chattest.ErrorCase{
		{Name: "rate limited", Reply: reply{Status: 429, File: "error_rate_limit.json"},
			Want:   modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: 27 * time.Second},
			Reason: "RESOURCE_EXHAUSTED with google.rpc.RetryInfo's retryDelay as the wait"},
		{Name: "overloaded", Reply: reply{Status: 503, File: "error_overloaded.json"},
			Want: modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 503}, Reason: "UNAVAILABLE: the model is overloaded"},
		{Name: "server error", Reply: reply{Status: 500, File: "error_server.json"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 500}, Reason: "INTERNAL"},
		{Name: "gateway HTML", Reply: reply{Status: 502, File: "error_gateway.html", ContentType: "text/html"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 502}, Reason: "a proxy's HTML page classifies by its status"},
		{Name: "bad key", Reply: reply{Status: 400, File: "error_auth.json"},
			Want: modelerr.Error{Kind: modelerr.Request, StatusCode: 400}, Reason: "the API reports a bad key as INVALID_ARGUMENT 400"},
		{Name: "permission", Reply: reply{Status: 403, File: "error_permission.json"},
			Want: modelerr.Error{Kind: modelerr.Auth, StatusCode: 403}, Reason: "PERMISSION_DENIED"},
		{Name: "deadline", Reply: reply{Hang: true}, Stop: chattest.StopDeadline,
			Want: modelerr.Error{Kind: modelerr.Timeout}, Reason: "the caller's deadline while the server holds the request"},
		{Name: "canceled", Reply: reply{Hang: true}, Stop: chattest.StopCancel,
			Want: modelerr.Error{Kind: modelerr.Canceled}, Reason: "the caller canceled"},
	}
	adapter.RunErrorCases(t, hello, append(cases,
		chattest.ErrorCase{Name: "cut-off body", Reply: reply{Body: `{"candidates":[{"content":{"parts":[{"text":"hal`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a 2xx body that does not decode"},
		chattest.ErrorCase{Name: "candidates not a list", Reply: reply{Body: `{"candidates":""}`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "the SDK's converter panics on this body: the adapter answers Malformed"},
		chattest.ErrorCase{Name: "no candidate", Reply: reply{Body: `{"responseId":"r"}`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "no candidate and no block reason is no answer"},
	))
	t.Run("streamed", func(t *testing.T) { streaming.RunErrorCases(t, hello, cases) })
}

func TestErrorKeepsSDKError(t *testing.T) {
	s := adapter.NewServer(t, reply{Status: 429, File: "error_rate_limit.json"})
	e := chattest.GenerateErr(t, context.Background(), newModel(t, s, &gemini.Options{NoStream: true}), hello)
	var apiErr genai.APIError
	require.ErrorAs(t, e, &apiErr, "the SDK's error stays reachable")
	assert.Equal(t, "RESOURCE_EXHAUSTED", apiErr.Status)
}

// A request the adapter cannot build is modelerr.Request; one that finds
// no server is modelerr.Unreachable; nothing reaches the server.
func TestErrorNoResponse(t *testing.T) {
	adapter.RunNoResponseCases(t, hello)
}
