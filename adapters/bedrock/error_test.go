package bedrock_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/bedrock"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
)

func errType(code string) map[string]string {
	return map[string]string{"X-Amzn-ErrorType": code + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}
}

func TestErrorResponses(t *testing.T) {
	throttled := errType("ThrottlingException")
	throttled["Retry-After"] = "3"
	cases := []chattest.ErrorCase{
		{Name: "throttled", Reply: reply{Status: 429, File: "error_throttling.json", Header: throttled},
			Want: modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: 3 * time.Second}, Reason: "ThrottlingException with its wait"},
		{Name: "throttled as 400", Reply: reply{Status: 400, File: "error_throttling.json", Header: errType("ThrottlingException")},
			Want: modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 400}, Reason: "the exception wins over the status"},
		{Name: "unavailable", Reply: reply{Status: 503, File: "error_unavailable.json", Header: errType("ServiceUnavailableException")},
			Want: modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 503}, Reason: "ServiceUnavailableException"},
		{Name: "model not ready", Reply: reply{Status: 429, File: "error_unavailable.json", Header: errType("ModelNotReadyException")},
			Want: modelerr.Error{Kind: modelerr.Overloaded, StatusCode: 429}, Reason: "a model still loading is an overload"},
		{Name: "internal", Reply: reply{Status: 500, File: "error_internal.json", Header: errType("InternalServerException")},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 500}, Reason: "InternalServerException"},
		{Name: "gateway HTML", Reply: reply{Status: 502, File: "error_gateway.html", ContentType: "text/html"},
			Want: modelerr.Error{Kind: modelerr.Server, StatusCode: 502}, Reason: "a proxy's HTML page"},
		{Name: "validation", Reply: reply{Status: 400, File: "error_validation.json", Header: errType("ValidationException")},
			Want: modelerr.Error{Kind: modelerr.Request, StatusCode: 400}, Reason: "the same request fails again"},
		{Name: "access denied", Reply: reply{Status: 403, File: "error_access.json", Header: errType("AccessDeniedException")},
			Want: modelerr.Error{Kind: modelerr.Auth, StatusCode: 403}, Reason: "no access to the model"},
		{Name: "deadline", Reply: reply{Hang: true}, Stop: chattest.StopDeadline, Want: modelerr.Error{Kind: modelerr.Timeout}, Reason: "deadline"},
		{Name: "canceled", Reply: reply{Hang: true}, Stop: chattest.StopCancel, Want: modelerr.Error{Kind: modelerr.Canceled}, Reason: "canceled"},
	}
	adapter.RunErrorCases(t, hello, append(cases,
		chattest.ErrorCase{Name: "cut-off body", Reply: reply{Body: `{"output":{"message":{"role":"assistant","content":[{"text":"hal`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "a 2xx body that does not decode"},
		chattest.ErrorCase{Name: "no message", Reply: reply{Body: `{"stopReason":"end_turn"}`},
			Want: modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, Reason: "no output message is no answer"},
	))
	t.Run("streamed", func(t *testing.T) { streaming.RunErrorCases(t, hello, cases) })
}

func TestErrorKeepsSDKError(t *testing.T) {
	s := adapter.NewServer(t, reply{Status: 429, File: "error_throttling.json", Header: errType("ThrottlingException")})
	e := chattest.GenerateErr(t, context.Background(), newModel(t, s, &bedrock.Options{NoStream: true}), hello)
	var te *types.ThrottlingException
	require.ErrorAs(t, e, &te, "the SDK's exception stays reachable")
	assert.Contains(t, te.ErrorMessage(), "Too many requests")
}

func TestErrorNoResponse(t *testing.T) {
	adapter.RunNoResponseCases(t, hello)
}

// MaxRetries lets the SDK retry inside one call.
func TestMaxRetries(t *testing.T) {
	s := adapter.NewServer(t, reply{Status: 500, File: "error_internal.json", Header: errType("InternalServerException")}, reply{File: "converse_text.json"})
	got, err := newModel(t, s, &bedrock.Options{NoStream: true, MaxRetries: 1}).Generate(context.Background(), hello)
	require.NoError(t, err)
	assert.Equal(t, "Done.", got.Text)
	assert.Len(t, s.Requests(), 2)
}
