package openairesponses_test

import (
	"context"
	"fmt"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reactguard/reactguard/adapters/openairesponses"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func ExampleNew() {
	// A canned server stands in for the Responses API so the example runs offline.
	srv := chattest.CannedServer(200, `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5",
		"output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA"},
		{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Looking it up."}]},
		{"type":"function_call","id":"fc_1","call_id":"call_1","name":"list_spaces","arguments":"{}"}],
		"usage":{"input_tokens":50,"output_tokens":20}}`)
	defer srv.Close()

	client := oai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"))
	model := openairesponses.New(client, "gpt-5", &openairesponses.Options{NoStream: true})
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
	for _, p := range resp.Parts {
		fmt.Print(p.Kind, " ")
	}
	fmt.Println()
	// Output:
	// Looking it up.
	// call_1 list_spaces({})
	// opaque text call
}
