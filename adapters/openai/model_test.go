package openai_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openai"
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
		InputSchema: json.RawMessage(`{"type":"object","properties":{"site_id":{"type":"string"},"max_pages":{"type":"integer","maximum":12}},"required":["site_id"]}`),
	},
	{Name: "builtin_node_finish", Description: "Finish the node."},
}

// hello is a request with a user message and siteTools.
var hello = react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}, Tools: siteTools}

func TestGenerateSendsHistoryAndTools(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "completion_text.json"})
	temp := 0.2
	m := newModel(t, s, &openai.Options{Temperature: &temp})

	history := []react.Message{
		{Role: react.RoleSystem, Content: "You build small websites."},
		{Role: react.RoleUser, Content: "Publish the bakery site."},
		{Role: react.RoleAssistant, Content: "Reading it first.", ToolCalls: []react.ToolCall{
			{ID: "call_1", Name: "site_get", Args: json.RawMessage(`{"site_id":"bakery"}`)},
			{ID: "call_2", Name: "site_publish", Args: json.RawMessage(`{"site_id":"bakery"}`)},
		}},
		{Role: react.RoleTool, ToolCallID: "call_1", ToolName: "site_get", Content: `{"id":"bakery","pages":3}`},
		{Role: react.RoleTool, ToolCallID: "call_2", ToolName: "site_publish", IsError: true,
			Content: "site_publish needs approval. Next: call builtin_node_approval for site_publish."},
		{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{
			{ID: "call_3", Name: "site_publish", Args: json.RawMessage(`{"site_id": "bakery" `)},
		}},
		{Role: react.RoleTool, ToolCallID: "call_3", ToolName: "site_publish", Content: `{"url":"https://example.test/bakery"}`},
		{Role: react.RoleAssistant, Content: "Done."},
		{Role: react.RoleUser, Content: "Thanks."},
	}
	got, err := m.Generate(context.Background(), react.Request{Messages: history, Tools: siteTools})
	require.NoError(t, err)
	assert.Equal(t, react.Response{Text: "The site is published at https://example.test/bakery.",
		ID: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", Model: "gpt-4.1-2025-04-14", FinishReason: "stop",
		Usage: &react.Usage{InputTokens: 19, OutputTokens: 12}}, got)

	assert.JSONEq(t, `"gpt-4.1"`, s.Field(0, "model"))
	assert.JSONEq(t, `0.2`, s.Field(0, "temperature"))
	assert.JSONEq(t, `[
		{"role":"system","content":"You build small websites."},
		{"role":"user","content":"Publish the bakery site."},
		{"role":"assistant","content":"Reading it first.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"site_get","arguments":"{\"site_id\":\"bakery\"}"}},
			{"id":"call_2","type":"function","function":{"name":"site_publish","arguments":"{\"site_id\":\"bakery\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"{\"id\":\"bakery\",\"pages\":3}"},
		{"role":"tool","tool_call_id":"call_2","content":"site_publish needs approval. Next: call builtin_node_approval for site_publish."},
		{"role":"assistant","tool_calls":[
			{"id":"call_3","type":"function","function":{"name":"site_publish","arguments":"{\"site_id\": \"bakery\" "}}]},
		{"role":"tool","tool_call_id":"call_3","content":"{\"url\":\"https://example.test/bakery\"}"},
		{"role":"assistant","content":"Done."},
		{"role":"user","content":"Thanks."}
	]`, s.Field(0, "messages"))
	assert.JSONEq(t, `[
		{"type":"function","function":{"name":"site_get","description":"Read one site by id.",
			"parameters":{"type":"object","properties":{"site_id":{"type":"string"}},"required":["site_id"],"additionalProperties":false}}},
		{"type":"function","function":{"name":"site_publish","description":"Publish a site. Requires approval.",
			"parameters":{"type":"object","properties":{"site_id":{"type":"string"},"max_pages":{"type":"integer","maximum":12}},"required":["site_id"]}}},
		{"type":"function","function":{"name":"builtin_node_finish","description":"Finish the node."}}
	]`, s.Field(0, "tools"))
}

func TestGenerateMovesInterleavedMessagesAfterToolResults(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "completion_text.json"})
	m := newModel(t, s, nil)
	history := []react.Message{
		{Role: react.RoleUser, Content: "Publish."},
		{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{
			{ID: "a", Name: "site_get", Args: json.RawMessage(`{}`)},
			{ID: "b", Name: "site_get", Args: json.RawMessage(`{}`)},
		}},
		{Role: react.RoleTool, ToolCallID: "a", Content: "A"},
		{Role: react.RoleSystem, Content: "hint"},
		{Role: react.RoleTool, ToolCallID: "b", Content: "B"},
	}
	_, err := m.Generate(context.Background(), react.Request{Messages: history})
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"user","content":"Publish."},
		{"role":"assistant","tool_calls":[
			{"id":"a","type":"function","function":{"name":"site_get","arguments":"{}"}},
			{"id":"b","type":"function","function":{"name":"site_get","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"a","content":"A"},
		{"role":"tool","tool_call_id":"b","content":"B"},
		{"role":"system","content":"hint"}
	]`, s.Field(0, "messages"), "a system message between tool results must move after them")
	assert.Equal(t, react.RoleSystem, history[3].Role, "Generate must not reorder the caller's history")
	reqs := s.Requests()
	assert.NotContains(t, reqs[0], "tools", "no tools → no tools field")
	assert.NotContains(t, reqs[0], "temperature", "nil Temperature → server default")
}

func TestGenerateParsesResponses(t *testing.T) {
	adapter.RunParseCases(t, hello, []chattest.ParseCase{
		{
			Name: "text", Reply: reply{File: "completion_text.json"},
			Want: react.Response{Text: "The site is published at https://example.test/bakery.",
				ID: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", Model: "gpt-4.1-2025-04-14", FinishReason: "stop",
				Usage: &react.Usage{InputTokens: 19, OutputTokens: 12}},
			Reason: "a plain answer is text only, with the response's id, model, finish reason and usage",
		},
		{
			Name: "parallel tool calls", Reply: reply{File: "completion_parallel_tool_calls.json"},
			Want: react.Response{Text: "Let me look at both sites.", ToolCalls: []react.ToolCall{
				{ID: "call_8qty38hyfCUkbQ7dvdGs3uFm", Name: "site_get", Args: json.RawMessage(`{"site_id":"bakery"}`)},
				{ID: "call_F4ocGPGtVs0VhHAdLJbjsTtg", Name: "site_get", Args: json.RawMessage(`{"site_id":"florist"}`)},
			}, ID: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", Model: "gpt-4.1-2025-04-14", FinishReason: "tool_calls",
				Usage: &react.Usage{InputTokens: 82, OutputTokens: 44}},
			Reason: "every tool call comes back in order with its id",
		},
		{
			Name: "truncated arguments", Reply: reply{File: "completion_invalid_args.json"},
			Want: react.Response{ToolCalls: []react.ToolCall{
				{ID: "call_Yq0bM2fTb5k3m0Wc8q1xQ9Zr", Name: "site_publish", Args: json.RawMessage(`{"site_id": "bakery", "title": "Fresh br`)},
			}, ID: "chatcmpl-C1truncated0000000000000000", Model: "gpt-4.1-mini-2025-04-14", FinishReason: "length",
				Usage: &react.Usage{InputTokens: 120, OutputTokens: 16}},
			Reason: "invalid JSON arguments are kept verbatim; the core classifies them; the finish reason says why",
		},
		{
			Name: "refusal", Reply: reply{File: "completion_refusal.json"},
			Want: react.Response{Text: "I'm sorry, I can't help with that.",
				ID: "chatcmpl-C2refusal00000000000000000", Model: "gpt-4.1-2025-04-14", FinishReason: "stop",
				Usage: &react.Usage{InputTokens: 30, OutputTokens: 10}},
			Reason: "a refusal without content is the text",
		},
		{
			Name: "compatible server without call ids", Reply: reply{File: "completion_compat_no_ids.json"},
			Want: react.Response{ToolCalls: []react.ToolCall{
				{ID: "call_chatcmpl-612_0", Name: "site_get", Args: json.RawMessage(`{"site_id":"bakery"}`)},
				{ID: "call_chatcmpl-612_1", Name: "site_list"},
			}, ID: "chatcmpl-612", Model: "qwen3:8b", FinishReason: "tool_calls",
				Usage: &react.Usage{InputTokens: 200, OutputTokens: 30}},
			Reason: "missing ids are derived from the completion id so results can pair; empty arguments are nil",
		},
		{
			Name: "cached input and reasoning", Reply: reply{File: "completion_cached_reasoning.json"},
			Want: react.Response{Text: "Both sites are published.",
				ID: "chatcmpl-C3cached0000000000000000000", Model: "o4-mini-2025-04-16", FinishReason: "stop",
				Usage: &react.Usage{InputTokens: 2306, OutputTokens: 410, CachedInputTokens: 1920, ReasoningTokens: 384}},
			Reason: "prompt_tokens already include the cached ones and completion_tokens the reasoning ones: the details are parts, not additions",
		},
		{
			Name: "no usage", Reply: reply{File: "completion_no_usage.json"},
			Want:   react.Response{Text: "Done.", ID: "chatcmpl-841", Model: "llama3.1:8b", FinishReason: "stop"},
			Reason: "a server that reports no usage gives a nil Usage, never a usage of zeros",
		},
	})
}

func TestGenerateDuplicateCallIDsAreReplaced(t *testing.T) {
	s := adapter.NewServer(t, reply{Body: `{"id":"chatcmpl-dup","object":"chat.completion","created":1,"model":"m",
		"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_0","type":"function","function":{"name":"a","arguments":"{}"}},
		{"id":"call_0","type":"function","function":{"name":"b","arguments":"{}"}}]}}]}`})
	got, err := newModel(t, s, nil).Generate(context.Background(), react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}})
	require.NoError(t, err)
	require.Len(t, got.ToolCalls, 2)
	assert.Equal(t, "call_0", got.ToolCalls[0].ID)
	assert.Equal(t, "call_chatcmpl-dup_1", got.ToolCalls[1].ID, "a repeated id would make two results ambiguous")
}

func TestMaxRetriesReachesTheSDK(t *testing.T) {
	s := adapter.NewServer(t,
		reply{Status: 500, File: "error_server.json", Header: map[string]string{"Retry-After-Ms": "1"}},
		reply{File: "completion_text.json"},
	)
	got, err := newModel(t, s, &openai.Options{MaxRetries: 1}).Generate(context.Background(),
		react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}})
	require.NoError(t, err)
	assert.NotEmpty(t, got.Text)
	assert.Len(t, s.Requests(), 2, "MaxRetries 1 allows one retry")
}

func TestRequestOptionsAreApplied(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "completion_text.json"})
	m := newModel(t, s, &openai.Options{RequestOptions: []option.RequestOption{option.WithJSONSet("parallel_tool_calls", false)}})
	_, err := m.Generate(context.Background(), react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}})
	require.NoError(t, err)
	assert.JSONEq(t, `false`, s.Field(0, "parallel_tool_calls"))
}

func TestNewPanicsWithoutModelName(t *testing.T) {
	assert.PanicsWithValue(t, "openai: New with an empty model name", func() {
		openai.New(client(t, "http://127.0.0.1:1/"), "", nil)
	})
}

func TestDescribe(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	require.NoError(t, os.Unsetenv("OPENAI_BASE_URL")) // restored by t.Setenv's cleanup
	m := openai.New(sdk.NewClient(), "gpt-4.1", nil)
	assert.Equal(t, react.ModelInfo{Provider: "openai", Name: "gpt-4.1", ServerAddress: "api.openai.com", ServerPort: 443}, m.Describe(),
		"the SDK's default endpoint")
	m = openai.New(sdk.NewClient(), "deepseek-chat", &openai.Options{Provider: "deepseek"})
	assert.Equal(t, "deepseek", m.Describe().Provider, "Options.Provider tells a compatible server apart")

	s := adapter.NewServer(t) // no reply: any request fails the test
	temp, topP := 0.5, 0.8
	m = newModel(t, s, &openai.Options{Temperature: &temp, TopP: &topP, MaxTokens: 512})
	want := react.ModelInfo{Provider: "openai", Name: "gpt-4.1", ServerAddress: "127.0.0.1", Temperature: &temp, TopP: &topP, MaxTokens: 512}
	got := m.Describe()
	assert.NotZero(t, got.ServerPort, "the test server's port")
	got.ServerPort = 0
	assert.Equal(t, want, got, "the endpoint of the client's base URL and the parameters set")
	assert.Empty(t, s.Requests(), "finding the endpoint sends nothing")
}

// The parameters set in Options are sent.
func TestRequestParameters(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "completion_text.json"})
	temp, topP := 0.5, 0.8
	_, err := newModel(t, s, &openai.Options{Temperature: &temp, TopP: &topP, MaxTokens: 512, NoStream: true}).Generate(context.Background(), hello)
	require.NoError(t, err)
	assert.JSONEq(t, "0.5", s.Field(0, "temperature"))
	assert.JSONEq(t, "0.8", s.Field(0, "top_p"))
	assert.JSONEq(t, "512", s.Field(0, "max_completion_tokens"))
}

func TestName(t *testing.T) {
	m := openai.New(client(t, "http://127.0.0.1:1/"), "qwen3:8b", nil)
	assert.Equal(t, "qwen3:8b", m.Name())
}

func TestGenerateConcurrent(t *testing.T) {
	adapter.RunConcurrent(t, 8, reply{File: "completion_parallel_tool_calls.json"}, hello)
}
