package anthropic_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply is one canned HTTP response.
type reply = chattest.Reply

// adapter describes this adapter to the shared scenarios of chattest.
var adapter = chattest.Adapter{
	Provider: "anthropic",
	Endpoint: chattest.Endpoint{
		Path: "/v1/messages",
		Check: func(r *http.Request) error {
			// This SDK version sends the key as a bearer token; older ones
			// used x-api-key. Either is fine for the API.
			if got, alt := r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"); got != "Bearer test-key" && alt != "test-key" {
				return fmt.Errorf("Authorization = %q, X-Api-Key = %q; want the key %q", got, alt, "test-key")
			}
			if r.Header.Get("Anthropic-Version") == "" {
				return errors.New("no anthropic-version header")
			}
			return nil
		},
		Exhausted: `{"type":"error","error":{"type":"api_error","message":"no canned reply left"}}`,
	},
	ModelName: "claude-sonnet-4-5",
	NewModel: func(t testing.TB, serverURL string) react.Model {
		// The shared scenarios answer with JSON bodies; streaming has its
		// own tests (stream_test.go).
		return anthropic.New(client(t, serverURL+"/"), "claude-sonnet-4-5", &anthropic.Options{NoStream: true})
	},
	Valid:      validAnthropicHistory,
	ToolNames:  toolNames,
	ToolResult: toolResultText,
}

// client returns an SDK client for baseURL with its own transport, closed
// when the test ends, and no SDK retries.
func client(t testing.TB, baseURL string) sdk.Client {
	t.Helper()
	return sdk.NewClient(
		option.WithBaseURL(baseURL),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(chattest.HTTPClient(t)),
	)
}

// newModel returns a Model talking to s.
func newModel(t testing.TB, s *chattest.Server, opts *anthropic.Options) *anthropic.Model {
	t.Helper()
	return anthropic.New(client(t, s.URL+"/"), "claude-sonnet-4-5", opts)
}
