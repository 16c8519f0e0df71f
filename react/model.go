package react

import (
	"context"
	"encoding/json"
)

// Role is the author of a [Message].
type Role string

// The roles of a chat history.
const (
	RoleSystem    Role = "system"    // instructions, rules, phase hint
	RoleUser      Role = "user"      // the user's words
	RoleAssistant Role = "assistant" // the model's text and tool calls
	RoleTool      Role = "tool"      // the result of one tool call
)

// Message is one entry of the chat history the loop keeps and sends to the
// model.
type Message struct {
	// Role says who wrote it.
	Role Role `json:"role"`
	// Content is the text: the model's text, the user's words, a tool
	// result as rendered for the model, or system text.
	Content string `json:"content,omitempty"`
	// ToolCalls are the assistant's tool calls, in order (RoleAssistant).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID pairs a tool result with its call (RoleTool).
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName is the name of the called tool (RoleTool).
	ToolName string `json:"tool_name,omitempty"`
	// IsError reports that the tool result is not a SUCCESS (RoleTool);
	// adapters map it to fields such as Anthropic's is_error.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is one tool call the model made.
type ToolCall struct {
	// ID is the model's call id. Results are paired with calls by it.
	ID string `json:"id"`
	// Name is the tool the model called.
	Name string `json:"name"`
	// Args are the arguments exactly as the model sent them; they may be
	// anything, including invalid JSON.
	Args json.RawMessage `json:"args"`
}

// ToolSpec describes one tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"` // a JSON Schema object
}

// Request is one model turn's input. The model must treat Messages and
// Tools as read-only: the loop reuses their backing arrays between rounds.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
}

// Response is one model turn's output: text, tool calls, or both.
type Response struct {
	Text      string
	ToolCalls []ToolCall
}

// Model is any LLM client. Generate returns the model's next turn. An
// error means the model could not answer (rate limit, 5xx, malformed body,
// deadline); the loop returns it to the host with a resumable snapshot and
// never turns it into a tool outcome.
type Model interface {
	Generate(ctx context.Context, req Request) (Response, error)
}

// ModelFunc adapts a function to [Model].
type ModelFunc func(ctx context.Context, req Request) (Response, error)

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }
