package chattest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

type (
	// ListInput is the input of list_spaces: nothing.
	ListInput struct{}
	// Space is one space list_spaces returns.
	Space struct{ ID, Name string }
	// CreateSite is the input of create_site.
	CreateSite struct {
		Name    string `json:"name"`
		SpaceID string `json:"space_id"`
	}
	// Site is the result of create_site.
	Site struct {
		SiteID string `json:"site_id"`
		URL    string `json:"url"`
	}
)

// Task is the user's task in the loop scenarios.
const Task = `Create a website called "Spring Sale" in the Marketing space.`

// Summary is the finish summary the canned loop_5_finish.json of each
// adapter carries.
const Summary = "Created Spring Sale in Marketing: https://spring-sale.example.com"

// SiteCatalog returns a read (list_spaces: Sales sp-7, Marketing sp-42)
// and a write (create_site: site-1001 at https://spring-sale.example.com)
// whose executions are counted in creates.
func SiteCatalog(creates *atomic.Int32) *tool.Catalog {
	list := tool.New("list_spaces", "List the spaces a website can be created in.",
		func(context.Context, ListInput) ([]Space, error) {
			return []Space{{"sp-7", "Sales"}, {"sp-42", "Marketing"}}, nil
		})
	list.Effect = tool.Read
	create := tool.New("create_site", "Create a website in a space.",
		func(_ context.Context, in CreateSite) (Site, error) {
			creates.Add(1)
			return Site{SiteID: "site-1001", URL: "https://spring-sale.example.com"}, nil
		})
	create.Effect = tool.Write
	return tool.MustCatalog(list, create)
}

// SiteNode returns the node of the loop scenarios, offering list_spaces
// and create_site (a new value each call, so a test may change it).
func SiteNode() react.Node {
	return react.Node{
		Name:         "create_site",
		Instructions: "Create the website the user asks for, in the space the user names.",
		Tools:        []string{"list_spaces", "create_site"},
	}
}

// SiteTools are the sorted names of the tools every request of the loop
// scenarios offers: the node's tools and the loop's builtins.
var SiteTools = []string{"builtin_node_approval", "builtin_node_fail", "builtin_node_finish",
	"builtin_node_follow_up", "create_site", "list_spaces"}

// LoopReplies returns the five canned turns of the approval scenario, by
// convention the files testdata/loop_1_read.json (list_spaces),
// loop_2_write.json (create_site), loop_3_approval.json
// (builtin_node_approval for create_site), loop_4_write.json (create_site
// again) and loop_5_finish.json (builtin_node_finish with [Summary]).
func LoopReplies() []Reply {
	return []Reply{
		{File: "loop_1_read.json"},
		{File: "loop_2_write.json"},
		{File: "loop_3_approval.json"},
		{File: "loop_4_write.json"},
		{File: "loop_5_finish.json"},
	}
}

// LoopCalls are the tool call ids of the canned turns of [LoopReplies].
type LoopCalls struct {
	Read     string // list_spaces in loop_1_read.json
	Write    string // create_site in loop_2_write.json
	Approval string // builtin_node_approval in loop_3_approval.json
	Rewrite  string // create_site in loop_4_write.json
}

// Quiet is a logger that discards everything, for loops in tests.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// RunApprovalLoop runs the whole loop on the adapter against a server
// replaying [LoopReplies]: read (SUCCESS), write (DEFERRED
// APPROVAL_REQUIRED), builtin_node_approval (suspended), then a resume
// with react.Approve(ticket) in a new loop value with a new model (as in a new
// process, sharing only the guard stores), the write again (SUCCESS,
// executed exactly once), builtin_node_finish. It asserts the suspension
// (kind, approval call id calls.Approval, gated tool create_site and call
// id calls.Write, nothing written yet, three requests), the finish
// ([Summary], five rounds, one write), and on each of the five requests:
// a.Valid, the model name, the offered tools ([SiteTools]); and that the
// read's result lists the spaces, the deferred write's result names builtin_node_approval, the approval call
// has a result after the resume and the approved write's result carries
// site-1001. It returns the server, whose five requests the adapter
// checks further for its API. It uses every field of a.
func (a Adapter) RunApprovalLoop(t *testing.T, runID string, calls LoopCalls) *Server {
	t.Helper()
	s := a.NewServer(t, a.serve(t, LoopReplies())...)
	var creates atomic.Int32
	catalog := SiteCatalog(&creates)
	// Shared by both loops, as a service shares its stores.
	stores := &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	newLoop := func() *react.Loop {
		l, err := react.New(react.Config{
			Model:    a.Model(t, s), // a fresh adapter each time, as in a new process
			Tools:    catalog,
			Guards:   stores,
			Logger:   Quiet,
			NewRunID: func(context.Context) string { return runID },
		})
		require.NoError(t, err)
		return l
	}

	ctx := context.Background()
	res, err := newLoop().Run(ctx, SiteNode(), Task)
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status, "Run() status; want suspended for approval")
	require.NotNil(t, res.Suspension)
	assert.Equal(t, react.SuspendApproval, res.Suspension.Kind)
	assert.Equal(t, calls.Approval, res.Suspension.CallID)
	require.NotNil(t, res.Suspension.Approval)
	assert.Equal(t, "create_site", res.Suspension.Approval.Tool)
	assert.Equal(t, calls.Write, res.Suspension.Approval.CallID)
	assert.Zero(t, creates.Load(), "the write must not run before approval")
	require.Len(t, s.Requests(), 3)

	res, err = newLoop().Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status, "Resume() status; failure: %+v", res.Failure)
	assert.Equal(t, Summary, res.Summary)
	assert.Equal(t, int32(1), creates.Load(), "the approved write runs exactly once")
	assert.Equal(t, 5, res.Rounds)

	reqs := s.Requests()
	require.Len(t, reqs, 5)
	for i, req := range reqs {
		assert.NoError(t, a.Valid(req), "request %d", i+1)
		if a.ModelName != "" {
			assert.JSONEq(t, `"`+a.ModelName+`"`, s.Field(i, "model"), "request %d model", i+1)
		}
		assert.Equal(t, SiteTools, a.ToolNames(req), "request %d tools", i+1)
	}
	// The read's result lists the spaces.
	assert.Contains(t, a.result(t, reqs[1], calls.Read), "sp-42", "the read's SUCCESS result reaches the model")
	// The deferred write's result tells the model to ask for approval.
	assert.Contains(t, a.result(t, reqs[2], calls.Write), "builtin_node_approval", "DEFERRED APPROVAL_REQUIRED names the approval tool")
	// After the resume, the approval call has its own result.
	assert.NotEmpty(t, a.result(t, reqs[3], calls.Approval))
	assert.Contains(t, a.result(t, reqs[4], calls.Rewrite), "site-1001")
	return s
}

// result is a.ToolResult; a missing result fails the test.
func (a Adapter) result(t *testing.T, req map[string]any, callID string) string {
	t.Helper()
	text, ok := a.ToolResult(req, callID)
	require.True(t, ok, "no tool result for %s", callID)
	return text
}

// RunModelErrorLoop checks the contract of react.Model end to end: after
// the first canned turn the server answers rateLimited (a 429 the adapter
// must classify as modelerr.RateLimited), which stops the run as
// Interrupted with the adapter's error, a snapshot and no trace of the
// failure in the transcript; resuming the snapshot in a new loop replays
// the same turn unchanged (request 3's messages equal request 2's) and
// the run goes on to the approval. It uses a.Endpoint and a.NewModel.
func (a Adapter) RunModelErrorLoop(t *testing.T, rateLimited Reply) {
	t.Helper()
	turns := a.serve(t, LoopReplies())
	s := a.NewServer(t, turns[0], rateLimited, turns[1], turns[2])
	var creates atomic.Int32
	cfg := react.Config{
		Model:    a.Model(t, s),
		Tools:    SiteCatalog(&creates),
		Guards:   &guard.Options{},
		Logger:   Quiet,
		NewRunID: func(context.Context) string { return "run-429" },
	}
	loop, err := react.New(cfg)
	require.NoError(t, err)
	res, err := loop.Run(context.Background(), SiteNode(), Task)
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
	require.Len(t, s.Requests(), 4)
	assert.JSONEq(t, s.Field(1, "messages"), s.Field(2, "messages"), "the resumed run resends the failed turn unchanged")
}

// RunCutOffLoop checks the cut-off rule end to end: the server answers
// cut (a turn that ended at the output limit, in the API's words, whose
// create_site call callID has arguments that parse) and then finish
// (builtin_node_finish, as loop_5_finish.json). The write must not run; the call is answered
// REJECTED TOOL_CALL_CUT_OFF, which the second request carries as the
// call's result; the run finishes. m is the model to run (nil: a.Model of
// the server), so that an adapter can run it streamed too. It uses
// a.Endpoint, a.NewModel and a.ToolResult.
func (a Adapter) RunCutOffLoop(t *testing.T, cut, finish Reply, callID string, m func(s *Server) react.Model) {
	t.Helper()
	s := a.NewServer(t, cut, finish)
	model := a.Model(t, s)
	if m != nil {
		model = m(s)
	}
	var creates atomic.Int32
	loop, err := react.New(react.Config{Model: model, Tools: SiteCatalog(&creates), Guards: &guard.Options{}, Logger: Quiet})
	require.NoError(t, err)
	res, err := loop.Run(context.Background(), SiteNode(), Task)
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Zero(t, creates.Load(), "a call of a cut-off turn never runs")
	require.NotEmpty(t, res.Calls)
	assert.Equal(t, "TOOL_CALL_CUT_OFF", res.Calls[0].Code.String())
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, a.result(t, reqs[1], callID), "the turn ended at the output limit", "the model is told why")
}
