package otel

import (
	"encoding/json"
	"strings"

	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/react"
)

// The JSON forms of message contents in conventions v1.41.0
// (gen-ai-input-messages.json, gen-ai-output-messages.json): a message is
// a role and parts; a part is text, a tool call or a tool call's response.
type (
	chatMessage struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"` // output messages only
	}
	part struct {
		Type      string `json:"type"` // text, tool_call, tool_call_response
		Content   string `json:"content,omitempty"`
		ID        string `json:"id,omitempty"`
		Name      string `json:"name,omitempty"`
		Arguments any    `json:"arguments,omitempty"`
		Response  any    `json:"response,omitempty"`
	}
)

// arguments are a call's arguments as JSON when they are, else as text.
func arguments(args json.RawMessage) any {
	if len(args) == 0 {
		return nil
	}
	if json.Valid(args) {
		return args
	}
	return string(args)
}

func toChat(m react.Message) chatMessage {
	c := chatMessage{Role: string(m.Role), Parts: []part{}}
	switch m.Role {
	case react.RoleTool:
		c.Parts = append(c.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
	default:
		if m.Content != "" {
			c.Parts = append(c.Parts, part{Type: "text", Content: m.Content})
		}
		for _, tc := range m.ToolCalls {
			c.Parts = append(c.Parts, part{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: arguments(tc.Args)})
		}
	}
	return c
}

// encode is the JSON of v without HTML escaping (a trace viewer shows
// "<b>" better than "\u003cb\u003e"); "" if v does not encode.
func encode(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// inputMessages is gen_ai.input.messages: the history sent to the model,
// its system message included.
func inputMessages(msgs []react.Message) string {
	out := make([]chatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = toChat(m)
	}
	return encode(out)
}

// systemInstructions splits the history sent to a model whose API takes
// the system instructions apart: gen_ai.system_instructions, the system
// messages as text parts in order ("" when there are none), and the other
// messages, for gen_ai.input.messages.
func systemInstructions(msgs []react.Message) (string, []react.Message) {
	var parts []part
	rest := make([]react.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != react.RoleSystem {
			rest = append(rest, m)
			continue
		}
		if m.Content != "" {
			parts = append(parts, part{Type: "text", Content: m.Content})
		}
	}
	if len(parts) == 0 {
		return "", rest
	}
	return encode(parts), rest
}

// outputMessages is gen_ai.output.messages: the model's answer. Its
// finish_reason, which the conventions' schema requires, is the API's own;
// when the API gave none, tool_call for a turn with tool calls, stop
// otherwise.
func outputMessages(r react.Response) string {
	c := toChat(react.Message{Role: react.RoleAssistant, Content: r.Text, ToolCalls: r.ToolCalls})
	c.FinishReason = r.FinishReason
	if c.FinishReason == "" {
		c.FinishReason = "stop"
		if len(r.ToolCalls) > 0 {
			c.FinishReason = "tool_call"
		}
	}
	return encode([]chatMessage{c})
}

// toolResult is gen_ai.tool.call.result, recorded for a SUCCESS only: its
// data (its message when it has none).
func toolResult(o observation.Observation) string {
	if d := o.Data(); d != nil {
		if s := encode(d); s != "" {
			return s
		}
	}
	return o.Reason()
}
