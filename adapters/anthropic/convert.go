package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/reactguard/reactguard/react"
)

// turn is one message under construction: its role and blocks.
type turn struct {
	user   bool
	blocks []sdk.ContentBlockParamUnion
}

// toMessages converts the loop's history into the top-level system blocks
// and the messages of a Messages API request:
//
//   - system messages become top-level system text blocks, in order;
//   - user messages become text blocks of a user message;
//   - assistant messages become an assistant message with a text block
//     and one tool_use block per tool call;
//   - tool messages become tool_result blocks (tool_use_id, the text,
//     is_error from [react.Message.IsError]) of a user message.
//
// Consecutive blocks of the same role form one message, so all results of
// an assistant turn travel in ONE user message, as the API requires, and
// within a user message the tool_result blocks come first. Empty texts are
// left out (the API refuses empty text blocks) and a message left with no
// block is dropped.
func toMessages(history []react.Message) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var system []sdk.TextBlockParam
	var turns []turn
	for i, m := range history {
		t := turn{user: true}
		switch m.Role {
		case react.RoleSystem:
			if m.Content != "" {
				system = append(system, sdk.TextBlockParam{Text: m.Content})
			}
			continue
		case react.RoleUser:
			if m.Content != "" {
				t.blocks = append(t.blocks, sdk.NewTextBlock(m.Content))
			}
		case react.RoleAssistant:
			t.user = false
			if m.Content != "" {
				t.blocks = append(t.blocks, sdk.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				t.blocks = append(t.blocks, sdk.NewToolUseBlock(tc.ID, toolInput(tc.Args), tc.Name))
			}
		case react.RoleTool:
			if m.ToolCallID == "" {
				return nil, nil, fmt.Errorf("message %d: tool result without a tool call id", i)
			}
			t.blocks = append(t.blocks, toolResult(m))
		default:
			return nil, nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(t.blocks) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].user == t.user {
			turns[n-1].blocks = append(turns[n-1].blocks, t.blocks...)
			continue
		}
		turns = append(turns, t)
	}
	out := make([]sdk.MessageParam, len(turns))
	for i, t := range turns {
		if !t.user {
			out[i] = sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: t.blocks}}
			continue
		}
		slices.SortStableFunc(t.blocks, func(a, b sdk.ContentBlockParamUnion) int {
			return resultRank(a) - resultRank(b)
		})
		out[i] = sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: t.blocks}}
	}
	return system, out, nil
}

// resultRank orders tool_result blocks before any other block.
func resultRank(b sdk.ContentBlockParamUnion) int {
	if b.OfToolResult != nil {
		return 0
	}
	return 1
}

// toolResult is the tool_result block of one tool message.
func toolResult(m react.Message) sdk.ContentBlockParamUnion {
	r := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID, IsError: sdk.Bool(m.IsError)}
	if m.Content != "" {
		r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &r}
}

// emptyInput stands in for arguments that are not a JSON object.
var emptyInput = json.RawMessage(`{}`)

// toolInput is the input of a tool_use block: the arguments verbatim when
// they are a JSON object, else an empty object. The API only produces
// objects, so anything else came from elsewhere (a history recorded with
// another model); the tool result paired with the call already explains
// the rejection.
func toolInput(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return emptyInput
	}
	return trimmed
}

// toTools converts tool specs to custom tools. An empty input schema means
// a tool without parameters; a schema that is not a JSON object, or whose
// type is not "object", is an error.
func toTools(specs []react.ToolSpec) ([]sdk.ToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := make([]sdk.ToolUnionParam, 0, len(specs))
	for _, s := range specs {
		schema, err := inputSchema(s.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
		}
		t := sdk.ToolParam{Name: s.Name, InputSchema: schema}
		if s.Description != "" {
			t.Description = sdk.String(s.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &t})
	}
	return out, nil
}

// inputSchema splits a JSON Schema object into the SDK's input_schema:
// properties and required, every other member kept verbatim.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	schema := sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	if len(bytes.TrimSpace(raw)) == 0 {
		return schema, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var members map[string]json.RawMessage
	if err := dec.Decode(&members); err != nil {
		return schema, err
	}
	if members == nil {
		return schema, errors.New("not a JSON object")
	}
	if dec.More() {
		return schema, errors.New("trailing data after the JSON object")
	}
	for k, v := range members {
		switch k {
		case "type":
			var typ string
			if err := json.Unmarshal(v, &typ); err != nil || typ != "object" {
				return schema, fmt.Errorf(`type is %s; want "object"`, v)
			}
		case "properties":
			schema.Properties = v
		case "required":
			if err := json.Unmarshal(v, &schema.Required); err != nil {
				return schema, fmt.Errorf("required: %w", err)
			}
		default:
			if schema.ExtraFields == nil {
				schema.ExtraFields = map[string]any{}
			}
			schema.ExtraFields[k] = v
		}
	}
	return schema, nil
}

// fromMessage converts the response: the text blocks, concatenated, and
// the tool_use blocks, in order, with their inputs verbatim. Other blocks
// (thinking, server tools) are ignored. A response without a content
// array is malformed; an empty one is an empty turn.
func fromMessage(msg *sdk.Message) (react.Response, error) {
	if msg == nil || !msg.JSON.Content.Valid() {
		return react.Response{}, errors.New("the response has no content")
	}
	out := react.Response{ID: msg.ID, Model: msg.Model, FinishReason: string(msg.StopReason), Usage: usage(msg)}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			out.Text += b.Text
		case "tool_use":
			call := react.ToolCall{ID: b.ID, Name: b.Name}
			if len(b.Input) > 0 {
				call.Args = append(json.RawMessage(nil), b.Input...)
			}
			out.ToolCalls = append(out.ToolCalls, call)
		}
	}
	return out, nil
}

// usage returns the message's token usage with InputTokens counting every
// input token: Anthropic's input_tokens leaves out the tokens read from and
// written to the prompt cache, so they are added. Nil when the body has no
// usage.
func usage(msg *sdk.Message) *react.Usage {
	if !msg.JSON.Usage.Valid() {
		return nil
	}
	u := msg.Usage
	return &react.Usage{
		InputTokens:              u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:             u.OutputTokens,
		CachedInputTokens:        u.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
		ReasoningTokens:          u.OutputTokensDetails.ThinkingTokens,
	}
}
