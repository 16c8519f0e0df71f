package gemini_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/reactguard/reactguard/adapters/gemini"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestGenerateParsesResponses(t *testing.T) {
	adapter.RunParseCases(t, hello, []chattest.ParseCase{
		{Name: "parallel calls without ids", Reply: reply{File: "response_parallel_no_ids.json"},
			Want: react.Response{Text: "Checking both.", ID: "resp-par", Model: "gemini-2.5-flash-001", FinishReason: "STOP",
				ToolCalls: []react.ToolCall{
					{ID: "call_resp-par_0", Name: "list_spaces", Args: json.RawMessage(`{}`)},
					{ID: "call_resp-par_1", Name: "list_spaces", Args: json.RawMessage(`{"page":2}`)},
				},
				Usage: &react.Usage{InputTokens: 100, OutputTokens: 60, CachedInputTokens: 64, ReasoningTokens: 50}},
			Reason: "calls the API sent without an id get one from the response id; thoughts count as output"},
		{Name: "thought apart", Reply: reply{File: "response_thought.json"},
			Want: react.Response{Text: "Here you go.", ID: "resp-thought", Model: "gemini-2.5-pro", FinishReason: "STOP",
				Usage: &react.Usage{InputTokens: 100, OutputTokens: 25, ReasoningTokens: 20}},
			Reason: "a thought summary is not the turn's text"},
		{Name: "blocked prompt", Reply: reply{File: "response_blocked.json"},
			Want:   react.Response{ID: "resp-blocked", Model: "gemini-2.5-flash", FinishReason: "SAFETY", Usage: &react.Usage{InputTokens: 9}},
			Reason: "a blocked prompt is an empty turn with the block reason"},
		{Name: "cut off", Reply: reply{File: "response_cut_off.json"},
			Want: react.Response{ID: "resp-cut", Model: "gemini-2.5-flash", FinishReason: "MAX_TOKENS",
				ToolCalls: []react.ToolCall{{ID: "fc_cut_1", Name: "create_site", Args: json.RawMessage(`{"name":"Spring Sale","space_id":"sp-4"}`)}},
				Usage:     &react.Usage{InputTokens: 402, OutputTokens: 64}},
			Reason: "MAX_TOKENS is the finish reason react.CutOff knows"},
	})
}

// The request: system instruction apart, contents alternating, function
// responses with the call's id and the tool's name, errors under "error",
// tools as function declarations with the schema verbatim, the sampling
// parameters.
func TestGenerateSendsHistoryAndTools(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "response_thought.json"})
	temp, topP := 0.25, 0.5
	m := newModel(t, s, &gemini.Options{Temperature: &temp, TopP: &topP, MaxTokens: 800, NoStream: true,
		Configure: func(c *genai.GenerateContentConfig) { c.CandidateCount = 1 }})
	history := []react.Message{
		{Role: react.RoleSystem, Content: "You build sites."},
		{Role: react.RoleUser, Content: "Publish."},
		{Role: react.RoleAssistant, Content: "Reading.", ToolCalls: []react.ToolCall{
			{ID: "fc_1", Name: "list_spaces", Args: json.RawMessage(`{"page":1}`)},
			{ID: "fc_2", Name: "create_site", Args: json.RawMessage(`{"name":`)},
		}},
		{Role: react.RoleTool, ToolCallID: "fc_1", ToolName: "list_spaces", Content: `[{"id":"sp-1"}]`},
		{Role: react.RoleTool, ToolCallID: "fc_2", ToolName: "create_site", IsError: true, Content: "not JSON. Next: fix it"},
	}
	tools := []react.ToolSpec{{Name: "list_spaces", Description: "List.", InputSchema: json.RawMessage(`{"type":"object","properties":{"page":{"type":"integer","maximum":9.50}}}`)}}
	_, err := m.Generate(context.Background(), react.Request{Messages: history, Tools: tools})
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"user","parts":[{"text":"You build sites."}]}`, s.Field(0, "systemInstruction"))
	assert.JSONEq(t, `[
		{"role":"user","parts":[{"text":"Publish."}]},
		{"role":"model","parts":[{"text":"Reading."},
			{"functionCall":{"id":"fc_1","name":"list_spaces","args":{"page":1}}},
			{"functionCall":{"id":"fc_2","name":"create_site"}}]},
		{"role":"user","parts":[
			{"functionResponse":{"id":"fc_1","name":"list_spaces","response":{"output":"[{\"id\":\"sp-1\"}]"}}},
			{"functionResponse":{"id":"fc_2","name":"create_site","response":{"error":"not JSON. Next: fix it"}}}]}
	]`, s.Field(0, "contents"))
	assert.JSONEq(t, `[{"functionDeclarations":[{"name":"list_spaces","description":"List.","parametersJsonSchema":{"type":"object","properties":{"page":{"type":"integer","maximum":9.50}}}}]}]`,
		s.Field(0, "tools"))
	assert.JSONEq(t, `{"temperature":0.25,"topP":0.5,"maxOutputTokens":800,"candidateCount":1}`, s.Field(0, "generationConfig"))
}

// A turn replayed keeps what the API asks back: each part's thought
// signature on its part, the thought parts, and no id the API did not
// send (the adapter's own ids stay on the adapter's side).
func TestReplayKeepsSignatures(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv, first, finish := adapter, reply{File: "response_parallel_no_ids.json"}, reply{File: "loop_5_finish.json"}
		if stream {
			srv, first, finish = streaming, sse(t, first.File), sse(t, finish.File)
		}
		s := srv.NewServer(t, first, finish)
		runReplay(t, srv.NewModel(t, s.URL))
		model := contents(s.Requests()[1])[1]
		assert.JSONEq(t, `{"role":"model","parts":[
			{"text":"Checking both.","thoughtSignature":"dGV4dC1zaWc="},
			{"functionCall":{"name":"list_spaces"},"thoughtSignature":"Y2FsbC1zaWc="},
			{"functionCall":{"name":"list_spaces","args":{"page":2}}}]}`, mustJSON(t, model), "stream=%v", stream)
		results := parts(contents(s.Requests()[1])[2])
		require.Len(t, results, 2)
		assert.NotContains(t, results[0]["functionResponse"], "id", "stream=%v: a made-up id is not sent", stream)
	}
}

func runReplay(t *testing.T, m react.Model) {
	t.Helper()
	loop, err := react.New(react.Config{Model: m, Tools: chattest.SiteCatalog(new(atomic.Int32)), Logger: chattest.Quiet})
	require.NoError(t, err)
	res, err := loop.Run(context.Background(), chattest.SiteNode(), chattest.Task)
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestDescribe(t *testing.T) {
	s := adapter.NewServer(t)
	temp := 0.5
	got := newModel(t, s, &gemini.Options{Temperature: &temp, MaxTokens: 100}).Describe()
	assert.Equal(t, "127.0.0.1", got.ServerAddress)
	assert.NotZero(t, got.ServerPort)
	got.ServerAddress, got.ServerPort = "", 0
	assert.Equal(t, react.ModelInfo{Provider: "gcp.gemini", Name: modelName, Temperature: &temp, MaxTokens: 100, SystemApart: true}, got)

	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{Backend: genai.BackendVertexAI, Project: "p", Location: "europe-west4",
		Credentials: fakeCredentials(), HTTPClient: chattest.HTTPClient(t)})
	require.NoError(t, err)
	got = gemini.New(c, modelName, nil).Describe()
	assert.Equal(t, "gcp.vertex_ai", got.Provider)
	assert.Equal(t, "europe-west4-aiplatform.googleapis.com", got.ServerAddress, "the Vertex AI backend's regional endpoint")
	assert.Equal(t, 443, got.ServerPort)
}

func TestNewPanics(t *testing.T) {
	assert.PanicsWithValue(t, "gemini: New with an empty model name", func() { gemini.New(client(t, "http://127.0.0.1:1"), "", nil) })
	assert.PanicsWithValue(t, "gemini: New with a nil client", func() { gemini.New(nil, "m", nil) })
}

func TestGenerateConcurrent(t *testing.T) {
	adapter.RunConcurrent(t, 8, reply{File: "response_parallel_no_ids.json"}, hello)
}

// fakeCredentials are credentials whose token is never asked for: the
// test sends nothing.
func fakeCredentials() *auth.Credentials {
	return auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: tokenProvider{}})
}

type tokenProvider struct{}

func (tokenProvider) Token(context.Context) (*auth.Token, error) { return &auth.Token{Value: "t"}, nil }

// A replayed model turn whose calls carry no signature (another
// provider's turn, a host's own history) gets the signature Google
// documents for calls the model did not produce, on its first call only,
// for every model but gemini-1… and gemini-2…: Gemini 3 refuses such a
// turn otherwise. A turn that carries its own signature is sent as it
// came.
func TestReplaySkipSignature(t *testing.T) {
	const onWire = "skip_thought_signature_validator" // the documented value, as the API reads it
	history := []react.Message{
		{Role: react.RoleUser, Content: "go"},
		{Role: react.RoleAssistant, Content: "Both.", ToolCalls: []react.ToolCall{ // another model's turn
			{ID: "toolu_1", Name: "list_spaces", Args: json.RawMessage(`{}`)},
			{ID: "toolu_2", Name: "list_spaces", Args: json.RawMessage(`{"page":2}`)},
		}, Parts: []react.Part{{Kind: react.PartText, Text: "Both."}, {Kind: react.PartCall, Call: 0},
			{Kind: react.PartOpaque, API: "anthropic", Data: []byte(`{"type":"thinking"}`)}, {Kind: react.PartCall, Call: 1}}},
		{Role: react.RoleTool, ToolCallID: "toolu_1", ToolName: "list_spaces", Content: "[]"},
		{Role: react.RoleTool, ToolCallID: "toolu_2", ToolName: "list_spaces", Content: "[]"},
		{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{{ID: "fc_3", Name: "list_spaces", Args: json.RawMessage(`{}`)}}, // Gemini's own
			Parts: []react.Part{{Kind: react.PartCall, Call: 0, API: gemini.API, Data: []byte(`{"signature":"b3du"}`)}}},
		{Role: react.RoleTool, ToolCallID: "fc_3", ToolName: "list_spaces", Content: "[]"},
	}
	cases := []struct {
		model    string
		sentinel bool
		reason   string
	}{
		{"gemini-3-flash-preview", true, "Gemini 3 requires a signature on a step's first call"},
		{"gemini-3.1-pro-preview", true, "a point release of Gemini 3"},
		{"models/gemini-flash-latest", true, "an alias may name any generation"},
		{"gemini-10-ultra", true, "a later generation with two digits"},
		{"gemini-2.5-flash", false, "Gemini 2.5 requires none: the turn goes as it is"},
		{"gemini-1.5-pro", false, "no thinking, no signatures"},
	}
	for _, tt := range cases {
		t.Run(tt.model, func(t *testing.T) {
			name := tt.model[strings.LastIndexByte(tt.model, '/')+1:]
			s := chattest.NewServer(t, chattest.Endpoint{Path: "/v1beta/models/" + name + ":generateContent", Check: checkKey, Exhausted: exhausted},
				reply{File: "loop_5_finish.json"})
			_, err := gemini.New(client(t, s.URL), tt.model, &gemini.Options{NoStream: true}).Generate(context.Background(), react.Request{Messages: history})
			require.NoError(t, err)
			cs := contents(s.Requests()[0])
			require.Len(t, cs, 5)
			other, own := parts(cs[1]), parts(cs[3])
			require.Len(t, other, 3, "the other API's opaque part is left out")
			assert.NotContains(t, other[0], "thoughtSignature", "%s: a text part gets none", tt.reason)
			if tt.sentinel {
				assert.Equal(t, onWire, urlSafe(other[1]["thoughtSignature"]), tt.reason)
			} else {
				assert.NotContains(t, other[1], "thoughtSignature", tt.reason)
			}
			assert.NotContains(t, other[2], "thoughtSignature", "%s: only the first call of the step", tt.reason)
			assert.Equal(t, "b3du", own[0]["thoughtSignature"], "%s: the turn's own signature is kept", tt.reason)
		})
	}
}

// urlSafe rewrites a base64 value of the wire in the URL-safe alphabet,
// which the API reads alike.
func urlSafe(v any) string {
	s, _ := v.(string)
	return strings.NewReplacer("+", "-", "/", "_").Replace(s)
}
