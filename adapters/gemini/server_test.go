package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/reactguard/reactguard/adapters/gemini"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

// TestMain checks for leaked goroutines. The SDK's dependencies start one
// at init (opencensus's stats worker), which lives as long as the process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

type reply = chattest.Reply

const modelName = "gemini-2.5-flash"

// generatePath and streamPath are the Gemini API's paths for modelName.
const (
	generatePath = "/v1beta/models/" + modelName + ":generateContent"
	streamPath   = "/v1beta/models/" + modelName + ":streamGenerateContent"
)

func checkKey(r *http.Request) error {
	if got := r.Header.Get("X-Goog-Api-Key"); got != "test-key" {
		return fmt.Errorf("x-goog-api-key = %q; want test-key", got)
	}
	return nil
}

const exhausted = `{"error":{"code":500,"message":"no canned reply left","status":"INTERNAL"}}`

// adapter describes this adapter to the shared scenarios of chattest.
var adapter = chattest.Adapter{
	Provider: "gemini",
	Endpoint: chattest.Endpoint{Path: generatePath, Check: checkKey, Exhausted: exhausted},
	NewModel: func(t testing.TB, serverURL string) react.Model {
		return gemini.New(client(t, serverURL), modelName, &gemini.Options{NoStream: true})
	},
	Valid:      validHistory,
	ToolNames:  toolNames,
	ToolResult: toolResult,
}

// streaming is adapter for the streaming endpoint.
var streaming = chattest.Adapter{
	Provider: "gemini",
	Endpoint: chattest.Endpoint{Path: streamPath, Check: checkKey, Exhausted: exhausted},
	NewModel: func(t testing.TB, serverURL string) react.Model {
		return collected{gemini.New(client(t, serverURL), modelName, nil)}
	},
	Valid:      validHistory,
	ToolNames:  toolNames,
	ToolResult: toolResult,
	Serve: func(t testing.TB, r reply) reply {
		if r.File == "" {
			return r
		}
		return sse(t, r.File)
	},
}

// client returns an SDK client of the Gemini API backend for baseURL,
// with its own transport, closed when the test ends.
func client(t testing.TB, baseURL string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPClient: chattest.HTTPClient(t),
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL + "/"},
	})
	require.NoError(t, err)
	return c
}

func newModel(t testing.TB, s *chattest.Server, opts *gemini.Options) *gemini.Model {
	t.Helper()
	return gemini.New(client(t, s.URL), modelName, opts)
}

func newModelURL(t testing.TB, url string) *gemini.Model {
	t.Helper()
	return gemini.New(client(t, url), modelName, nil)
}

// hello is a request with a user message and one tool.
var hello = react.Request{
	Messages: []react.Message{{Role: react.RoleUser, Content: "go"}},
	Tools:    []react.ToolSpec{{Name: "list_spaces", Description: "List spaces.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

// contents returns the contents of a request body.
func contents(req map[string]any) []map[string]any {
	cs, _ := req["contents"].([]any)
	out := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		m, _ := c.(map[string]any)
		out = append(out, m)
	}
	return out
}

func parts(c map[string]any) []map[string]any {
	ps, _ := c["parts"].([]any)
	out := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		m, _ := p.(map[string]any)
		out = append(out, m)
	}
	return out
}

// validHistory checks what the Gemini API enforces on contents: roles
// user and model only, alternating, starting with user; a model content
// with function calls is followed by a user content holding exactly one
// functionResponse per call, names matching in order, and ids matching
// where the call had one.
func validHistory(req map[string]any) error {
	cs := contents(req)
	if len(cs) == 0 {
		return fmt.Errorf("no contents")
	}
	for i, c := range cs {
		role, _ := c["role"].(string)
		want := "user"
		if i%2 == 1 {
			want = "model"
		}
		if role != want {
			return fmt.Errorf("content %d: role %q; want %q", i, role, want)
		}
		var calls []map[string]any
		for _, p := range parts(c) {
			if fc, ok := p["functionCall"].(map[string]any); ok {
				calls = append(calls, fc)
			}
		}
		if len(calls) == 0 {
			continue
		}
		if i+1 >= len(cs) {
			continue // the last turn's calls are what the model is asked after
		}
		var results []map[string]any
		for _, p := range parts(cs[i+1]) {
			if fr, ok := p["functionResponse"].(map[string]any); ok {
				results = append(results, fr)
			}
		}
		if len(results) != len(calls) {
			return fmt.Errorf("content %d: %d calls, %d responses", i, len(calls), len(results))
		}
		for k := range calls {
			if calls[k]["name"] != results[k]["name"] {
				return fmt.Errorf("content %d: call %d %v answered by %v", i, k, calls[k]["name"], results[k]["name"])
			}
			if calls[k]["id"] != results[k]["id"] {
				return fmt.Errorf("content %d: call id %v answered by %v", i, calls[k]["id"], results[k]["id"])
			}
		}
	}
	return nil
}

func toolNames(req map[string]any) []string {
	var out []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		decls, _ := t.(map[string]any)["functionDeclarations"].([]any)
		for _, d := range decls {
			out = append(out, d.(map[string]any)["name"].(string))
		}
	}
	sort.Strings(out)
	return out
}

func toolResult(req map[string]any, callID string) (string, bool) {
	for _, c := range contents(req) {
		for _, p := range parts(c) {
			fr, ok := p["functionResponse"].(map[string]any)
			if !ok || fr["id"] != callID {
				continue
			}
			r, _ := fr["response"].(map[string]any)
			if s, ok := r["output"].(string); ok {
				return s, true
			}
			s, _ := r["error"].(string)
			return s, true
		}
	}
	return "", false
}

// sse renders a canned response file as the API streams it: one data
// line per part (a text part in two halves), the finish reason and usage
// on the last.
func sse(t testing.TB, file string) reply {
	t.Helper()
	body, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	return reply{Body: streamOf(t, string(body)), ContentType: "text/event-stream"}
}

func streamOf(t testing.TB, body string) string {
	t.Helper()
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	var b strings.Builder
	emit := func(v any) {
		d, err := json.Marshal(v)
		require.NoError(t, err)
		b.WriteString("data: " + string(d) + "\r\n\r\n")
	}
	cands, _ := r["candidates"].([]any)
	if len(cands) == 0 {
		emit(r)
		return b.String()
	}
	cand := cands[0].(map[string]any)
	content, _ := cand["content"].(map[string]any)
	ps, _ := content["parts"].([]any)
	chunk := func(p map[string]any) map[string]any {
		return map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{p}}, "index": 0}},
			"modelVersion": r["modelVersion"], "responseId": r["responseId"]}
	}
	for _, p := range ps {
		pm := p.(map[string]any)
		if text, ok := pm["text"].(string); ok && len(text) > 1 {
			first := map[string]any{}
			for k, v := range pm {
				first[k] = v
			}
			half := len(text) / 2
			first["text"] = text[:half]
			delete(first, "thoughtSignature")
			emit(chunk(first))
			pm["text"] = text[half:]
		}
		emit(chunk(pm))
	}
	last := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": ""}}},
		"finishReason": cand["finishReason"], "index": 0}}, "usageMetadata": r["usageMetadata"], "modelVersion": r["modelVersion"], "responseId": r["responseId"]}
	emit(last)
	return b.String()
}

// collected is a streaming Model whose Generate is react.Collect of its
// stream, so that the shared scenarios' direct Generate calls stream too.
type collected struct{ *gemini.Model }

func (c collected) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	return react.Collect(c.GenerateStream(ctx, req))
}
