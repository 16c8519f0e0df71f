package anthropic_test

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
// a valid Messages API history.
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
			NewRunID: func() string { return "run-anthropic" },
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
	assert.Equal(t, "toolu_01Approval000000000001", res.Suspension.CallID)
	require.NotNil(t, res.Suspension.Approval)
	assert.Equal(t, "create_site", res.Suspension.Approval.Tool)
	assert.Equal(t, "toolu_01CreateSite00000000001", res.Suspension.Approval.CallID)
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
		assert.NoError(t, validAnthropicHistory(req), "request %d", i+1)
		assert.JSONEq(t, `"claude-sonnet-4-5"`, s.field(i, "model"))
		assert.Contains(t, s.field(i, "system"), "Create the website the user asks for", "request %d: instructions in the top-level system", i+1)
		assert.Equal(t, []string{"builtin_node_approval", "builtin_node_fail", "builtin_node_finish",
			"builtin_node_follow_up", "create_site", "list_spaces"}, toolNames(req), "request %d tools", i+1)
	}
	// The deferred write's tool message tells the model to ask for approval.
	deferred, isError := toolResult(t, reqs[2], "toolu_01CreateSite00000000001")
	assert.Contains(t, deferred, "builtin_node_approval", "DEFERRED APPROVAL_REQUIRED names the approval tool")
	assert.True(t, isError, "a DEFERRED result is not a success: is_error true")
	_, isError = toolResult(t, reqs[1], "toolu_01ListSpaces00000000001")
	assert.False(t, isError, "a SUCCESS result: is_error false")
	// After the resume, the approval call has its own result.
	assert.NotEmpty(t, toolContent(t, reqs[3], "toolu_01Approval000000000001"))
	assert.Contains(t, toolContent(t, reqs[4], "toolu_01CreateSite00000000002"), "site-1001")
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
				return fmt.Errorf("message %d: tool_use %v have no tool_result", i, keys(open))
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
		return fmt.Errorf("the history ends with unanswered tool_use %v", keys(open))
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

// toolResult returns the text and is_error of the tool_result answering id.
func toolResult(t *testing.T, req map[string]any, id string) (string, bool) {
	t.Helper()
	for _, m := range req["messages"].([]any) {
		blocks, _ := m.(map[string]any)["content"].([]any)
		for _, rb := range blocks {
			b := rb.(map[string]any)
			if b["type"] != "tool_result" || b["tool_use_id"] != id {
				continue
			}
			var text strings.Builder
			content, _ := b["content"].([]any)
			for _, c := range content {
				s, _ := c.(map[string]any)["text"].(string)
				text.WriteString(s)
			}
			return text.String(), b["is_error"] == true
		}
	}
	t.Fatalf("no tool_result for %s", id)
	return "", false
}

// toolContent returns the text of the tool_result answering id.
func toolContent(t *testing.T, req map[string]any, id string) string {
	t.Helper()
	text, _ := toolResult(t, req, id)
	return text
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
