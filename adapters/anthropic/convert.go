package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// API names this adapter's wire format in [react.Part].API: the opaque
// parts it writes (thinking blocks) are sent back only by it.
const API = "anthropic"

// toMessages converts the loop's history into the top-level system blocks
// and the messages of a Messages API request, through [modelkit.Turns]:
//
//   - system messages become top-level system text blocks, in order;
//   - user messages become text blocks of a user message;
//   - assistant messages become an assistant message with its blocks in
//     the order the API sent them (its Parts: text blocks apart and in
//     their place between tool_use blocks, thinking blocks sent back with
//     their signatures), or, for a turn without Parts (another model's),
//     a text block and one tool_use block per tool call;
//   - tool messages become tool_result blocks (tool_use_id, the text,
//     is_error from [react.Message.IsError]) of a user message.
//
// Consecutive blocks of the same role form one message, so all results of
// an assistant turn travel in ONE user message, as the API requires, and
// within a user message the tool_result blocks come first. Empty texts are
// left out (the API refuses empty text blocks) and a message left with no
// block is dropped.
func toMessages(history []react.Message) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	sys, turns, err := modelkit.Turns(history, API)
	if err != nil {
		return nil, nil, err
	}
	var system []sdk.TextBlockParam
	for _, s := range sys {
		system = append(system, sdk.TextBlockParam{Text: s})
	}
	out := make([]sdk.MessageParam, 0, len(turns))
	for _, t := range turns {
		blocks := make([]sdk.ContentBlockParamUnion, 0, len(t.Blocks))
		for _, b := range t.Blocks {
			switch b.Kind {
			case modelkit.BlockText:
				if b.Text != "" {
					blocks = append(blocks, sdk.NewTextBlock(b.Text))
				}
			case modelkit.BlockCall:
				blocks = append(blocks, sdk.NewToolUseBlock(b.Call.ID, modelkit.ObjectArgs(b.Call.Args), b.Call.Name))
			case modelkit.BlockResult:
				blocks = append(blocks, toolResult(b.Result))
			case modelkit.BlockOpaque:
				if tb, ok := thinkingBlock(b.Data); ok {
					blocks = append(blocks, tb)
				}
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if t.Assistant {
			out = append(out, sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: blocks}})
			continue
		}
		out = append(out, sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: blocks}})
	}
	return system, out, nil
}

// thinking is the opaque part of a thinking or redacted_thinking block:
// what the API wants back, unchanged, when extended thinking is on.
type thinking struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// thinkingBlock rebuilds a thinking block from its opaque part; false for
// data that is not one.
func thinkingBlock(data []byte) (sdk.ContentBlockParamUnion, bool) {
	var th thinking
	if err := json.Unmarshal(data, &th); err != nil {
		return sdk.ContentBlockParamUnion{}, false
	}
	switch th.Type {
	case "thinking":
		return sdk.NewThinkingBlock(th.Signature, th.Thinking), true
	case "redacted_thinking":
		return sdk.NewRedactedThinkingBlock(th.Data), true
	}
	return sdk.ContentBlockParamUnion{}, false
}

// thinkingPart is the opaque part of a thinking block.
func thinkingPart(th thinking) react.Part {
	b, _ := json.Marshal(th) // strings only: cannot fail
	return react.Part{Kind: react.PartOpaque, API: API, Data: b}
}

// toolResult is the tool_result block of one tool message.
func toolResult(m react.Message) sdk.ContentBlockParamUnion {
	r := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID, IsError: sdk.Bool(m.IsError)}
	if m.Content != "" {
		r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &r}
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
	members, err := modelkit.SchemaObject(raw)
	if err != nil {
		return schema, err
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

// fromMessage converts the response: the text blocks, concatenated
// (consecutive blocks as they are, since citations split one sentence
// over several; a text after another block on a new line), the tool_use
// blocks, in order, with their inputs verbatim, and the Parts that keep
// the blocks' order for the replay (thinking blocks as opaque parts).
// Server-tool blocks are ignored. A response without a content array is
// malformed; an empty one is an empty turn.
func fromMessage(msg *sdk.Message) (react.Response, error) {
	if msg == nil || !msg.JSON.Content.Valid() {
		return react.Response{}, errors.New("the response has no content")
	}
	out := react.Response{ID: msg.ID, Model: msg.Model, FinishReason: string(msg.StopReason), Usage: usage(msg)}
	var j joiner
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			out.Text += j.text(b.Text)
			out.Parts = append(out.Parts, react.Part{Kind: react.PartText, Text: b.Text})
		case "tool_use":
			j.other()
			call := react.ToolCall{ID: b.ID, Name: b.Name}
			if len(b.Input) > 0 {
				call.Args = append(json.RawMessage(nil), b.Input...)
			}
			out.Parts = append(out.Parts, react.Part{Kind: react.PartCall, Call: len(out.ToolCalls)})
			out.ToolCalls = append(out.ToolCalls, call)
		case "thinking", "redacted_thinking":
			j.other()
			out.Parts = append(out.Parts, thinkingPart(thinking{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature, Data: b.Data}))
		}
	}
	return out, nil
}

// joiner joins the text blocks of a turn into its text: consecutive text
// blocks as they are, a text block after another kind of block on a new
// line (so that "Let me look it up." and "And then…" around a tool_use
// do not run together).
type joiner struct {
	wrote bool // some text was written
	apart bool // another block came since
}

// text returns what to add to the turn's text for a text block t.
func (j *joiner) text(t string) string {
	if t == "" {
		return ""
	}
	sep := j.wrote && j.apart
	j.wrote, j.apart = true, false
	if sep {
		return "\n" + t
	}
	return t
}

// other notes a block that is not text.
func (j *joiner) other() { j.apart = true }

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
