package openairesponses_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openairesponses"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestGenerateParsesResponses(t *testing.T) {
	cases := []chattest.ParseCase{
		{Name: "parallel calls and reasoning", Reply: reply{File: "response_parallel.json"},
			Want: react.Response{Text: "Checking both.", ID: "resp_par", Model: "gpt-5-2025-08-07", FinishReason: "completed",
				ToolCalls: []react.ToolCall{
					{ID: "call_a", Name: "list_spaces", Args: json.RawMessage(`{}`)},
					{ID: "call_b", Name: "list_spaces", Args: json.RawMessage(`{"page": 2}`)},
				},
				Usage: &react.Usage{InputTokens: 1200, OutputTokens: 80, CachedInputTokens: 1024, ReasoningTokens: 50}},
			Reason: "parallel function_call items in order, arguments verbatim, cached and reasoning tokens"},
		{Name: "incomplete", Reply: reply{File: "response_cut_off.json"},
			Want: react.Response{ID: "resp_cut", Model: "gpt-5-2025-08-07", FinishReason: "max_output_tokens",
				ToolCalls: []react.ToolCall{{ID: "call_cut_1", Name: "create_site", Args: json.RawMessage(`{"name": "Spring Sale", "space_id": "sp-4"}`)}},
				Usage:     &react.Usage{InputTokens: 400, OutputTokens: 64}},
			Reason: "an incomplete response's reason is the finish reason react.CutOff knows"},
		{Name: "refusal", Reply: reply{File: "response_refusal.json"},
			Want:   react.Response{Text: "I can't help with that.", ID: "resp_ref", Model: "gpt-5-2025-08-07", FinishReason: "completed", Usage: &react.Usage{InputTokens: 300, OutputTokens: 40}},
			Reason: "a refusal is the turn's text"},
	}
	adapter.RunParseCases(t, hello, cases)
	for i := range cases {
		cases[i].Reply = sse(t, cases[i].Reply.File)
	}
	t.Run("streamed", func(t *testing.T) { streaming.RunParseCases(t, hello, cases) })
}

// Answered and streamed turns are the same, Parts included.
func TestStreamAnswersAsGenerate(t *testing.T) {
	for _, f := range []string{"response_parallel.json", "loop_1_read.json", "response_cut_off.json"} {
		s := adapter.NewServer(t, reply{File: f})
		want, err := newModel(t, s, &openairesponses.Options{NoStream: true}).Generate(context.Background(), hello)
		require.NoError(t, err)
		s = streaming.NewServer(t, sse(t, f))
		got, err := react.Collect(newModel(t, s, nil).GenerateStream(context.Background(), hello))
		require.NoError(t, err)
		assert.Equal(t, normalized(t, want), normalized(t, got), f)
		assert.NotEmpty(t, got.Parts, f)
	}
}

func TestGenerateSendsHistoryAndTools(t *testing.T) {
	s := adapter.NewServer(t, reply{File: "response_refusal.json"})
	temp := 0.3
	m := newModel(t, s, &openairesponses.Options{Temperature: &temp, MaxTokens: 900, NoStream: true})
	history := []react.Message{
		{Role: react.RoleSystem, Content: "Rules."},
		{Role: react.RoleUser, Content: "Do it."},
		{Role: react.RoleAssistant, Content: "On it.", ToolCalls: []react.ToolCall{{ID: "call_1", Name: "list_spaces", Args: json.RawMessage(`{"page":1}`)}}},
		{Role: react.RoleUser, Content: "phase hint"},
		{Role: react.RoleTool, ToolCallID: "call_1", ToolName: "list_spaces", Content: "[]", IsError: true},
		{Role: react.RoleSystem, Content: "More rules."},
	}
	_, err := m.Generate(context.Background(), react.Request{Messages: history, Tools: hello.Tools})
	require.NoError(t, err)
	assert.JSONEq(t, `"Rules.\n\nMore rules."`, s.Field(0, "instructions"))
	assert.JSONEq(t, `[
		{"role":"user","content":"Do it."},
		{"role":"assistant","content":"On it."},
		{"type":"function_call","call_id":"call_1","name":"list_spaces","arguments":"{\"page\":1}"},
		{"type":"function_call_output","call_id":"call_1","output":"[]"},
		{"role":"user","content":"phase hint"}
	]`, s.Field(0, "input"), "the output right after its call, the hint after it")
	assert.JSONEq(t, `[{"type":"function","name":"list_spaces","description":"List spaces.","parameters":{"type":"object"},"strict":false}]`, s.Field(0, "tools"))
	assert.JSONEq(t, `0.3`, s.Field(0, "temperature"))
	assert.JSONEq(t, `900`, s.Field(0, "max_output_tokens"))
	assert.JSONEq(t, `false`, s.Field(0, "store"))
}

func TestDescribe(t *testing.T) {
	s := adapter.NewServer(t)
	got := newModel(t, s, nil).Describe()
	assert.Equal(t, "127.0.0.1", got.ServerAddress)
	assert.Equal(t, "openai", got.Provider)
	assert.True(t, got.SystemApart, "the system messages are the instructions")
	assert.Empty(t, s.Requests())
	t.Setenv("OPENAI_BASE_URL", "")
	require.NoError(t, os.Unsetenv("OPENAI_BASE_URL"))
	got = openairesponses.New(oai.NewClient(), "gpt-5", &openairesponses.Options{Provider: "azure.ai.openai"}).Describe()
	assert.Equal(t, "api.openai.com", got.ServerAddress)
	assert.Equal(t, "azure.ai.openai", got.Provider)
}

func TestNewPanicsWithoutModelName(t *testing.T) {
	assert.PanicsWithValue(t, "openairesponses: New with an empty model name", func() { openairesponses.New(oai.NewClient(), "", nil) })
}

func TestGenerateConcurrent(t *testing.T) {
	adapter.RunConcurrent(t, 8, reply{File: "response_parallel.json"}, hello)
}

// normalized is r with its opaque parts' JSON in one key order (the test
// stream re-encodes the items it streams).
func normalized(t *testing.T, r react.Response) react.Response {
	t.Helper()
	for i, p := range r.Parts {
		if p.Kind != react.PartOpaque {
			continue
		}
		var v any
		require.NoError(t, json.Unmarshal(p.Data, &v))
		b, err := json.Marshal(v)
		require.NoError(t, err)
		r.Parts[i].Data = b
	}
	return r
}

// Without store, a reasoning item that came without its encrypted
// content (a turn answered while the host had Store on, a server that
// sends none) is left out of the replay, and its turn's function calls go
// without their item ids: the API would look the reasoning item up by its
// id and refuse every later request. With store the API keeps the items:
// everything goes back as it came. A reasoning item with its encrypted
// content always goes back.
func TestReplayReasoningWithoutEncryptedContent(t *testing.T) {
	turn := func(reasoning string) []react.Message {
		return []react.Message{
			{Role: react.RoleUser, Content: "go"},
			{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{{ID: "call_1", Name: "list_spaces", Args: json.RawMessage(`{}`)}},
				Parts: []react.Part{
					{Kind: react.PartOpaque, API: openairesponses.API, Data: []byte(reasoning)},
					{Kind: react.PartCall, Call: 0, API: openairesponses.API, Data: []byte(`{"id":"fc_1"}`)},
				}},
			{Role: react.RoleTool, ToolCallID: "call_1", ToolName: "list_spaces", Content: "[]"},
		}
	}
	const (
		bare       = `{"type":"reasoning","id":"rs_1","summary":[]}`
		nullEnc    = `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":null}`
		encrypted  = `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA=="}`
		call       = `{"type":"function_call","call_id":"call_1","name":"list_spaces","arguments":"{}"}`
		callWithID = `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"list_spaces","arguments":"{}"}`
		output     = `{"type":"function_call_output","call_id":"call_1","output":"[]"}`
		user       = `{"role":"user","content":"go"}`
	)
	cases := []struct {
		name      string
		store     bool
		reasoning string
		want      string
		reason    string
	}{
		{"no encrypted content, no store", false, bare, `[` + user + `,` + call + `,` + output + `]`,
			"the API keeps no item: the reasoning item is left out, the call's item id with it"},
		{"null encrypted content, no store", false, nullEnc, `[` + user + `,` + call + `,` + output + `]`,
			"null is no content"},
		{"encrypted content, no store", false, encrypted, `[` + user + `,` + encrypted + `,` + callWithID + `,` + output + `]`,
			"the encrypted content goes back in place, with the call's item id"},
		{"no encrypted content, store", true, bare, `[` + user + `,` + bare + `,` + callWithID + `,` + output + `]`,
			"the API keeps the items: the reasoning item is found by its id"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			s := adapter.NewServer(t, reply{File: "loop_5_finish.json"})
			m := newModel(t, s, &openairesponses.Options{NoStream: true, Store: tt.store})
			_, err := m.Generate(context.Background(), react.Request{Messages: turn(tt.reasoning)})
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, s.Field(0, "input"), tt.reason)
		})
	}
}
