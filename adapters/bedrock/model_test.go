package bedrock_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/bedrock"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestGenerateParsesResponses(t *testing.T) {
	cases := []chattest.ParseCase{
		{Name: "parallel calls around texts", Reply: reply{File: "converse_parallel.json"},
			Want: react.Response{Text: "Checking both.And the second page.", FinishReason: "tool_use",
				ToolCalls: []react.ToolCall{
					{ID: "tooluse_a", Name: "list_spaces", Args: json.RawMessage(`{}`)},
					{ID: "tooluse_b", Name: "list_spaces", Args: json.RawMessage(`{"page":2}`)},
				},
				Usage: &react.Usage{InputTokens: 1200 + 1024 + 64, OutputTokens: 80, CachedInputTokens: 1024, CacheCreationInputTokens: 64},
				Parts: []react.Part{{Kind: react.PartText, Text: "Checking both."}, {Kind: react.PartCall, Call: 0},
					{Kind: react.PartText, Text: "And the second page."}, {Kind: react.PartCall, Call: 1}}},
			Reason: "toolUse blocks in order, the texts apart in the Parts, cache reads and writes added to the input"},
		{Name: "cut off", Reply: reply{File: "converse_cut_off.json"},
			Want: react.Response{FinishReason: "max_tokens",
				ToolCalls: []react.ToolCall{{ID: "tooluse_cut_1", Name: "create_site", Args: json.RawMessage(`{"name":"Spring Sale","space_id":"sp-4"}`)}},
				Usage:     &react.Usage{InputTokens: 400, OutputTokens: 64}},
			Reason: "max_tokens is the stop reason react.CutOff knows"},
	}
	adapter.RunParseCases(t, hello, cases)
	for i := range cases {
		cases[i].Reply = streamed(t, cases[i].Reply.File)
	}
	t.Run("streamed", func(t *testing.T) { streaming.RunParseCases(t, hello, cases) })
}

func TestGenerateSendsHistoryAndTools(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "converse_text.json"})
	temp := 0.5
	m := newModel(t, s, &bedrock.Options{Temperature: &temp, MaxTokens: 1000, NoStream: true})
	history := []react.Message{
		{Role: react.RoleSystem, Content: "Rules."},
		{Role: react.RoleUser, Content: "Do it."},
		{Role: react.RoleAssistant, Content: "On it.", ToolCalls: []react.ToolCall{
			{ID: "t1", Name: "list_spaces", Args: json.RawMessage(`{"page":1}`)},
			{ID: "t2", Name: "create_site", Args: json.RawMessage(`{"name":`)},
		}},
		{Role: react.RoleTool, ToolCallID: "t1", Content: "[]"},
		{Role: react.RoleTool, ToolCallID: "t2", Content: "not JSON. Next: fix", IsError: true},
	}
	tools := append(slices.Clip(hello.Tools), react.ToolSpec{Name: "create_site",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"page":{"type":"integer","maximum":9.5}},"required":["page"]}`)})
	_, err := m.Generate(context.Background(), react.Request{Messages: history, Tools: tools})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"text":"Rules."}]`, s.Field(0, "system"))
	assert.JSONEq(t, `[
		{"role":"user","content":[{"text":"Do it."}]},
		{"role":"assistant","content":[{"text":"On it."},
			{"toolUse":{"toolUseId":"t1","name":"list_spaces","input":{"page":1}}},
			{"toolUse":{"toolUseId":"t2","name":"create_site","input":{}}}]},
		{"role":"user","content":[
			{"toolResult":{"toolUseId":"t1","content":[{"text":"[]"}],"status":"success"}},
			{"toolResult":{"toolUseId":"t2","content":[{"text":"not JSON. Next: fix"}],"status":"error"}}]}
	]`, s.Field(0, "messages"))
	assert.JSONEq(t, `{"tools":[{"toolSpec":{"name":"list_spaces","description":"List spaces.","inputSchema":{"json":{"type":"object"}}}},
		{"toolSpec":{"name":"create_site","inputSchema":{"json":{"type":"object","properties":{"page":{"type":"integer","maximum":9.5}},"required":["page"]}}}}]}`,
		s.Field(0, "toolConfig"), "the schema as JSON, not as the bytes of its text")
	assert.JSONEq(t, `{"temperature":0.5,"maxTokens":1000}`, s.Field(0, "inferenceConfig"))
}

func TestDescribe(t *testing.T) {
	s := adapter.NewServer(t)
	got := newModel(t, s, nil).Describe()
	assert.Equal(t, "127.0.0.1", got.ServerAddress)
	assert.Equal(t, "aws.bedrock", got.Provider)
	assert.True(t, got.SystemApart)
	c := bedrockruntime.New(bedrockruntime.Options{Region: "eu-central-1"})
	got = bedrock.New(c, modelID, nil).Describe()
	assert.Equal(t, "bedrock-runtime.eu-central-1.amazonaws.com", got.ServerAddress, "the region's endpoint")
	assert.Equal(t, 443, got.ServerPort)
}

func TestNewPanics(t *testing.T) {
	assert.PanicsWithValue(t, "bedrock: New with a nil client", func() { bedrock.New(nil, modelID, nil) })
	assert.PanicsWithValue(t, "bedrock: New with an empty model id", func() { bedrock.New(bedrockruntime.New(bedrockruntime.Options{}), "", nil) })
}

func TestGenerateConcurrent(t *testing.T) {
	adapter.RunConcurrent(t, 8, reply{File: "converse_parallel.json"}, hello)
}
