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
	// Parts are the pieces of an assistant turn in the order the API
	// produced them, with what the API asks to get back (see [Part]);
	// nil when the model gave none or they were inconsistent. An adapter
	// replays a turn from its Parts when it has them, else from Content
	// and ToolCalls.
	Parts []Part `json:"parts,omitempty"`
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
// Tools as read-only: the loop reuses their backing arrays between rounds,
// and Tools between the runs of nodes with the same tools.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
}

// Response is one model turn's output: text, tool calls, or both, and what
// the API said about the turn. The loop keeps only Text and ToolCalls in
// the run's history; the other fields are for observers (see
// [EventModelEnd]), which receive the whole Response.
type Response struct {
	// Text is the model's text.
	Text string
	// ToolCalls are the model's tool calls, in order.
	ToolCalls []ToolCall
	// ID is the API's id of the response ("chatcmpl-…", "msg_…"); "" when
	// the API gives none.
	ID string
	// Model is the model that produced the response as the API named it,
	// which may be more precise than the model requested (a dated
	// version); "" when the API does not say.
	Model string
	// FinishReason is why the model stopped, in the API's own words
	// (OpenAI: stop, tool_calls, length, content_filter; Anthropic:
	// end_turn, tool_use, max_tokens, stop_sequence, refusal); "" when the
	// API does not say.
	FinishReason string
	// Usage is the turn's token usage; nil when the API did not report
	// it (a zero count that was reported is a non-nil Usage of zeros).
	Usage *Usage
	// Parts are the turn's pieces in the order the API produced them
	// (see [Part]), kept in the assistant [Message] for the adapter to
	// replay; nil when the adapter gives none.
	Parts []Part
}

// Usage is the token usage of one model turn as the API reported it,
// normalized across APIs so that InputTokens is every input token and
// OutputTokens every generated one.
type Usage struct {
	// InputTokens counts every token of the request, cached ones included
	// (OpenAI: prompt_tokens; Anthropic: input_tokens +
	// cache_read_input_tokens + cache_creation_input_tokens).
	InputTokens int64
	// OutputTokens counts every generated token, reasoning included
	// (OpenAI: completion_tokens; Anthropic: output_tokens).
	OutputTokens int64
	// CachedInputTokens is the part of InputTokens read from the
	// provider's prompt cache (OpenAI: prompt_tokens_details.cached_tokens;
	// Anthropic: cache_read_input_tokens); 0 when none or not reported.
	CachedInputTokens int64
	// CacheCreationInputTokens is the part of InputTokens written to the
	// provider's prompt cache (Anthropic: cache_creation_input_tokens); 0
	// when none or not reported.
	CacheCreationInputTokens int64
	// ReasoningTokens is the part of OutputTokens spent on reasoning
	// (OpenAI: completion_tokens_details.reasoning_tokens); 0 when none or
	// not reported.
	ReasoningTokens int64
}

// ModelInfo names the provider and the model a [Model] calls, for events
// and telemetry.
type ModelInfo struct {
	// Provider is the API family, named as the OpenTelemetry GenAI
	// semantic conventions name providers (gen_ai.provider.name): openai,
	// anthropic, aws.bedrock, …; "" when unknown.
	Provider string
	// Name is the model requests are sent to ("gpt-4.1"); "" when unknown.
	Name string
	// ServerAddress and ServerPort are the host and port of the endpoint
	// requests go to ("api.openai.com", 443), for telemetry's
	// server.address and server.port; "" and 0 when unknown.
	ServerAddress string
	ServerPort    int
	// Temperature, TopP and MaxTokens are the request parameters the host
	// set on the model (nil and 0 when it left them to the API), for
	// telemetry's gen_ai.request.*. An adapter that sends a default of
	// its own (Anthropic's required max_tokens) reports it.
	Temperature *float64
	TopP        *float64
	MaxTokens   int64
	// SystemApart reports an API that takes the system instructions apart
	// from the chat history (Anthropic's system, Gemini's
	// systemInstruction, Bedrock's system, the Responses API's
	// instructions): telemetry records the system messages as
	// gen_ai.system_instructions rather than as input messages.
	SystemApart bool
}

// Describer is implemented by a [Model] that can say which provider and
// model it calls. [New] asks once and reports the answer in [RunStartEvent]
// and [ModelStartEvent]; a Model that does not implement it is reported
// with a zero [ModelInfo].
type Describer interface {
	Describe() ModelInfo
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
