package openairesponses_test

import (
	"context"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openairesponses"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
)

func TestErrorResponses(t *testing.T) {
	cases := []chattest.ErrorCase{
		{Name: "rate limited", Reply: reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After-Ms": "250"}},
			Want: modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: 250 * time.Millisecond}, Reason: "retry-after-ms"},
		{Name: "server error", Reply: reply{Status: 500, File: "error_server.json"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 500}, Reason: "5xx"},
		{Name: "overloaded", Reply: reply{Status: 503, File: "error_overloaded.json"},
			Want: modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 503}, Reason: "the engine is overloaded"},
		{Name: "gateway HTML", Reply: reply{Status: 502, File: "error_gateway.html", ContentType: "text/html"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 502}, Reason: "a proxy's HTML page"},
		{Name: "auth", Reply: reply{Status: 401, File: "error_auth.json"},
			Want: modelerr.Error{Kind: modelerr.Auth, StatusCode: 401}, Reason: "a bad key"},
		{Name: "context too long", Reply: reply{Status: 400, File: "error_context_length.json"},
			Want: modelerr.Error{Kind: modelerr.Request, StatusCode: 400}, Reason: "the same request fails again"},
		{Name: "deadline", Reply: reply{Hang: true}, Stop: chattest.StopDeadline, Want: modelerr.Error{Kind: modelerr.Timeout}, Reason: "deadline"},
		{Name: "canceled", Reply: reply{Hang: true}, Stop: chattest.StopCancel, Want: modelerr.Error{Kind: modelerr.Canceled}, Reason: "canceled"},
	}
	adapter.RunErrorCases(t, hello, append(cases,
		chattest.ErrorCase{Name: "failed response", Reply: reply{File: "response_failed.json"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 200}, Reason: "status failed with a server_error: the server's failure, retryable"},
		chattest.ErrorCase{Name: "cut-off body", Reply: reply{Body: `{"id":"resp_1","status":"completed","output":[`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a 2xx body that does not decode"},
		chattest.ErrorCase{Name: "no output", Reply: reply{Body: `{"id":"resp_1","status":"completed"}`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a response without output is no answer"},
		chattest.ErrorCase{Name: "in progress", Reply: reply{Body: `{"id":"resp_1","status":"in_progress","output":[]}`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a background response is not an answer of a turn"},
	))
	t.Run("streamed", func(t *testing.T) {
		streaming.RunErrorCases(t, hello, append(cases,
			chattest.ErrorCase{Name: "failed response", Reply: sse(t, "response_failed.json"),
				Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 200}, Reason: "response.failed in the stream"}))
	})
}

func TestErrorKeepsSDKError(t *testing.T) {
	s := adapter.NewServer(t, reply{Status: 429, File: "error_rate_limit.json"})
	e := chattest.GenerateErr(t, context.Background(), newModel(t, s, &openairesponses.Options{NoStream: true}), hello)
	var apiErr *oai.Error
	require.ErrorAs(t, e, &apiErr)
	assert.Equal(t, "rate_limit_exceeded", apiErr.Code)
}

func TestErrorNoResponse(t *testing.T) {
	bad := openairesponses.New(oai.NewClient(option.WithBaseURL("http://[::1"), option.WithAPIKey("k")), "gpt-5", &openairesponses.Options{NoStream: true})
	adapter.RunNoResponseCases(t, hello, chattest.NoResponseCase{Name: "bad base URL", Model: bad, Req: hello, Kind: modelerr.Request, Reason: "the SDK cannot build the request"})
}
