package anthropic_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/internal/chattest"
)

// TestLoopSuspendsForApprovalAndResumes runs the whole loop on the adapter
// (chattest.Adapter.RunApprovalLoop): read, write (DEFERRED
// APPROVAL_REQUIRED), builtin_node_approval (suspended), resume with
// approval in a new loop and a new model value, write again (SUCCESS),
// finish. Every request the server received must be a valid Messages API
// history.
func TestLoopSuspendsForApprovalAndResumes(t *testing.T) {
	calls := chattest.LoopCalls{
		Read:     "toolu_01ListSpaces00000000001",
		Write:    "toolu_01CreateSite00000000001",
		Approval: "toolu_01Approval000000000001",
		Rewrite:  "toolu_01CreateSite00000000002",
	}
	s := adapter.RunApprovalLoop(t, "run-anthropic", calls)
	reqs := s.Requests()
	for i := range reqs {
		assert.Contains(t, s.Field(i, "system"), "Create the website the user asks for", "request %d: instructions in the top-level system", i+1)
	}
	assert.True(t, isError(t, reqs[2], calls.Write), "a DEFERRED result is not a success: is_error true")
	assert.False(t, isError(t, reqs[1], calls.Read), "a SUCCESS result: is_error false")
	last := reqs[4]["messages"].([]any)
	assert.Equal(t, 1+4*2, len(last), "the task, then 4 turns of one tool_use and one user message of results each")
	assert.NotContains(t, reqs[0], "temperature")
}

// validAnthropicHistory checks the rules the Messages API enforces on a
// request: messages alternate user / assistant starting with user; every
// tool_use id is unique; the message after an assistant message with
// tool_use blocks is ONE user message that starts with exactly one
// tool_result block per tool_use id (each with a boolean is_error), and
// no tool_result appears anywhere else; text blocks are not empty.
func validAnthropicHistory(req map[string]any) error {
	msgs, ok := req["messages"].([]any)
	if !ok || len(msgs) == 0 {
		return fmt.Errorf("no messages")
	}
	seen := map[string]bool{}
	var open map[string]bool // tool_use ids the next user message must answer
	for i, raw := range msgs {
		m := raw.(map[string]any)
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m["role"] != want {
			return fmt.Errorf("message %d: role %v; want %s (roles alternate, starting with user)", i, m["role"], want)
		}
		blocks, _ := m["content"].([]any)
		if len(blocks) == 0 {
			return fmt.Errorf("message %d: no content blocks", i)
		}
		results := 0
		for k, rb := range blocks {
			b := rb.(map[string]any)
			switch b["type"] {
			case "text":
				if b["text"] == "" {
					return fmt.Errorf("message %d block %d: empty text", i, k)
				}
			case "tool_use":
				id, _ := b["id"].(string)
				if want != "assistant" || id == "" || seen[id] {
					return fmt.Errorf("message %d block %d: bad tool_use %v", i, k, b)
				}
				if _, ok := b["input"].(map[string]any); !ok {
					return fmt.Errorf("message %d block %d: input is not an object", i, k)
				}
				seen[id] = true
			case "tool_result":
				id, _ := b["tool_use_id"].(string)
				if k != results || !open[id] {
					return fmt.Errorf("message %d block %d: tool_result %s does not answer the turn before or follows another block", i, k, id)
				}
				if _, ok := b["is_error"].(bool); !ok {
					return fmt.Errorf("message %d block %d: is_error missing", i, k)
				}
				delete(open, id)
				results++
			default:
				return fmt.Errorf("message %d block %d: unexpected type %v", i, k, b["type"])
			}
		}
		if want == "user" {
			if len(open) > 0 {
				return fmt.Errorf("message %d: tool_use %v have no tool_result", i, slices.Sorted(maps.Keys(open)))
			}
			continue
		}
		open = map[string]bool{}
		for _, rb := range blocks {
			if b := rb.(map[string]any); b["type"] == "tool_use" {
				open[b["id"].(string)] = true
			}
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the history ends with unanswered tool_use %v", slices.Sorted(maps.Keys(open)))
	}
	return nil
}

// toolNames lists the tool names a request offered, sorted.
func toolNames(req map[string]any) []string {
	var out []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	sort.Strings(out)
	return out
}

// toolResult returns the tool_result block answering id, if any.
func toolResult(req map[string]any, id string) (map[string]any, bool) {
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, rb := range blocks {
			b, _ := rb.(map[string]any)
			if b["type"] == "tool_result" && b["tool_use_id"] == id {
				return b, true
			}
		}
	}
	return nil, false
}

// toolResultText returns the text of the tool_result answering id, and
// whether there is one.
func toolResultText(req map[string]any, id string) (string, bool) {
	b, ok := toolResult(req, id)
	var text strings.Builder
	content, _ := b["content"].([]any)
	for _, c := range content {
		s, _ := c.(map[string]any)["text"].(string)
		text.WriteString(s)
	}
	return text.String(), ok
}

// isError returns is_error of the tool_result answering id.
func isError(t *testing.T, req map[string]any, id string) bool {
	t.Helper()
	b, ok := toolResult(req, id)
	require.True(t, ok, "no tool_result for %s", id)
	return b["is_error"] == true
}

func TestValidAnthropicHistory(t *testing.T) {
	use := `{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]}`
	tests := []struct {
		name   string
		msgs   string
		ok     bool
		reason string
	}{
		{"paired", `[{"role":"user","content":[{"type":"text","text":"x"}]},` + use + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","is_error":true},{"type":"tool_result","tool_use_id":"a","is_error":false}]}]`, true, "all results in one user message"},
		{"split results", `[{"role":"user","content":[{"type":"text","text":"x"}]},` + use + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","is_error":false}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","is_error":false}]}]`, false, "results split over two user messages"},
		{"text first", `[{"role":"user","content":[{"type":"text","text":"x"}]},` + use + `,{"role":"user","content":[{"type":"text","text":"y"},{"type":"tool_result","tool_use_id":"a","is_error":false},{"type":"tool_result","tool_use_id":"b","is_error":false}]}]`, false, "tool_result blocks come first"},
		{"no is_error", `[{"role":"user","content":[{"type":"text","text":"x"}]},` + use + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"},{"type":"tool_result","tool_use_id":"b","is_error":false}]}]`, false, "is_error is always sent"},
		{"unanswered", `[{"role":"user","content":[{"type":"text","text":"x"}]},` + use + `]`, false, "a tool_use without result"},
		{"assistant first", `[` + use + `]`, false, "the history starts with the user"},
	}
	for _, tt := range tests {
		var msgs []any
		require.NoError(t, json.Unmarshal([]byte(tt.msgs), &msgs))
		err := validAnthropicHistory(map[string]any{"messages": msgs})
		assert.Equal(t, tt.ok, err == nil, "validAnthropicHistory(%s) = %v; %s", tt.name, err, tt.reason)
	}
}

// TestLoopModelErrorKeepsSnapshot checks the contract of react.Model end to
// end (chattest.Adapter.RunModelErrorLoop): a 429 stops the run as
// Interrupted with the adapter's error and a snapshot, and resuming it
// replays the same turn.
func TestLoopModelErrorKeepsSnapshot(t *testing.T) {
	adapter.RunModelErrorLoop(t, reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "2"}})
}
