package gemini_test

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genai"

	"github.com/reactguard/reactguard/adapters/gemini"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

func ExampleNew() {
	// A canned server stands in for the Gemini API so the example runs offline.
	srv := chattest.CannedServer(200, `{"candidates":[{"content":{"role":"model","parts":[
		{"text":"Looking it up."},{"functionCall":{"name":"list_spaces","args":{}}}]},"finishReason":"STOP"}],
		"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":20},"responseId":"resp-1","modelVersion":"gemini-2.5-flash"}`)
	defer srv.Close()

	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL + "/"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := gemini.New(client, "gemini-2.5-flash", &gemini.Options{NoStream: true})
	resp, err := model.Generate(context.Background(), react.Request{
		Messages: []react.Message{
			{Role: react.RoleSystem, Content: "You manage websites."},
			{Role: react.RoleUser, Content: "Which spaces are there?"},
		},
		Tools: []react.ToolSpec{{Name: "list_spaces", Description: "List the spaces.", InputSchema: []byte(`{"type":"object"}`)}},
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
	// call_resp-1_0 list_spaces({})
}

func ExampleModel_Generate_rateLimited() {
	srv := chattest.CannedServer(429, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED",
		"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}`)
	defer srv.Close()
	client, _ := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL + "/"}})
	model := gemini.New(client, "gemini-2.5-flash", &gemini.Options{NoStream: true})
	_, err := model.Generate(context.Background(), react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "hi"}}})
	var e *modelerr.Error
	if k := modelerr.KindOf(err); k.Retryable() && errors.As(err, &e) {
		fmt.Println(k, "after", e.RetryAfter)
	}
	// Output: rate_limited after 30s
}
