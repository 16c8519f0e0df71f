package chattest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// half cuts s in two at a rune boundary near its middle, so that a test's
// stream sends every text and argument in two fragments.
func half(s string) (string, string) {
	i := len(s) / 2
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i], s[i:]
}

// OpenAIStream renders a chat completion body (the non-streaming answer)
// as the event stream the API sends for it with "stream": true: a chunk
// per half of the text and of each call's arguments, the finish reason,
// the usage when the body has one, and data: [DONE]. It panics on a body
// that is not a completion: a test's own mistake.
func OpenAIStream(completion string) string {
	var c struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(completion), &c); err != nil || len(c.Choices) == 0 {
		panic(fmt.Sprintf("chattest.OpenAIStream: not a completion: %v", err))
	}
	var b strings.Builder
	chunk := func(delta map[string]any, finish any) {
		d, _ := json.Marshal(map[string]any{"id": c.ID, "object": "chat.completion.chunk", "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		b.WriteString("data: " + string(d) + "\n\n")
	}
	msg := c.Choices[0].Message
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if msg.Content != "" {
		a, z := half(msg.Content)
		chunk(map[string]any{"content": a}, nil)
		chunk(map[string]any{"content": z}, nil)
	}
	for i, tc := range msg.ToolCalls {
		a, z := half(tc.Function.Arguments)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Function.Name, "arguments": a}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": z}}}}, nil)
	}
	chunk(map[string]any{}, c.Choices[0].FinishReason)
	if len(c.Usage) > 0 && string(c.Usage) != "null" {
		d, _ := json.Marshal(map[string]any{"id": c.ID, "object": "chat.completion.chunk", "model": c.Model, "choices": []any{}, "usage": c.Usage})
		b.WriteString("data: " + string(d) + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// AnthropicStream renders a Messages API body (the non-streaming answer)
// as the event stream the API sends for it with "stream": true:
// message_start, each content block's start, its text, input or thinking
// in two fragments (a thinking block's signature after them) and its stop, message_delta with the stop reason and usage,
// message_stop. It panics on a body that is not a message.
func AnthropicStream(message string) string {
	var m struct {
		ID         string `json:"id"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			Thinking  string          `json:"thinking"`
			Signature string          `json:"signature"`
		} `json:"content"`
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(message), &m); err != nil {
		panic(fmt.Sprintf("chattest.AnthropicStream: not a message: %v", err))
	}
	var b strings.Builder
	event := func(v map[string]any) {
		d, _ := json.Marshal(v)
		b.WriteString("event: " + v["type"].(string) + "\ndata: " + string(d) + "\n\n")
	}
	event(map[string]any{"type": "message_start", "message": map[string]any{"id": m.ID, "type": "message", "role": "assistant",
		"model": m.Model, "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": m.Usage.InputTokens, "output_tokens": 1}}})
	for i, c := range m.Content {
		switch c.Type {
		case "text":
			event(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			a, z := half(c.Text)
			for _, s := range []string{a, z} {
				event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s}})
			}
		case "tool_use":
			event(map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
			a, z := half(string(c.Input))
			for _, s := range []string{a, z} {
				event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": s}})
			}
		case "thinking":
			event(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
			a, z := half(c.Thinking)
			for _, s := range []string{a, z} {
				event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": s}})
			}
			event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": c.Signature}})
		default:
			continue
		}
		event(map[string]any{"type": "content_block_stop", "index": i})
	}
	event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": m.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": m.Usage.OutputTokens}})
	event(map[string]any{"type": "message_stop"})
	return b.String()
}
