package openai_test

import (
	"context"
	"errors"
	"fmt"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

func ExampleNew() {
	// A canned server stands in for an OpenAI-compatible endpoint so the example runs offline.
	srv := chattest.CannedServer(200, `{"id":"chatcmpl-1","object":"chat.completion","created":1741570283,"model":"qwen3:8b",
		"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Looking it up.",
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_spaces","arguments":"{}"}}]}}]}`)
	defer srv.Close()

	// Point the official client at any OpenAI-compatible server
	// (e.g. Ollama at http://localhost:11434/v1/).
	client := oai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("ollama"))
	model := openai.New(client, "qwen3:8b", nil)

	resp, err := model.Generate(context.Background(), react.Request{
		Messages: []react.Message{{Role: react.RoleUser, Content: "Which spaces are there?"}},
		Tools:    []react.ToolSpec{{Name: "list_spaces", Description: "List the spaces.", InputSchema: []byte(`{"type":"object"}`)}},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(resp.Text)
	for _, c := range resp.ToolCalls {
		fmt.Printf("%s %s(%s)\n", c.ID, c.Name, c.Args)
	}
	// Output:
	// Looking it up.
	// call_1 list_spaces({})
}

func ExampleModel_Generate_rateLimited() {
	srv := chattest.CannedServer(429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
	defer srv.Close()

	client := oai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"))
	model := openai.New(client, "gpt-4.1", nil) // MaxRetries 0: the SDK does not retry

	_, err := model.Generate(context.Background(), react.Request{
		Messages: []react.Message{{Role: react.RoleUser, Content: "hi"}},
	})
	// A host (or loop.Run's caller) branches on the kind; every adapter
	// returns a *modelerr.Error.
	switch k := modelerr.KindOf(err); {
	case k.Retryable():
		fmt.Println("retryable:", k)
	default:
		fmt.Println("give up:", k)
	}
	// The SDK's own error is still in the chain.
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code)
	}
	// Output:
	// retryable: rate_limited
	// 429 rate_limit_exceeded
}
