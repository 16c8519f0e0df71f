package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	sdk "github.com/openai/openai-go/v3"

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
	for i, m := range ordered(history) {
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

// ordered returns history with, after each assistant message that has tool
// calls, the tool messages up to the next assistant message moved ahead of
// the other messages in that span. It returns history itself when nothing
// moves, and never modifies it.
func ordered(history []react.Message) []react.Message {
	var out []react.Message // nil until something moves
	for i := 0; i < len(history); i++ {
		if history[i].Role != react.RoleAssistant || len(history[i].ToolCalls) == 0 {
			if out != nil {
				out = append(out, history[i])
			}
			continue
		}
		end := i + 1
		for end < len(history) && history[end].Role != react.RoleAssistant {
			end++
		}
		span := history[i+1 : end]
		if out == nil && !needsMove(span) {
			i = end - 1
			continue
		}
		if out == nil {
			out = append(make([]react.Message, 0, len(history)), history[:i]...)
		}
		out = append(out, history[i])
		for _, m := range span {
			if m.Role == react.RoleTool {
				out = append(out, m)
			}
		}
		for _, m := range span {
			if m.Role != react.RoleTool {
				out = append(out, m)
			}
		}
		i = end - 1
	}
	if out == nil {
		return history
	}
	return out
}

// needsMove reports whether a non-tool message precedes a tool message.
func needsMove(span []react.Message) bool {
	other := false
	for _, m := range span {
		if m.Role != react.RoleTool {
			other = true
		} else if other {
			return true
		}
	}
	return false
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
	dec := json.NewDecoder(bytes.NewReader(raw))
	var members map[string]json.RawMessage
	if err := dec.Decode(&members); err != nil {
		return nil, err
	}
	if members == nil {
		return nil, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
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
	seen := make(map[string]bool, len(msg.ToolCalls))
	for i, tc := range msg.ToolCalls {
		call := react.ToolCall{ID: tc.ID, Name: tc.Function.Name}
		args := tc.Function.Arguments
		if tc.Type == "custom" {
			call.Name, args = tc.Custom.Name, tc.Custom.Input
		}
		if call.ID == "" || seen[call.ID] {
			base := syntheticID(c, i)
			call.ID = base
			for n := 1; seen[call.ID]; n++ {
				call.ID = base + "_" + strconv.Itoa(n)
			}
		}
		seen[call.ID] = true
		if args != "" {
			call.Args = json.RawMessage(args)
		}
		out.ToolCalls = append(out.ToolCalls, call)
	}
	return out, nil
}

// syntheticID derives a call id from the completion id (or, without one,
// a hash of the raw response) and the call's index.
func syntheticID(c *sdk.ChatCompletion, i int) string {
	base := c.ID
	if base == "" {
		h := fnv.New64a()
		h.Write([]byte(c.RawJSON()))
		base = strconv.FormatUint(h.Sum64(), 36)
	}
	return "call_" + base + "_" + strconv.Itoa(i)
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
