package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/openai/openai-go/v3"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// toMessages converts the loop's history into chat completion messages:
// system → system, user → user, assistant → assistant with content and
// tool_calls (function calls, arguments sent back verbatim), tool → one
// tool message per call id.
//
// The API requires the tool messages answering an assistant turn to
// follow it directly, so between an assistant message with tool calls and
// the next assistant message the tool messages are sent first and any
// other message (a phase hint, a user answer) after them, each group in
// its original order.
func toMessages(history []react.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(history))
	for i, m := range modelkit.ResultsFirst(history) {
		switch m.Role {
		case react.RoleSystem:
			out = append(out, sdk.SystemMessage(m.Content))
		case react.RoleUser:
			out = append(out, sdk.UserMessage(m.Content))
		case react.RoleAssistant:
			out = append(out, assistantMessage(m))
		case react.RoleTool:
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("message %d: tool result without a tool call id", i)
			}
			out = append(out, sdk.ToolMessage(m.Content, m.ToolCallID))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// assistantMessage converts one assistant turn. Content is always present
// when there are no tool calls, as the API requires.
func assistantMessage(m react.Message) sdk.ChatCompletionMessageParamUnion {
	var a sdk.ChatCompletionAssistantMessageParam
	if m.Content != "" || len(m.ToolCalls) == 0 {
		a.Content.OfString = sdk.String(m.Content)
	}
	for _, tc := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      tc.Name,
					Arguments: string(tc.Args),
				},
			},
		})
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// toTools converts tool specs to function tools. An empty input schema
// means a function without parameters; a schema that is not a JSON object
// is an error.
func toTools(specs []react.ToolSpec) ([]sdk.ChatCompletionToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := make([]sdk.ChatCompletionToolUnionParam, 0, len(specs))
	for _, s := range specs {
		fd := sdk.FunctionDefinitionParam{Name: s.Name}
		if s.Description != "" {
			fd.Description = sdk.String(s.Description)
		}
		if len(bytes.TrimSpace(s.InputSchema)) > 0 {
			params, err := schemaObject(s.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
			}
			fd.Parameters = params
		}
		out = append(out, sdk.ChatCompletionFunctionTool(fd))
	}
	return out, nil
}

// schemaObject splits a JSON Schema object into its top-level members,
// each kept as raw JSON so numbers and key order inside survive exactly.
func schemaObject(raw json.RawMessage) (map[string]any, error) {
	members, err := modelkit.SchemaObject(raw)
	if err != nil {
		return nil, err
	}
	obj := make(map[string]any, len(members))
	for k, v := range members {
		obj[k] = v
	}
	return obj, nil
}

// fromCompletion converts the first choice into a react.Response. Text is
// the content, or the refusal when there is no content. Tool call
// arguments are kept verbatim; an empty arguments string becomes nil Args.
// A tool call without an id, or with an id already used in this response
// (some OpenAI-compatible servers do this), gets a deterministic id derived
// from the completion so results can be paired with it.
func fromCompletion(c *sdk.ChatCompletion) (react.Response, error) {
	if c == nil || len(c.Choices) == 0 {
		return react.Response{}, errors.New("the response has no choices")
	}
	msg := c.Choices[0].Message
	out := react.Response{Text: msg.Content, ID: c.ID, Model: c.Model, FinishReason: c.Choices[0].FinishReason, Usage: usage(c)}
	if out.Text == "" {
		out.Text = msg.Refusal
	}
	ids := make([]string, len(msg.ToolCalls))
	for i, tc := range msg.ToolCalls {
		ids[i] = tc.ID
	}
	base := c.ID
	if base == "" {
		base = modelkit.HashID([]byte(c.RawJSON()))
	}
	modelkit.CallIDs(ids, base)
	for i, tc := range msg.ToolCalls {
		call := react.ToolCall{ID: ids[i], Name: tc.Function.Name}
		args := tc.Function.Arguments
		if tc.Type == "custom" {
			call.Name, args = tc.Custom.Name, tc.Custom.Input
		}
		if args != "" {
			call.Args = json.RawMessage(args)
		}
		out.ToolCalls = append(out.ToolCalls, call)
	}
	return out, nil
}

// usage returns the completion's token usage, nil when the server sent
// none (some compatible servers do not).
func usage(c *sdk.ChatCompletion) *react.Usage {
	if !c.JSON.Usage.Valid() {
		return nil
	}
	u := c.Usage
	return &react.Usage{
		InputTokens:       u.PromptTokens,
		OutputTokens:      u.CompletionTokens,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		ReasoningTokens:   u.CompletionTokensDetails.ReasoningTokens,
	}
}
