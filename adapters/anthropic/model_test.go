package anthropic_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

var siteTools = []react.ToolSpec{
	{
		Name:        "site_get",
		Description: "Read one site by id.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"site_id":{"type":"string"}},"required":["site_id"],"additionalProperties":false}`),
	},
	{
		Name:        "site_publish",
		Description: "Publish a site. Requires approval.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"site_id":{"type":"string"},"max_pages":{"type":"integer","maximum":12}},"required":["site_id"],"$defs":{"x":{"type":"string"}}}`),
	},
	{Name: "builtin_node_finish", Description: "Finish the node."},
}

// hello is a request with a user message and siteTools.
var hello = react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}, Tools: siteTools}

func TestGenerateSendsHistoryAndTools(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "message_text.json"})
	temp := 0.2
	m := newModel(t, s, &anthropic.Options{Temperature: &temp, MaxTokens: 1024})

	history := []react.Message{
		{Role: react.RoleSystem, Content: "You build small websites."},
		{Role: react.RoleUser, Content: "Publish the bakery site."},
		{Role: react.RoleAssistant, Content: "Reading it first.", ToolCalls: []react.ToolCall{
			{ID: "toolu_1", Name: "site_get", Args: json.RawMessage(`{"site_id":"bakery"}`)},
			{ID: "toolu_2", Name: "site_publish", Args: json.RawMessage(`{"site_id":"bakery"}`)},
		}},
		{Role: react.RoleTool, ToolCallID: "toolu_1", ToolName: "site_get", Content: `{"id":"bakery","pages":3}`},
		{Role: react.RoleTool, ToolCallID: "toolu_2", ToolName: "site_publish", IsError: true,
			Content: "site_publish needs approval. Next: call builtin_node_approval for site_publish."},
		{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{
			{ID: "toolu_3", Name: "site_publish", Args: json.RawMessage(`{"site_id": "bakery" `)},
			{ID: "toolu_4", Name: "site_get", Args: json.RawMessage(`["bakery"]`)},
		}},
		{Role: react.RoleTool, ToolCallID: "toolu_3", ToolName: "site_publish", IsError: true, Content: "arguments are not valid JSON. Next: send a JSON object."},
		{Role: react.RoleTool, ToolCallID: "toolu_4", ToolName: "site_get", IsError: true, Content: "skipped. Next: call it again if still needed."},
		{Role: react.RoleAssistant, Content: "Done."},
		{Role: react.RoleUser, Content: "Thanks."},
	}
	got, err := m.Generate(context.Background(), react.Request{Messages: history, Tools: siteTools})
	require.NoError(t, err)
	assert.Equal(t, []react.Part{{Kind: react.PartText, Text: "The site is published at https://example.test/bakery."}}, got.Parts)
	got.Parts = nil
	assert.Equal(t, react.Response{Text: "The site is published at https://example.test/bakery.",
		ID: "msg_01XFDUDYJgAACzvnptvVoYEL", Model: "claude-sonnet-4-5-20250929", FinishReason: "end_turn",
		Usage: &react.Usage{InputTokens: 1204, OutputTokens: 87}}, got)

	assert.JSONEq(t, `"claude-sonnet-4-5"`, s.Field(0, "model"))
	assert.JSONEq(t, `1024`, s.Field(0, "max_tokens"))
	assert.JSONEq(t, `0.2`, s.Field(0, "temperature"))
	assert.JSONEq(t, `[{"type":"text","text":"You build small websites."}]`, s.Field(0, "system"))
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"Publish the bakery site."}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Reading it first."},
			{"type":"tool_use","id":"toolu_1","name":"site_get","input":{"site_id":"bakery"}},
			{"type":"tool_use","id":"toolu_2","name":"site_publish","input":{"site_id":"bakery"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","is_error":false,"content":[{"type":"text","text":"{\"id\":\"bakery\",\"pages\":3}"}]},
			{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"site_publish needs approval. Next: call builtin_node_approval for site_publish."}]}]},
		{"role":"assistant","content":[
			{"type":"tool_use","id":"toolu_3","name":"site_publish","input":{}},
			{"type":"tool_use","id":"toolu_4","name":"site_get","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_3","is_error":true,"content":[{"type":"text","text":"arguments are not valid JSON. Next: send a JSON object."}]},
			{"type":"tool_result","tool_use_id":"toolu_4","is_error":true,"content":[{"type":"text","text":"skipped. Next: call it again if still needed."}]}]},
		{"role":"assistant","content":[{"type":"text","text":"Done."}]},
		{"role":"user","content":[{"type":"text","text":"Thanks."}]}
	]`, s.Field(0, "messages"))
	assert.JSONEq(t, `[
		{"name":"site_get","description":"Read one site by id.","input_schema":
			{"type":"object","properties":{"site_id":{"type":"string"}},"required":["site_id"],"additionalProperties":false}},
		{"name":"site_publish","description":"Publish a site. Requires approval.","input_schema":
			{"type":"object","properties":{"site_id":{"type":"string"},"max_pages":{"type":"integer","maximum":12}},"required":["site_id"],"$defs":{"x":{"type":"string"}}}},
		{"name":"builtin_node_finish","description":"Finish the node.","input_schema":{"type":"object","properties":{}}}
	]`, s.Field(0, "tools"))
}

func TestGenerateGroupsResultsAndLiftsSystem(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "message_text.json"})
	m := newModel(t, s, nil)
	history := []react.Message{
		{Role: react.RoleSystem, Content: "rules"},
		{Role: react.RoleUser, Content: "Publish."},
		{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{
			{ID: "a", Name: "site_get", Args: json.RawMessage(`{}`)},
			{ID: "b", Name: "site_get", Args: json.RawMessage(`{}`)},
		}},
		{Role: react.RoleTool, ToolCallID: "a", Content: "A"},
		{Role: react.RoleSystem, Content: "hint"},
		{Role: react.RoleUser, Content: "also this"},
		{Role: react.RoleTool, ToolCallID: "b", Content: ""},
		{Role: react.RoleAssistant, Content: ""},
		{Role: react.RoleUser, Content: ""},
	}
	_, err := m.Generate(context.Background(), react.Request{Messages: history})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"text","text":"rules"},{"type":"text","text":"hint"}]`, s.Field(0, "system"),
		"every system message goes to the top-level system, in order")
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"Publish."}]},
		{"role":"assistant","content":[
			{"type":"tool_use","id":"a","name":"site_get","input":{}},
			{"type":"tool_use","id":"b","name":"site_get","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"a","is_error":false,"content":[{"type":"text","text":"A"}]},
			{"type":"tool_result","tool_use_id":"b","is_error":false},
			{"type":"text","text":"also this"}]}
	]`, s.Field(0, "messages"), "all results of a turn in one user message, tool_result blocks first; empty texts and empty messages dropped")
	assert.Equal(t, react.RoleSystem, history[4].Role, "Generate must not change the caller's history")
	reqs := s.Requests()
	assert.NotContains(t, reqs[0], "tools", "no tools → no tools field")
	assert.NotContains(t, reqs[0], "temperature", "nil Temperature → API default")
	assert.JSONEq(t, `4096`, s.Field(0, "max_tokens"), "MaxTokens 0 → DefaultMaxTokens")
}

func TestGenerateParsesResponses(t *testing.T) {
	adapter.RunParseCases(t, hello, []chattest.ParseCase{
		{
			Name: "text", Reply: reply{File: "message_text.json"},
			Want: react.Response{Text: "The site is published at https://example.test/bakery.",
				ID: "msg_01XFDUDYJgAACzvnptvVoYEL", Model: "claude-sonnet-4-5-20250929", FinishReason: "end_turn",
				Usage: &react.Usage{InputTokens: 1204, OutputTokens: 87}},
			Reason: "a plain answer is text only, with the message's id, model, stop reason and usage",
		},
		{
			Name: "parallel tool use", Reply: reply{File: "message_parallel_tool_use.json"},
			Want: react.Response{Text: "Let me look at both sites.", ToolCalls: []react.ToolCall{
				{ID: "toolu_01A09q90qw90lq917835lq9", Name: "site_get", Args: json.RawMessage(`{"site_id": "bakery"}`)},
				{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "site_get", Args: json.RawMessage(`{"site_id": "florist"}`)},
			}, ID: "msg_01Aq9w938a90dw8qWeEYzTqX", Model: "claude-sonnet-4-5-20250929", FinishReason: "tool_use",
				Usage: &react.Usage{InputTokens: 1204, OutputTokens: 87}},
			Reason: "every tool_use block comes back in order, input verbatim",
		},
		{
			Name: "thinking and citations", Reply: reply{File: "message_thinking_and_citations.json"},
			Want: react.Response{Text: "The bakery site is at https://example.test/bakery.",
				ID: "msg_01CitE7xq2s3fAJd9aWm5nRb", Model: "claude-sonnet-4-5-20250929", FinishReason: "end_turn",
				Usage: &react.Usage{InputTokens: 1204, OutputTokens: 87}},
			Reason: "text blocks are concatenated as the API documents for citations; thinking is not text",
		},
		{
			Name: "empty content", Reply: reply{File: "message_empty.json"},
			Want: react.Response{ID: "msg_01EmptyTurn00000000000000", Model: "claude-sonnet-4-5-20250929", FinishReason: "end_turn",
				Usage: &react.Usage{InputTokens: 1204, OutputTokens: 87}},
			Reason: "an empty turn is a turn without tool calls, for the loop to count",
		},
		{
			Name: "prompt cache and thinking", Reply: reply{File: "message_cached_usage.json"},
			Want: react.Response{Text: "Both sites are published.",
				ID: "msg_01CacheHit000000000000000", Model: "claude-opus-4-1-20250805", FinishReason: "max_tokens",
				Usage: &react.Usage{InputTokens: 21 + 188 + 2048, OutputTokens: 503, CachedInputTokens: 2048, CacheCreationInputTokens: 188, ReasoningTokens: 320}},
			Reason: "input_tokens leaves out the cache reads and writes: InputTokens adds them so it counts every input token, as OpenAI's prompt_tokens does",
		},
		{
			Name: "no usage", Reply: reply{Body: `{"id":"msg_proxy","type":"message","role":"assistant","model":"claude-haiku-4-5",
				"content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn"}`},
			Want:   react.Response{Text: "Done.", ID: "msg_proxy", Model: "claude-haiku-4-5", FinishReason: "end_turn"},
			Reason: "a body without usage (a proxy that drops it) gives a nil Usage, never a usage of zeros",
		},
	})
}

func TestMaxRetriesReachesTheSDK(t *testing.T) {
	s := adapter.NewServer(t,
		reply{Status: 529, File: "error_overloaded.json", Header: map[string]string{"Retry-After-Ms": "1"}},
		reply{File: "message_text.json"},
	)
	got, err := newModel(t, s, &anthropic.Options{MaxRetries: 1}).Generate(context.Background(),
		react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}})
	require.NoError(t, err)
	assert.NotEmpty(t, got.Text)
	assert.Len(t, s.Requests(), 2, "MaxRetries 1 allows one retry")
}

func TestRequestOptionsAreApplied(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "message_text.json"})
	m := newModel(t, s, &anthropic.Options{RequestOptions: []option.RequestOption{option.WithJSONSet("tool_choice", map[string]any{"type": "any"})}})
	_, err := m.Generate(context.Background(), react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"any"}`, s.Field(0, "tool_choice"))
}

func TestNewPanicsWithoutModelName(t *testing.T) {
	assert.PanicsWithValue(t, "anthropic: New with an empty model name", func() {
		anthropic.New(client(t, "http://127.0.0.1:1/"), "", nil)
	})
}

func TestDescribe(t *testing.T) {
	s := adapter.NewServer(t) // no reply: any request fails the test
	m := anthropic.New(client(t, s.URL), "claude-haiku-4-5", nil)
	got := m.Describe()
	assert.Equal(t, "127.0.0.1", got.ServerAddress, "the client's base URL")
	assert.NotZero(t, got.ServerPort)
	got.ServerAddress, got.ServerPort = "", 0
	assert.Equal(t, react.ModelInfo{Provider: "anthropic", Name: "claude-haiku-4-5", MaxTokens: anthropic.DefaultMaxTokens, SystemApart: true}, got,
		"the max_tokens the API requires is reported; the system prompt is apart")
	temp, topP := 0.1, 0.7
	m = anthropic.New(client(t, s.URL), "claude-haiku-4-5", &anthropic.Options{Provider: "aws.bedrock", Temperature: &temp, TopP: &topP})
	got = m.Describe()
	assert.Equal(t, "aws.bedrock", got.Provider, "Options.Provider names another route to Claude")
	assert.Equal(t, &temp, got.Temperature)
	assert.Equal(t, &topP, got.TopP)
	assert.Empty(t, s.Requests(), "finding the endpoint sends nothing")

	t.Setenv("ANTHROPIC_BASE_URL", "")
	require.NoError(t, os.Unsetenv("ANTHROPIC_BASE_URL"))
	got = anthropic.New(sdk.NewClient(option.WithAPIKey("k")), "claude-haiku-4-5", nil).Describe()
	assert.Equal(t, "api.anthropic.com", got.ServerAddress, "the SDK's default endpoint")
	assert.Equal(t, 443, got.ServerPort)
}

func TestName(t *testing.T) {
	m := anthropic.New(client(t, "http://127.0.0.1:1/"), "claude-haiku-4-5", nil)
	assert.Equal(t, "claude-haiku-4-5", m.Name())
}

func TestGenerateConcurrent(t *testing.T) {
	adapter.RunConcurrent(t, 8, reply{File: "message_parallel_tool_use.json"}, hello)
}
