package modelkit

import (
	"fmt"
	"slices"

	"github.com/reactguard/reactguard/react"
)

// BlockKind says what a [Block] is.
type BlockKind uint8

// The kinds of blocks.
const (
	// BlockText is text: Block.Text.
	BlockText BlockKind = 1
	// BlockCall is an assistant's tool call: Block.Call.
	BlockCall BlockKind = 2
	// BlockResult is a tool result: Block.Result, the tool message.
	BlockResult BlockKind = 3
	// BlockOpaque is a piece of an assistant turn only the adapter's API
	// reads: Block.Data.
	BlockOpaque BlockKind = 4
)

// Block is one piece of a [Turn], in order.
type Block struct {
	Kind   BlockKind
	Text   string         // BlockText
	Call   react.ToolCall // BlockCall
	Result react.Message  // BlockResult: the tool message (ToolCallID, Content, IsError)
	// Data is what the adapter's API asked to get back with this piece
	// (a thought signature on a text or call, the item of a BlockOpaque);
	// nil for pieces of another API's turns.
	Data []byte
}

// Turn is one message of an API that alternates user and assistant
// messages and takes the system instructions apart: its role and blocks.
type Turn struct {
	Assistant bool
	Blocks    []Block
}

// Turns converts a history into the system texts and the alternating
// turns of APIs such as Anthropic Messages, Gemini and Bedrock Converse:
//
//   - system messages become the system texts, in order (empty ones are
//     left out);
//   - a user message becomes a text block of a user turn;
//   - an assistant message becomes its blocks: from its Parts when it has
//     them (texts apart and in their place, calls in their place, the
//     Data of api's parts kept and other APIs' opaque parts left out),
//     else its text then its calls;
//   - a tool message becomes a result block of a user turn.
//
// Blocks of the same role in a row form one turn, so all the results of
// an assistant turn travel in one user turn; within a user turn the
// result blocks come first, as these APIs require. Empty texts are left
// out, and a turn left with no block is dropped. A tool message without
// a call id, or a message with an unknown role, is an error naming the
// message.
func Turns(history []react.Message, api string) (system []string, turns []Turn, err error) {
	for i, m := range history {
		t := Turn{}
		switch m.Role {
		case react.RoleSystem:
			if m.Content != "" {
				system = append(system, m.Content)
			}
			continue
		case react.RoleUser:
			if m.Content != "" {
				t.Blocks = append(t.Blocks, Block{Kind: BlockText, Text: m.Content})
			}
		case react.RoleAssistant:
			t.Assistant = true
			t.Blocks = AssistantBlocks(m, api)
		case react.RoleTool:
			if m.ToolCallID == "" {
				return nil, nil, fmt.Errorf("message %d: tool result without a tool call id", i)
			}
			t.Blocks = append(t.Blocks, Block{Kind: BlockResult, Result: m})
		default:
			return nil, nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(t.Blocks) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].Assistant == t.Assistant {
			turns[n-1].Blocks = append(turns[n-1].Blocks, t.Blocks...)
			continue
		}
		turns = append(turns, t)
	}
	for i := range turns {
		if !turns[i].Assistant {
			slices.SortStableFunc(turns[i].Blocks, func(a, b Block) int { return resultRank(a) - resultRank(b) })
		}
	}
	return system, turns, nil
}

func resultRank(b Block) int {
	if b.Kind == BlockResult {
		return 0
	}
	return 1
}

// AssistantBlocks returns the blocks of an assistant message: from its
// Parts when it has them (see [Turns]), else its text (when not empty)
// then its calls.
func AssistantBlocks(m react.Message, api string) []Block {
	out := make([]Block, 0, len(m.Parts)+len(m.ToolCalls)+1)
	if len(m.Parts) > 0 {
		for _, p := range m.Parts {
			var data []byte
			if p.API == api {
				data = p.Data
			}
			switch p.Kind {
			case react.PartText:
				if p.Text != "" || data != nil {
					out = append(out, Block{Kind: BlockText, Text: p.Text, Data: data})
				}
			case react.PartCall:
				if p.Call >= 0 && p.Call < len(m.ToolCalls) {
					out = append(out, Block{Kind: BlockCall, Call: m.ToolCalls[p.Call], Data: data})
				}
			case react.PartOpaque:
				if data != nil {
					out = append(out, Block{Kind: BlockOpaque, Data: data})
				}
			}
		}
		return out
	}
	if m.Content != "" {
		out = append(out, Block{Kind: BlockText, Text: m.Content})
	}
	for _, c := range m.ToolCalls {
		out = append(out, Block{Kind: BlockCall, Call: c})
	}
	return out
}

// ResultsFirst returns history with, after each assistant message that
// has tool calls, the tool messages up to the next assistant message
// moved ahead of the other messages in that span (a phase hint, a user's
// answer), each group in its order: APIs such as OpenAI's want a call's
// result right after the call. It returns history itself when nothing
// moves, and never modifies it.
func ResultsFirst(history []react.Message) []react.Message {
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
