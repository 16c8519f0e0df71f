package bedrock

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// reasoning is the opaque part of a reasoningContent block: its text and
// signature, or its redacted content, sent back unchanged when the model
// reasons with tools (Claude's extended thinking on Bedrock).
type reasoning struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  []byte `json:"redacted,omitempty"`
}

func (r reasoning) part() react.Part {
	b, _ := json.Marshal(r) // strings and bytes: cannot fail
	return react.Part{Kind: react.PartOpaque, API: API, Data: b}
}

// block rebuilds the reasoningContent block of an opaque part; false for
// data that is not one.
func (r reasoning) block() (types.ContentBlock, bool) {
	if r.Redacted != nil {
		return &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: r.Redacted}}, true
	}
	if r.Text == "" && r.Signature == "" {
		return nil, false
	}
	rt := types.ReasoningTextBlock{Text: aws.String(r.Text)}
	if r.Signature != "" {
		rt.Signature = aws.String(r.Signature)
	}
	return &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: rt}}, true
}

// toMessages converts the loop's history into the system blocks and the
// messages of a Converse request (modelkit.Turns): system messages are
// system text blocks; user messages text blocks of a user message; tool
// messages toolResult blocks (toolUseId, the text, status error for a
// result that is not a SUCCESS), all the results of a turn in one user
// message, first; assistant messages an assistant message with its blocks
// as the model produced them (reasoning blocks with their signatures,
// texts apart, toolUse blocks with their input as an object), or, without
// Parts, its text then one toolUse block per call.
func toMessages(history []react.Message) ([]types.SystemContentBlock, []types.Message, error) {
	sys, turns, err := modelkit.Turns(history, API)
	if err != nil {
		return nil, nil, err
	}
	var system []types.SystemContentBlock
	for _, s := range sys {
		system = append(system, &types.SystemContentBlockMemberText{Value: s})
	}
	out := make([]types.Message, 0, len(turns))
	for _, t := range turns {
		msg := types.Message{Role: types.ConversationRoleUser}
		if t.Assistant {
			msg.Role = types.ConversationRoleAssistant
		}
		for _, b := range t.Blocks {
			switch b.Kind {
			case modelkit.BlockText:
				if b.Text != "" {
					msg.Content = append(msg.Content, &types.ContentBlockMemberText{Value: b.Text})
				}
			case modelkit.BlockCall:
				var input map[string]any
				_ = json.Unmarshal(modelkit.ObjectArgs(b.Call.Args), &input) // an object: cannot fail
				msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(b.Call.ID), Name: aws.String(b.Call.Name), Input: document.NewLazyDocument(input),
				}})
			case modelkit.BlockResult:
				r := types.ToolResultBlock{ToolUseId: aws.String(b.Result.ToolCallID), Status: types.ToolResultStatusSuccess}
				if b.Result.IsError {
					r.Status = types.ToolResultStatusError
				}
				if b.Result.Content != "" {
					r.Content = []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: b.Result.Content}}
				}
				msg.Content = append(msg.Content, &types.ContentBlockMemberToolResult{Value: r})
			case modelkit.BlockOpaque:
				var r reasoning
				if json.Unmarshal(b.Data, &r) == nil {
					if blk, ok := r.block(); ok {
						msg.Content = append(msg.Content, blk)
					}
				}
			}
		}
		if len(msg.Content) > 0 {
			out = append(out, msg)
		}
	}
	return system, out, nil
}

// toTools converts tool specs to a tool configuration of tool
// specifications whose JSON input schema is the spec's (an empty schema
// is an object without properties).
func toTools(specs []react.ToolSpec) (*types.ToolConfiguration, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	cfg := &types.ToolConfiguration{}
	for _, s := range specs {
		members, err := modelkit.SchemaObject(s.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
		}
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if members != nil {
			// A smithy document encodes Go values, not raw JSON: the schema
			// is decoded (it is one JSON object, SchemaObject checked).
			schema = nil
			if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
				return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
			}
		}
		spec := types.ToolSpecification{Name: aws.String(s.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)}}
		if s.Description != "" {
			spec.Description = aws.String(s.Description)
		}
		cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: spec})
	}
	return cfg, nil
}

// turn is a message being converted.
type turn struct {
	out react.Response
}

// block adds one content block of the answer: text, toolUse (input as
// JSON), reasoningContent (an opaque part); others are ignored.
func (t *turn) block(b types.ContentBlock) error {
	switch v := b.(type) {
	case *types.ContentBlockMemberText:
		t.out.Text += v.Value
		t.out.Parts = append(t.out.Parts, react.Part{Kind: react.PartText, Text: v.Value})
	case *types.ContentBlockMemberToolUse:
		call := react.ToolCall{ID: aws.ToString(v.Value.ToolUseId), Name: aws.ToString(v.Value.Name)}
		if v.Value.Input != nil {
			b, err := v.Value.Input.MarshalSmithyDocument()
			if err != nil {
				return fmt.Errorf("the input of toolUse %s: %w", call.ID, err)
			}
			call.Args = b
		}
		t.out.Parts = append(t.out.Parts, react.Part{Kind: react.PartCall, Call: len(t.out.ToolCalls)})
		t.out.ToolCalls = append(t.out.ToolCalls, call)
	case *types.ContentBlockMemberReasoningContent:
		switch r := v.Value.(type) {
		case *types.ReasoningContentBlockMemberReasoningText:
			t.out.Parts = append(t.out.Parts, reasoning{Text: aws.ToString(r.Value.Text), Signature: aws.ToString(r.Value.Signature)}.part())
		case *types.ReasoningContentBlockMemberRedactedContent:
			t.out.Parts = append(t.out.Parts, reasoning{Redacted: r.Value}.part())
		}
	case nil:
		return errors.New("a nil content block")
	}
	return nil
}

// response returns the turn with ids for calls the model sent without
// one.
func (t *turn) response() react.Response {
	out := t.out
	if len(out.ToolCalls) == 0 {
		return out
	}
	ids := make([]string, len(out.ToolCalls))
	for i, c := range out.ToolCalls {
		ids[i] = c.ID
	}
	modelkit.CallIDs(ids, "bedrock")
	for i := range out.ToolCalls {
		out.ToolCalls[i].ID = ids[i]
	}
	return out
}

// usage converts the token usage: inputTokens (Bedrock leaves the cache
// reads and writes out of it, as Anthropic does) plus the cache counts
// as InputTokens, outputTokens as OutputTokens.
func usage(u *types.TokenUsage) *react.Usage {
	if u == nil {
		return nil
	}
	in, read, write := int64(aws.ToInt32(u.InputTokens)), int64(aws.ToInt32(u.CacheReadInputTokens)), int64(aws.ToInt32(u.CacheWriteInputTokens))
	return &react.Usage{InputTokens: in + read + write, OutputTokens: int64(aws.ToInt32(u.OutputTokens)),
		CachedInputTokens: read, CacheCreationInputTokens: write}
}

// requestID is the AWS request id of a call, the closest thing the
// Converse API has to a response id.
func requestID(md middleware.Metadata) string {
	id, _ := awsmiddleware.GetRequestIDMetadata(md)
	return id
}
