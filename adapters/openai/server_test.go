package openai_test

import (
	"fmt"
	"net/http"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply is one canned HTTP response.
type reply = chattest.Reply

// adapter describes this adapter to the shared scenarios of chattest.
var adapter = chattest.Adapter{
	Provider: "openai",
	Endpoint: chattest.Endpoint{
		Path: "/v1/chat/completions",
		Check: func(r *http.Request) error {
			if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
				return fmt.Errorf("Authorization = %q; want %q", got, "Bearer test-key")
			}
			return nil
		},
		Exhausted: `{"error":{"message":"no canned reply left","type":"server_error"}}`,
	},
	ModelName: "gpt-4.1",
	NewModel: func(t testing.TB, serverURL string) react.Model {
		// The shared scenarios answer with JSON bodies; streaming has its
		// own tests (stream_test.go).
		return openai.New(client(t, serverURL+"/v1/"), "gpt-4.1", &openai.Options{NoStream: true})
	},
	Valid:      validOpenAIHistory,
	ToolNames:  toolNames,
	ToolResult: toolMessage,
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
func newModel(t testing.TB, s *chattest.Server, opts *openai.Options) *openai.Model {
	t.Helper()
	return openai.New(client(t, s.URL+"/v1/"), "gpt-4.1", opts)
}
