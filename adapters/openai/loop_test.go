package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

type (
	listInput  struct{}
	space      struct{ ID, Name string }
	createSite struct {
		Name    string `json:"name"`
		SpaceID string `json:"space_id"`
	}
	site struct {
		SiteID string `json:"site_id"`
		URL    string `json:"url"`
	}
)

// siteCatalog is a read (list_spaces) and a write (create_site) whose
// executions are counted.
func siteCatalog(creates *atomic.Int32) *tool.Catalog {
	list := tool.New("list_spaces", "List the spaces a website can be created in.",
		func(context.Context, listInput) ([]space, error) {
			return []space{{"sp-7", "Sales"}, {"sp-42", "Marketing"}}, nil
		})
	list.Effect = tool.Read
	create := tool.New("create_site", "Create a website in a space.",
		func(_ context.Context, in createSite) (site, error) {
			creates.Add(1)
			return site{SiteID: "site-1001", URL: "https://spring-sale.example.com"}, nil
		})
	create.Effect = tool.Write
	return tool.MustCatalog(list, create)
}

var siteNode = react.Node{
	Name:         "create_site",
	Instructions: "Create the website the user asks for, in the space the user names.",
	Tools:        []string{"list_spaces", "create_site"},
}

// TestLoopSuspendsForApprovalAndResumes runs the whole loop on the adapter:
// read, write (DEFERRED APPROVAL_REQUIRED), builtin_node_approval
// (suspended), resume with approval in a new loop and a new model value,
// write again (SUCCESS), finish. Every request the server received must be
// a valid chat completion history.
func TestLoopSuspendsForApprovalAndResumes(t *testing.T) {
	s := newServer(t,
		reply{file: "loop_1_read.json"},
		reply{file: "loop_2_write.json"},
		reply{file: "loop_3_approval.json"},
		reply{file: "loop_4_write.json"},
		reply{file: "loop_5_finish.json"},
	)
	var creates atomic.Int32
	catalog := siteCatalog(&creates)
	stores := &guard.Options{} // shared by both loops, as a service shares its stores
	newLoop := func() *react.Loop {
		l, err := react.New(react.Config{
			Model:    newModel(t, s, nil), // a fresh adapter each time, as in a new process
			Tools:    catalog,
			Guards:   stores,
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			NewRunID: func() string { return "run-openai" },
		})
		require.NoError(t, err)
		return l
	}

	ctx := context.Background()
	res, err := newLoop().Run(ctx, siteNode, `Create a website called "Spring Sale" in the Marketing space.`)
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status, "Run() status; want suspended for approval")
	require.NotNil(t, res.Suspension)
	assert.Equal(t, react.SuspendApproval, res.Suspension.Kind)
	assert.Equal(t, "call_approve_1", res.Suspension.CallID)
	require.NotNil(t, res.Suspension.Approval)
	assert.Equal(t, "create_site", res.Suspension.Approval.Tool)
	assert.Equal(t, "call_create_1", res.Suspension.Approval.CallID)
	assert.Zero(t, creates.Load(), "the write must not run before approval")
	require.Len(t, s.requests(), 3)

	res, err = newLoop().Resume(ctx, res.Snapshot, react.Approve())
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status, "Resume() status; failure: %+v", res.Failure)
	assert.Equal(t, "Created Spring Sale in Marketing: https://spring-sale.example.com", res.Summary)
	assert.Equal(t, int32(1), creates.Load(), "the approved write runs exactly once")
	assert.Equal(t, 5, res.Rounds)

	reqs := s.requests()
	require.Len(t, reqs, 5)
	for i, req := range reqs {
		assert.NoError(t, validOpenAIHistory(req), "request %d", i+1)
		assert.JSONEq(t, `"gpt-4.1"`, s.field(i, "model"))
		assert.Equal(t, []string{"builtin_node_approval", "builtin_node_fail", "builtin_node_finish",
			"builtin_node_follow_up", "create_site", "list_spaces"}, toolNames(req), "request %d tools", i+1)
	}
	// The deferred write's tool message tells the model to ask for approval.
	deferred := toolContent(t, reqs[2], "call_create_1")
	assert.Contains(t, deferred, "builtin_node_approval", "DEFERRED APPROVAL_REQUIRED names the approval tool")
	// After the resume, the approval call has its own result.
	assert.NotEmpty(t, toolContent(t, reqs[3], "call_approve_1"))
	assert.Contains(t, toolContent(t, reqs[4], "call_create_2"), "site-1001")
	last := reqs[4]["messages"].([]any)
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
					return fmt.Errorf("calls %v have no tool message", keys(want))
				}
				r := msgs[i].(map[string]any)
				id, _ := r["tool_call_id"].(string)
				if r["role"] != "tool" || !want[id] {
					return fmt.Errorf("message %d: want a tool message for one of %v, got %v %v", i, keys(want), r["role"], id)
				}
				delete(want, id)
			}
		default:
			return fmt.Errorf("message %d: unknown role %v", i, m["role"])
		}
	}
	return nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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

// toolContent returns the content of the tool message answering id.
func toolContent(t *testing.T, req map[string]any, id string) string {
	t.Helper()
	for _, m := range req["messages"].([]any) {
		msg := m.(map[string]any)
		if msg["role"] == "tool" && msg["tool_call_id"] == id {
			s, _ := msg["content"].(string)
			return s
		}
	}
	t.Fatalf("no tool message for %s", id)
	return ""
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
// end: a 429 stops the run as Interrupted with the adapter's error and a
// snapshot, and resuming it replays the same turn.
func TestLoopModelErrorKeepsSnapshot(t *testing.T) {
	s := newServer(t,
		reply{file: "loop_1_read.json"},
		reply{status: 429, file: "error_rate_limit.json", header: map[string]string{"Retry-After": "2"}},
		reply{file: "loop_2_write.json"},
		reply{file: "loop_3_approval.json"},
	)
	var creates atomic.Int32
	stores := &guard.Options{}
	cfg := react.Config{
		Model:    newModel(t, s, nil),
		Tools:    siteCatalog(&creates),
		Guards:   stores,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		NewRunID: func() string { return "run-429" },
	}
	loop, err := react.New(cfg)
	require.NoError(t, err)
	res, err := loop.Run(context.Background(), siteNode, `Create a website called "Spring Sale" in the Marketing space.`)
	require.Error(t, err)
	assert.Equal(t, modelerr.RateLimited, modelerr.KindOf(err), "Run() error = %v; want the adapter's rate limit", err)
	assert.Equal(t, react.Interrupted, res.Status)
	require.NotEmpty(t, res.Snapshot)
	for _, m := range res.Transcript {
		assert.NotContains(t, strings.ToLower(m.Content), "rate limit", "a model failure never reaches the transcript")
	}

	// Resume: the same turn is asked again (request 3 equals request 2).
	loop, err = react.New(cfg)
	require.NoError(t, err)
	res, err = loop.Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	assert.Equal(t, react.Suspended, res.Status, "after the resumed turn the run goes on to the approval")
	require.Len(t, s.requests(), 4)
	assert.JSONEq(t, s.field(1, "messages"), s.field(2, "messages"), "the resumed run resends the failed turn unchanged")
}

// TestLoopTruncatedArgumentsAreClassifiedByTheCore: arguments cut off by
// max_tokens reach the loop verbatim, the core answers ARG_JSON_INVALID
// with a next step (not an error for the host), the next request sends
// them back verbatim, and the run goes on and suspends with a valid
// snapshot.
func TestLoopTruncatedArgumentsAreClassifiedByTheCore(t *testing.T) {
	s := newServer(t,
		reply{file: "completion_invalid_args.json"},
		reply{file: "loop_2_write.json"},
		reply{file: "loop_3_approval.json"},
	)
	var creates atomic.Int32
	catalog := siteCatalog(&creates)
	publish := tool.New("site_publish", "Publish a site.", func(context.Context, createSite) (site, error) { return site{}, nil })
	publish.Effect = tool.Write
	require.NoError(t, catalog.Add(publish))
	node := siteNode
	node.Tools = append([]string{"site_publish"}, siteNode.Tools...)
	loop, err := react.New(react.Config{
		Model:  newModel(t, s, nil),
		Tools:  catalog,
		Guards: &guard.Options{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	res, err := loop.Run(context.Background(), node, `Create a website called "Spring Sale" in the Marketing space.`)
	require.NoError(t, err, "invalid arguments are the model's mistake, never a host error")
	assert.Equal(t, react.Suspended, res.Status)
	assert.NotEmpty(t, res.Snapshot)

	reqs := s.requests()
	require.Len(t, reqs, 3)
	msgs := reqs[1]["messages"].([]any)
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	assert.Equal(t, `{"site_id": "bakery", "title": "Fresh br`, call["arguments"], "the truncated arguments go back verbatim")
	assert.Contains(t, toolContent(t, reqs[1], "call_Yq0bM2fTb5k3m0Wc8q1xQ9Zr"), "Next:", "the core classified them with a next step")
	for i, req := range reqs {
		assert.NoError(t, validOpenAIHistory(req), "request %d", i+1)
	}
}
