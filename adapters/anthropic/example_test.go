package anthropic_test

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

func ExampleNew() {
	// A canned server stands in for the Messages API so the example runs offline.
	srv := chattest.CannedServer(200, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-haiku-4-5",
		"content":[{"type":"text","text":"Looking it up."},
		{"type":"tool_use","id":"toolu_01","name":"list_spaces","input":{}}],
		"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":50,"output_tokens":20}}`)
	defer srv.Close()

	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"))
	model := anthropic.New(client, "claude-haiku-4-5", &anthropic.Options{MaxTokens: 1024})

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
	// toolu_01 list_spaces({})
}

func ExampleModel_Generate_overloaded() {
	srv := chattest.CannedServer(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	defer srv.Close()

	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"))
	model := anthropic.New(client, "claude-haiku-4-5", nil) // MaxRetries 0: the SDK does not retry

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
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Type())
	}
	// Output:
	// retryable: overloaded
	// 529 overloaded_error
}
