package gemini_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"cloud.google.com/go/auth/httptransport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/reactguard/reactguard/adapters/gemini"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// The Vertex AI backend's paths for modelName in project p, region
// europe-west4: the SDK sends the same contents to another URL, with a
// bearer token instead of an API key.
const (
	vertexBase   = "/v1beta1/projects/p/locations/europe-west4/publishers/google/models/" + modelName
	vertexPath   = vertexBase + ":generateContent"
	vertexStream = vertexBase + ":streamGenerateContent"
)

func checkToken(r *http.Request) error {
	if got := r.Header.Get("Authorization"); got != "Bearer t" {
		return fmt.Errorf("authorization = %q; want the credentials' bearer token", got)
	}
	if got := r.Header.Get("X-Goog-Api-Key"); got != "" {
		return fmt.Errorf("x-goog-api-key = %q; want none on Vertex AI", got)
	}
	return nil
}

// vertexClient returns an SDK client of the Vertex AI backend for
// baseURL, with credentials whose token is "t".
func vertexClient(t testing.TB, baseURL string) *genai.Client {
	t.Helper()
	hc, creds := chattest.HTTPClient(t), fakeCredentials()
	// The SDK adds no credentials to a client of the caller's: the
	// caller does, as a host with its own HTTP client would.
	require.NoError(t, httptransport.AddAuthorizationMiddleware(hc, creds))
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		Backend: genai.BackendVertexAI, Project: "p", Location: "europe-west4",
		Credentials: creds, HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL + "/"},
	})
	require.NoError(t, err)
	return c
}

// vertex and vertexStreaming describe the adapter on the Vertex AI
// backend to the shared scenarios, answered and streamed.
var (
	vertex = chattest.Adapter{
		Provider: "gemini",
		Endpoint: chattest.Endpoint{Path: vertexPath, Check: checkToken, Exhausted: exhausted},
		NewModel: func(t testing.TB, serverURL string) react.Model {
			return gemini.New(vertexClient(t, serverURL), modelName, &gemini.Options{NoStream: true})
		},
		Valid:      validHistory,
		ToolNames:  toolNames,
		ToolResult: toolResult,
	}
	vertexStreaming = chattest.Adapter{
		Provider: "gemini",
		Endpoint: chattest.Endpoint{Path: vertexStream, Check: checkToken, Exhausted: exhausted},
		NewModel: func(t testing.TB, serverURL string) react.Model {
			return collected{gemini.New(vertexClient(t, serverURL), modelName, nil)}
		},
		Valid:      validHistory,
		ToolNames:  toolNames,
		ToolResult: toolResult,
		Serve:      streaming.Serve,
	}
)

// The whole approval loop on the Vertex AI backend, answered and
// streamed: the SDK's Vertex converters carry the same contents (call
// ids, thought signatures, the system instruction, the tools' JSON
// schemas) to the regional path with the credentials' token; the
// cut-off rule, a rate limit with RetryInfo's wait and the reported
// endpoint hold there too.
func TestVertexAI(t *testing.T) {
	s := vertex.RunApprovalLoop(t, "run-vertex", loopCalls)
	model := contents(s.Requests()[1])[1]
	assert.Equal(t, "c2lnbmF0dXJlLTE=", parts(model)[0]["thoughtSignature"], "the signature travels with its part")
	fc, _ := parts(model)[0]["functionCall"].(map[string]any)
	assert.Equal(t, "fc_list_1", fc["id"], "the call's id goes back on Vertex AI too")
	tools, _ := s.Requests()[0]["tools"].([]any)
	require.NotEmpty(t, tools)
	decl := tools[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
	assert.Contains(t, decl, "parametersJsonSchema", "the schema is sent verbatim")

	vertexStreaming.RunApprovalLoop(t, "run-vertex-stream", loopCalls)
	vertex.RunCutOffLoop(t, reply{File: "response_cut_off.json"}, reply{File: "loop_5_finish.json"}, "fc_cut_1", nil)
	vertexStreaming.RunCutOffLoop(t, sse(t, "response_cut_off.json"), sse(t, "loop_5_finish.json"), "fc_cut_1", nil)
	vertex.RunModelErrorLoop(t, reply{Status: 429, File: "error_rate_limit.json"})

	srv := vertex.NewServer(t, reply{Status: 429, File: "error_rate_limit.json"})
	m := gemini.New(vertexClient(t, srv.URL), modelName, &gemini.Options{NoStream: true})
	e := chattest.GenerateErr(t, context.Background(), m, hello)
	assert.Equal(t, modelerr.RateLimited, e.Kind)
	assert.Positive(t, e.RetryAfter, "RetryInfo's delay on Vertex AI too")
	info := m.Describe()
	assert.Equal(t, gemini.ProviderVertex, info.Provider)
	assert.Equal(t, "127.0.0.1", info.ServerAddress, "the base URL set wins over the regional endpoint")
}
