package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// TestLoopSuspendsForApprovalAndResumes runs the whole loop on the adapter
// (chattest.Adapter.RunApprovalLoop): read, write (DEFERRED
// APPROVAL_REQUIRED), builtin_node_approval (suspended), resume with
// approval in a new loop and a new model value, write again (SUCCESS),
// finish. Every request the server received must be a valid chat
// completion history.
func TestLoopSuspendsForApprovalAndResumes(t *testing.T) {
	s := adapter.RunApprovalLoop(t, "run-openai", chattest.LoopCalls{
		Read: "call_list_1", Write: "call_create_1", Approval: "call_approve_1", Rewrite: "call_create_2",
	})
	last := s.Requests()[4]["messages"].([]any)
	assert.Equal(t, 1+1+4*2, len(last), "system, user, then 4 turns of one call and one result each")
}

// validOpenAIHistory checks the rules the Chat Completions API enforces on
// a request: a known role on every message; an assistant message with
// tool_calls is followed directly by exactly one tool message per call id
// (in any order); no tool message appears anywhere else; and every call id
// is unique in the history.
func validOpenAIHistory(req map[string]any) error {
	msgs, ok := req["messages"].([]any)
	if !ok || len(msgs) == 0 {
		return fmt.Errorf("no messages")
	}
	seen := map[string]bool{}
	for i := 0; i < len(msgs); i++ {
		m := msgs[i].(map[string]any)
		switch m["role"] {
		case "system", "user":
		case "tool":
			return fmt.Errorf("message %d: tool message %v does not answer the assistant turn before it", i, m["tool_call_id"])
		case "assistant":
			calls, _ := m["tool_calls"].([]any)
			if len(calls) == 0 {
				if _, ok := m["content"].(string); !ok {
					return fmt.Errorf("message %d: assistant message without content or tool calls", i)
				}
				continue
			}
			want := map[string]bool{}
			for _, c := range calls {
				call := c.(map[string]any)
				id, _ := call["id"].(string)
				fn, _ := call["function"].(map[string]any)
				if id == "" || call["type"] != "function" || fn["name"] == "" {
					return fmt.Errorf("message %d: malformed tool call %v", i, call)
				}
				if _, ok := fn["arguments"].(string); !ok {
					return fmt.Errorf("message %d: arguments of %s are not a string", i, id)
				}
				if seen[id] {
					return fmt.Errorf("message %d: call id %s used twice", i, id)
				}
				seen[id], want[id] = true, true
			}
			for len(want) > 0 {
				i++
				if i >= len(msgs) {
					return fmt.Errorf("calls %v have no tool message", slices.Sorted(maps.Keys(want)))
				}
				r := msgs[i].(map[string]any)
				id, _ := r["tool_call_id"].(string)
				if r["role"] != "tool" || !want[id] {
					return fmt.Errorf("message %d: want a tool message for one of %v, got %v %v", i, slices.Sorted(maps.Keys(want)), r["role"], id)
				}
				delete(want, id)
			}
		default:
			return fmt.Errorf("message %d: unknown role %v", i, m["role"])
		}
	}
	return nil
}

// toolNames lists the function names a request offered, sorted.
func toolNames(req map[string]any) []string {
	var out []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		fn := t.(map[string]any)["function"].(map[string]any)
		out = append(out, fn["name"].(string))
	}
	sort.Strings(out)
	return out
}

// toolMessage returns the content of the tool message answering id, and
// whether there is one.
func toolMessage(req map[string]any, id string) (string, bool) {
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] == "tool" && msg["tool_call_id"] == id {
			s, _ := msg["content"].(string)
			return s, true
		}
	}
	return "", false
}

// toolContent returns the content of the tool message answering id.
func toolContent(t *testing.T, req map[string]any, id string) string {
	t.Helper()
	s, ok := toolMessage(req, id)
	require.True(t, ok, "no tool message for %s", id)
	return s
}

func TestValidOpenAIHistory(t *testing.T) {
	tests := []struct {
		name   string
		msgs   string
		ok     bool
		reason string
	}{
		{"paired", `[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]`, true, "one call, one result"},
		{"unanswered", `[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"x"}]`, false, "a call without result"},
		{"stray result", `[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"a","content":"r"}]`, false, "a result without call"},
		{"reused id", `[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]`, false, "ids are unique"},
	}
	for _, tt := range tests {
		var msgs []any
		require.NoError(t, json.Unmarshal([]byte(tt.msgs), &msgs))
		err := validOpenAIHistory(map[string]any{"messages": msgs})
		assert.Equal(t, tt.ok, err == nil, "validOpenAIHistory(%s) = %v; %s", tt.name, err, tt.reason)
	}
}

// TestLoopModelErrorKeepsSnapshot checks the contract of react.Model end to
// end (chattest.Adapter.RunModelErrorLoop): a 429 stops the run as
// Interrupted with the adapter's error and a snapshot, and resuming it
// replays the same turn.
func TestLoopModelErrorKeepsSnapshot(t *testing.T) {
	adapter.RunModelErrorLoop(t, reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "2"}})
}

// TestLoopTruncatedArgumentsAreClassifiedByTheCore: arguments cut off by
// max_tokens reach the loop verbatim, the core answers ARG_JSON_INVALID
// with a next step (not an error for the host), the next request sends
// them back verbatim, and the run goes on and suspends with a valid
// snapshot.
func TestLoopTruncatedArgumentsAreClassifiedByTheCore(t *testing.T) {
	s := adapter.NewServer(t,
		reply{File: "completion_invalid_args.json"},
		reply{File: "loop_2_write.json"},
		reply{File: "loop_3_approval.json"},
	)
	var creates atomic.Int32
	catalog := chattest.SiteCatalog(&creates)
	publish := tool.New("site_publish", "Publish a site.",
		func(context.Context, chattest.CreateSite) (chattest.Site, error) { return chattest.Site{}, nil })
	publish.Effect = tool.Write
	require.NoError(t, catalog.Add(publish))
	node := chattest.SiteNode()
	node.Tools = append([]string{"site_publish"}, node.Tools...)
	loop, err := react.New(react.Config{
		Model:  newModel(t, s, &openai.Options{NoStream: true}),
		Tools:  catalog,
		Guards: &guard.Options{},
		Logger: chattest.Quiet,
	})
	require.NoError(t, err)
	res, err := loop.Run(context.Background(), node, chattest.Task)
	require.NoError(t, err, "invalid arguments are the model's mistake, never a host error")
	assert.Equal(t, react.Suspended, res.Status)
	assert.NotEmpty(t, res.Snapshot)

	reqs := s.Requests()
	require.Len(t, reqs, 3)
	msgs := reqs[1]["messages"].([]any)
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	assert.Equal(t, `{"site_id": "bakery", "title": "Fresh br`, call["arguments"], "the truncated arguments go back verbatim")
	assert.Contains(t, toolContent(t, reqs[1], "call_Yq0bM2fTb5k3m0Wc8q1xQ9Zr"), "Next:", "the core classified them with a next step")
	for i, req := range reqs {
		assert.NoError(t, validOpenAIHistory(req), "request %d", i+1)
	}
}
