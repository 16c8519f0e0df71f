package bedrock_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/reactguard/reactguard/adapters/bedrock"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func ExampleNew() {
	// A canned server stands in for Bedrock so the example runs offline.
	srv := chattest.CannedServer(200, `{"output":{"message":{"role":"assistant","content":[
		{"text":"Looking it up."},{"toolUse":{"toolUseId":"tooluse_1","name":"list_spaces","input":{}}}]}},
		"stopReason":"tool_use","usage":{"inputTokens":50,"outputTokens":20,"totalTokens":70}}`)
	defer srv.Close()

	client := bedrockruntime.New(bedrockruntime.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"}, nil
		}),
	})
	model := bedrock.New(client, "amazon.nova-lite-v1:0", &bedrock.Options{NoStream: true})
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
	fmt.Println(resp.Text, resp.FinishReason)
	for _, c := range resp.ToolCalls {
		fmt.Printf("%s %s(%s)\n", c.ID, c.Name, c.Args)
	}
	// Output:
	// Looking it up. tool_use
	// tooluse_1 list_spaces({})
}
