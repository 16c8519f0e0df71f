package openairesponses_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/adapters/openairesponses"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type reply = chattest.Reply

var endpoint = chattest.Endpoint{
	Path: "/v1/responses",
	Check: func(r *http.Request) error {
		if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
			return fmt.Errorf("Authorization = %q", got)
		}
		return nil
	},
	Exhausted: `{"error":{"message":"no canned reply left","type":"server_error"}}`,
}

// adapter describes the adapter, answering with JSON bodies, to the
// shared scenarios; streaming the same adapter streaming.
var (
	adapter = chattest.Adapter{
		Provider: "openairesponses", Endpoint: endpoint, ModelName: "gpt-5",
		NewModel: func(t testing.TB, u string) react.Model {
			return openairesponses.New(client(t, u+"/v1/"), "gpt-5", &openairesponses.Options{NoStream: true})
		},
		Valid: validInput, ToolNames: toolNames, ToolResult: toolResult,
	}
	streaming = chattest.Adapter{
		Provider: "openairesponses", Endpoint: endpoint, ModelName: "gpt-5",
		NewModel: func(t testing.TB, u string) react.Model {
			return collected{openairesponses.New(client(t, u+"/v1/"), "gpt-5", nil)}
		},
		Valid: validInput, ToolNames: toolNames, ToolResult: toolResult,
		Serve: func(t testing.TB, r reply) reply {
			if r.File == "" {
				return r
			}
			return sse(t, r.File)
		},
	}
)

// collected is a streaming Model whose Generate is react.Collect of its
// stream, so that the shared scenarios' direct Generate calls stream too.
type collected struct{ *openairesponses.Model }

func (c collected) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	return react.Collect(c.GenerateStream(ctx, req))
}

func client(t testing.TB, baseURL string) sdk.Client {
	t.Helper()
	return sdk.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("test-key"), option.WithHTTPClient(chattest.HTTPClient(t)))
}

func newModel(t testing.TB, s *chattest.Server, opts *openairesponses.Options) *openairesponses.Model {
	t.Helper()
	return openairesponses.New(client(t, s.URL+"/v1/"), "gpt-5", opts)
}

var hello = react.Request{
	Messages: []react.Message{{Role: react.RoleUser, Content: "go"}},
	Tools:    []react.ToolSpec{{Name: "list_spaces", Description: "List spaces.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

func items(req map[string]any) []map[string]any {
	in, _ := req["input"].([]any)
	out := make([]map[string]any, 0, len(in))
	for _, i := range in {
		m, _ := i.(map[string]any)
		out = append(out, m)
	}
	return out
}

// validInput checks what the API enforces on input items: every
// function_call_output answers a function_call before it, every
// function_call before the last turn's is answered, call ids unique,
// store false with the encrypted reasoning included.
func validInput(req map[string]any) error {
	if req["store"] != false {
		return fmt.Errorf("store = %v; want false", req["store"])
	}
	calls, answered := map[string]bool{}, map[string]bool{}
	for i, it := range items(req) {
		id, _ := it["call_id"].(string)
		switch it["type"] {
		case "function_call":
			if calls[id] {
				return fmt.Errorf("item %d: call id %s twice", i, id)
			}
			calls[id] = true
		case "function_call_output":
			if !calls[id] || answered[id] {
				return fmt.Errorf("item %d: output for %s without its call", i, id)
			}
			answered[id] = true
		}
	}
	for id := range calls {
		if !answered[id] {
			return fmt.Errorf("call %s has no output", id)
		}
	}
	return nil
}

func toolNames(req map[string]any) []string {
	var out []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	sort.Strings(out)
	return out
}

func toolResult(req map[string]any, callID string) (string, bool) {
	for _, it := range items(req) {
		if it["type"] == "function_call_output" && it["call_id"] == callID {
			s, _ := it["output"].(string)
			return s, true
		}
	}
	return "", false
}

// sse renders a canned response file as the API streams it.
func sse(t testing.TB, file string) reply {
	t.Helper()
	body, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	return reply{Body: streamOf(t, string(body)), ContentType: "text/event-stream"}
}

// streamOf renders a response as its event stream: response.created, for
// each output item its added event, its text or arguments in two deltas
// and its done event, then the terminal event with the whole response.
func streamOf(t testing.TB, body string) string {
	t.Helper()
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	var b strings.Builder
	seq := 0
	emit := func(v map[string]any) {
		v["sequence_number"] = seq
		seq++
		d, err := json.Marshal(v)
		require.NoError(t, err)
		b.WriteString("event: " + v["type"].(string) + "\ndata: " + string(d) + "\n\n")
	}
	emit(map[string]any{"type": "response.created", "response": map[string]any{"id": r["id"], "model": r["model"], "status": "in_progress", "output": []any{}}})
	output, _ := r["output"].([]any)
	for i, o := range output {
		it := o.(map[string]any)
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		switch it["type"] {
		case "function_call":
			added["arguments"] = ""
			emit(map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
			args := it["arguments"].(string)
			h := len(args) / 2
			for _, d := range []string{args[:h], args[h:]} {
				emit(map[string]any{"type": "response.function_call_arguments.delta", "output_index": i, "item_id": it["id"], "delta": d})
			}
		case "message":
			added["content"] = []any{}
			emit(map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
			for ci, c := range it["content"].([]any) {
				cm := c.(map[string]any)
				if text, ok := cm["text"].(string); ok {
					h := len(text) / 2
					for _, d := range []string{text[:h], text[h:]} {
						emit(map[string]any{"type": "response.output_text.delta", "output_index": i, "content_index": ci, "item_id": it["id"], "delta": d})
					}
				}
				if ref, ok := cm["refusal"].(string); ok {
					emit(map[string]any{"type": "response.refusal.delta", "output_index": i, "content_index": ci, "item_id": it["id"], "delta": ref})
				}
			}
		default:
			emit(map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
		}
		emit(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	terminal := "response.completed"
	switch r["status"] {
	case "incomplete":
		terminal = "response.incomplete"
	case "failed":
		terminal = "response.failed"
	}
	emit(map[string]any{"type": terminal, "response": r})
	return b.String()
}
