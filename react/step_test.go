package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

var stepNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// quoteTool returns quotes {"price": …, "at": …} whose fetch time is "at".
func quoteTool(at time.Time) *fake {
	f := newFake("quote", tool.Read, ok(map[string]any{"price": 10.5, "at": at.Format(time.RFC3339)}))
	f.Contract = &tool.Contract{
		MaxAge: 15 * time.Minute,
		Provenance: func(r any) evidence.Provenance {
			m := r.(map[string]any)
			t, _ := time.Parse(time.RFC3339, m["at"].(string))
			return evidence.Provenance{FetchedAt: t, Source: "https://quotes.example/q", Version: "v3"}
		},
	}
	return f
}

func stepEnv(t *testing.T, m *script, tools ...*tool.Tool) *env {
	t.Helper()
	e := newEnv(t, m, tools...)
	e.guards.Now = func() time.Time { return stepNow }
	var err error
	e.loop, err = react.New(e.cfg)
	require.NoError(t, err)
	return e
}

func TestRequire_Validation(t *testing.T) {
	plain := newFake("list", tool.Read, ok([]string{"a"}))
	q := quoteTool(stepNow)
	e := newEnv(t, newScript(), plain.Tool, q.Tool)
	tests := []struct {
		reason string
		node   react.Node
		want   string
	}{
		{"a requirement on a tool the node does not show", react.Node{Tools: []string{"list"}, Require: map[string]tool.Requirement{"quote": tool.RequireLatest}}, "not in Tools"},
		{"latest needs a maximum age", react.Node{Tools: []string{"list"}, Require: map[string]tool.Requirement{"list": tool.RequireLatest}}, "declares no MaxAge"},
		{"complete needs paging", react.Node{Tools: []string{"quote"}, Require: map[string]tool.Requirement{"quote": tool.RequireComplete}}, "declares no Paging"},
		{"an undefined requirement", react.Node{Tools: []string{"quote"}, Require: map[string]tool.Requirement{"quote": 64}}, "invalid"},
	}
	for _, tt := range tests {
		_, err := e.loop.Run(context.Background(), tt.node, "go")
		require.ErrorIsf(t, err, react.ErrInvalidNode, "%s", tt.reason)
		assert.Containsf(t, err.Error(), tt.want, "%s", tt.reason)
	}
}

// A complete requirement on a tool whose contract declares Paging is
// accepted; a latest one on a contract with MaxAge zero is refused.
func TestRequire_ContractBounds(t *testing.T) {
	paged := newFake("pages", tool.Read, ok([]string{"a"}))
	paged.InputSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"cursor": {Type: "string"}}}
	paged.Contract = &tool.Contract{Paging: &tool.Paging{Next: func(any) string { return "" }, Param: "cursor"}}
	e := newEnv(t, newScript(turn(finish("f"))), paged.Tool)
	res, err := e.loop.Run(context.Background(), react.Node{Tools: []string{"pages"}, Require: map[string]tool.Requirement{"pages": tool.RequireComplete}}, "go")
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	// a contract whose MaxAge is zero declares no maximum age
	_, err = e.loop.Run(context.Background(), react.Node{Tools: []string{"pages"}, Require: map[string]tool.Requirement{"pages": tool.RequireLatest}}, "go")
	require.ErrorIs(t, err, react.ErrInvalidNode)
	assert.Contains(t, err.Error(), "declares no MaxAge")
}

// A stale result under a latest requirement is SUCCESS, insufficient and
// stale, and the model reads why and what to do; the record keeps its
// provenance, which the call report shows.
func TestRun_StaleResult(t *testing.T) {
	q := quoteTool(stepNow.Add(-2 * time.Hour))
	m := newScript(turn(call("c1", "quote", `{}`)), turn(call("f", react.ToolFinish, `{}`)))
	e := stepEnv(t, m, q.Tool)
	node := react.Node{Tools: []string{"quote"}, Require: map[string]tool.Requirement{"quote": tool.RequireLatest}}
	res := e.run(node, "the latest price")
	require.Equal(t, react.Finished, res.Status)
	rep := res.Calls[0]
	assert.Equal(t, outcome.Success, rep.Outcome)
	assert.Equal(t, react.ExecOK, rep.Execution)
	assert.Equal(t, react.BusinessInsufficient, rep.Business, "a stale cache hit is no evidence of the latest price")
	assert.Contains(t, rep.Reason, "2h0m0s old, older than the 15m0s")
	require.NotNil(t, rep.Provenance, "the call report shows where the result came from")
	assert.Equal(t, "https://quotes.example/q", rep.Provenance.Source)
	assert.True(t, rep.Provenance.FetchedAt.Equal(stepNow.Add(-2*time.Hour)))
	msg := toolMessage(t, res.Transcript, "c1").Content
	assert.Contains(t, msg, "business status insufficient: the result of quote is 2h0m0s old")
	assert.Contains(t, msg, "calling it again can help. Next: call quote again for fresh data")
	assert.Equal(t, react.StepInsufficient, res.Step.Status, "the node finished without a required output: the model's word alone")

	// Without the requirement the same result is evidence.
	m = newScript(turn(call("c1", "quote", `{}`)), turn(call("f", react.ToolFinish, `{}`)))
	e = stepEnv(t, m, q.Tool)
	res = e.run(react.Node{Tools: []string{"quote"}}, "a price")
	assert.Equal(t, react.BusinessEvidence, res.Calls[0].Business)
	assert.NotContains(t, toolMessage(t, res.Transcript, "c1").Content, "business status")
}

func TestRun_BusinessStatuses(t *testing.T) {
	job := newFake("export", tool.Read, ok(map[string]string{"job": "j-1", "status": "running"}))
	job.Contract = &tool.Contract{Async: &tool.Async{Poll: "export", Param: "job", Pending: func(r any) (string, bool) {
		m := r.(map[string]string)
		return m["job"], m["status"] == "running"
	}}}
	job.InputSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"job": {Type: "string"}}}
	wall := newFake("visit", tool.Read, ok(map[string]string{"title": "Verify you are human"}))
	wall.Contract = &tool.Contract{Blocked: func(r any) (tool.Wall, string) {
		if r.(map[string]string)["title"] == "Verify you are human" {
			return tool.WallCaptcha, "the page is a captcha"
		}
		return tool.NoWall, ""
	}}
	none := newFake("invoices", tool.Read, ok([]string{}))
	none.Contract = &tool.Contract{Empty: tool.EmptyAnswers}
	m := newScript(
		turn(call("c1", "export", `{}`)),
		turn(call("c2", "invoices", `{}`)),
		turn(call("c3", "visit", `{}`)),
		turn(call("f", react.ToolFail, `{"reason":"a captcha blocks the page"}`)),
	)
	e := stepEnv(t, m, job.Tool, wall.Tool, none.Tool)
	res := e.run(react.Node{Tools: []string{"export", "visit", "invoices"}}, "export and check")
	require.Equal(t, react.Failed, res.Status)
	require.Len(t, res.Calls, 4)
	assert.Equal(t, react.BusinessAccepted, res.Calls[0].Business, "an accepted job is not done")
	assert.Equal(t, "j-1", res.Calls[0].Reason, "the report names the job")
	assert.Contains(t, toolMessage(t, res.Transcript, "c1").Content, `call export with job "j-1"`)
	assert.Equal(t, react.ExecEmpty, res.Calls[1].Execution)
	assert.Equal(t, react.BusinessEvidence, res.Calls[1].Business, "an empty result that is the answer is evidence")
	assert.Equal(t, outcome.Failed, res.Calls[2].Outcome)
	assert.Equal(t, errcode.ToolBlocked, res.Calls[2].Code)
	assert.Equal(t, react.ExecOK, res.Calls[2].Execution, "the page answered")
	assert.Equal(t, react.BusinessBlocked, res.Calls[2].Business)
	assert.Equal(t, react.StepBlocked, res.Step.Status, "a run that failed after a wall is blocked, not failed")
}

// A verifier runs after each tool result and at the finish; the step is
// satisfied only when it says so at the finish.
func TestRun_Verifier(t *testing.T) {
	search := newFake("search", tool.Read, func(_ context.Context, req tool.Request) (any, error) {
		var in struct{ Q string }
		_ = json.Unmarshal(req.Args, &in)
		if in.Q == "bern hotels" {
			return map[string]any{"hotels": []string{"h-1", "h-2"}}, nil
		}
		return map[string]any{"hotels": []string{"h-1"}}, nil
	})
	var asked []react.Check
	v := react.VerifierFunc(func(_ context.Context, c react.Check) (react.StepVerdict, error) {
		asked = append(asked, c)
		n := 0
		for _, rep := range c.Calls {
			if rep.Tool == "search" && rep.Business == react.BusinessEvidence {
				n++
			}
		}
		if n < 2 {
			return react.StepVerdict{Status: react.StepInsufficient, Reason: "one source only; two are needed", Next: "search again with another query"}, nil
		}
		return react.StepVerdict{Status: react.StepSatisfied, Evidence: []string{"c1", "c2"}}, nil
	})
	m := newScript(
		turn(call("c1", "search", `{"q":"hotels"}`)),
		turn(call("f1", react.ToolFinish, `{"summary":"h-1"}`)),
		turn(call("c2", "search", `{"q":"bern hotels"}`)),
		turn(call("f2", react.ToolFinish, `{"summary":"h-1, h-2"}`)),
	)
	e := newEnv(t, m, search.Tool)
	res, err := e.loop.Run(context.Background(), react.Node{Name: "find", Tools: []string{"search"}}, "find hotels", react.WithVerifier(v))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, react.StepReport{Status: react.StepSatisfied, Evidence: []string{"c1", "c2"}}, res.Step)
	assert.Contains(t, toolMessage(t, res.Transcript, "c1").Content,
		"step check: insufficient: one source only; two are needed. Next: search again with another query", "the model reads the verdict after the result")
	f1 := toolMessage(t, res.Transcript, "f1")
	assert.True(t, f1.IsError)
	assert.Equal(t, "the step is not verified as done: it is insufficient: one source only; two are needed. Next: search again with another query", f1.Content,
		"a finish the verifier does not find satisfied is refused")
	assert.Equal(t, errcode.StepNotSatisfied, res.Calls[1].Code)
	assert.Equal(t, 0, res.Stalls, "the refused finish counted one stall, the next search reset it")
	assert.Contains(t, toolMessage(t, res.Transcript, "c2").Content, "step check: satisfied")
	require.NotNil(t, res.Calls[2].Check)
	assert.Equal(t, react.StepSatisfied, res.Calls[2].Check.Status, "the call report keeps the verdict")
	require.Len(t, asked, 4, "after each of two results and at each of two finishes")
	assert.False(t, asked[0].End)
	assert.Equal(t, "c1", asked[0].Call.CallID)
	assert.JSONEq(t, `{"hotels":["h-1"]}`, string(asked[0].Result))
	assert.True(t, asked[1].End)
	assert.Equal(t, "h-1", asked[1].Summary)
	assert.Equal(t, "find", asked[3].Node)

	// Chinese: the verdict in the catalog's words.
	asked = nil
	m = newScript(turn(call("c1", "search", `{"q":"hotels"}`)), turn(call("f", react.ToolFail, `{"reason":"x"}`)))
	cfg := e.cfg
	cfg.Model, cfg.Lang = m, prompt.Chinese
	zh, err := react.New(cfg)
	require.NoError(t, err)
	res, err = zh.Run(context.Background(), react.Node{Tools: []string{"search"}}, "找酒店", react.WithVerifier(v))
	require.NoError(t, err)
	assert.Contains(t, toolMessage(t, res.Transcript, "c1").Content, "步骤校验：信息不足：one source only; two are needed。下一步：search again with another query")
	assert.Equal(t, react.StepFailed, res.Step.Status)
}

// A verifier that fails or panics interrupts the run; Continue runs the
// call again and asks again.
func TestRun_VerifierFailureInterrupts(t *testing.T) {
	for _, mode := range []string{"error", "panic", "bad status"} {
		t.Run(mode, func(t *testing.T) {
			search := newFake("search", tool.Read, ok(map[string]any{"hotels": []string{"h-1"}}))
			broken := true
			v := react.VerifierFunc(func(context.Context, react.Check) (react.StepVerdict, error) {
				if broken {
					switch mode {
					case "error":
						return react.StepVerdict{}, errors.New("rubric store down")
					case "panic":
						panic("verifier bug")
					default:
						return react.StepVerdict{Status: react.StepPending}, nil
					}
				}
				return react.StepVerdict{Status: react.StepSatisfied}, nil
			})
			m := newScript(turn(call("c1", "search", `{}`)), turn(call("f", react.ToolFinish, `{}`)))
			e := newEnv(t, m, search.Tool)
			node := react.Node{Tools: []string{"search"}}
			res, err := e.loop.Run(context.Background(), node, "find", react.WithVerifier(v))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "step verifier")
			require.Equal(t, react.Interrupted, res.Status, "the run is kept, never lost")
			require.NotEmpty(t, res.Snapshot)
			broken = false
			res, err = e.loop.Resume(context.Background(), res.Snapshot, react.Continue(), react.WithVerifier(v))
			require.NoError(t, err)
			assert.Equal(t, react.Finished, res.Status)
			assert.Equal(t, react.StepSatisfied, res.Step.Status)
			assert.Equal(t, 2, search.executions(), "the interrupted call ran again on Continue")
		})
	}
}

// A verifier that fails after a call of a parallel read batch interrupts
// the run as it does after a serial call: the failure is returned, never
// dropped by running the batch again.
func TestRun_VerifierFailureInterrupts_ParallelReads(t *testing.T) {
	search := newFake("search", tool.Read, ok(map[string]any{"hotels": []string{"h-1"}}))
	var asked atomic.Int64
	v := react.VerifierFunc(func(context.Context, react.Check) (react.StepVerdict, error) {
		if asked.Add(1) == 1 {
			return react.StepVerdict{}, errors.New("rubric store down")
		}
		return react.StepVerdict{Status: react.StepSatisfied}, nil
	})
	m := newScript(turn(call("c1", "search", `{"q":"a"}`), call("c2", "search", `{"q":"b"}`)), turn(call("f", react.ToolFinish, `{}`)))
	e := newEnv(t, m, search.Tool)
	node := react.Node{Tools: []string{"search"}, ParallelReads: true}
	res, err := e.loop.Run(context.Background(), node, "find", react.WithVerifier(v))
	require.Error(t, err, "the verifier's failure in a parallel batch is returned")
	assert.Contains(t, err.Error(), "step verifier")
	require.Equal(t, react.Interrupted, res.Status, "the run is kept, never lost")
	assert.Equal(t, int64(1), asked.Load(), "the run stopped at the failure")
	res, err = e.loop.Resume(context.Background(), res.Snapshot, react.Continue(), react.WithVerifier(v))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	requirePaired(t, res.Transcript)
}

// The verifier is asked after a catalog call that failed as well as after
// one that succeeded (Check.Call set, Check.Result nil for the failure).
func TestRun_VerifierAskedAfterAFailedCall(t *testing.T) {
	list, broken, _ := sitesTools()
	var mu sync.Mutex
	asked := map[string]bool{} // call id -> Check.Result was nil
	v := react.VerifierFunc(func(_ context.Context, c react.Check) (react.StepVerdict, error) {
		if c.Call != nil {
			mu.Lock()
			asked[c.Call.CallID] = c.Result == nil
			mu.Unlock()
		}
		return react.StepVerdict{Status: react.StepSatisfied}, nil
	})
	m := newScript(turn(call("c1", "get_stats", `{}`)), turn(call("c2", "list_sites", `{}`)), turn(call("f", react.ToolFinish, `{}`)))
	e := newEnv(t, m, list.Tool, broken.Tool)
	res, err := e.loop.Run(context.Background(), react.Node{Tools: []string{"list_sites", "get_stats"}}, "stats", react.WithVerifier(v))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.True(t, toolMessage(t, res.Transcript, "c1").IsError)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]bool{"c1": true, "c2": false}, asked, "both calls verified; the failure without a result")
}

// The report of a builtin_node_finish call keeps the verifier's verdict on
// the finish, a refused finish's and an accepted one's; the report of a
// call the verifier was not asked about has none.
func TestRun_FinishReportKeepsTheVerdict(t *testing.T) {
	search := newFake("search", tool.Read, ok(map[string]any{"hotels": []string{"h-1"}}))
	finishes := 0
	v := react.VerifierFunc(func(_ context.Context, c react.Check) (react.StepVerdict, error) {
		if !c.End {
			return react.StepVerdict{}, nil // no opinion after a result
		}
		finishes++
		if finishes == 1 {
			return react.StepVerdict{Status: react.StepInsufficient, Reason: "one source only"}, nil
		}
		return react.StepVerdict{Status: react.StepSatisfied, Evidence: []string{"c1"}}, nil
	})
	m := newScript(
		turn(call("c1", "search", `{"q":"hotels"}`)),
		turn(call("f1", react.ToolFinish, `{"summary":"h-1"}`)),
		turn(call("f2", react.ToolFinish, `{"summary":"h-1, for sure"}`)),
	)
	e := newEnv(t, m, search.Tool)
	res, err := e.loop.Run(context.Background(), react.Node{Name: "find", Tools: []string{"search"}}, "find hotels", react.WithVerifier(v))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	require.Len(t, res.Calls, 3)
	tests := []struct {
		call   int
		want   *react.StepVerdict
		reason string
	}{
		{0, nil, "the verifier had no opinion after the search"},
		{1, &react.StepVerdict{Status: react.StepInsufficient, Reason: "one source only"}, "the refused finish keeps the verdict that refused it"},
		{2, &react.StepVerdict{Status: react.StepSatisfied, Evidence: []string{"c1"}}, "the accepted finish keeps the verdict that accepted it"},
	}
	for _, tt := range tests {
		rep := res.Calls[tt.call]
		assert.Equal(t, tt.want, rep.Check, "%s (%s): %s", rep.CallID, rep.Tool, tt.reason)
	}
}

// The verified outputs of an earlier step are sources for the next: a
// parameter declared tool.Step accepts them and nothing else, and
// builtin_output_set accepts them with sourceRef step:<name>.
func TestRun_Inputs(t *testing.T) {
	book := newFake("book", tool.Write, ok(map[string]string{"booking": "b-1"}))
	book.InputSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"hotel_id": {Type: "string"}}}
	book.Params = map[string]tool.Source{"hotel_id": tool.Step("search", "hotel_id")}
	lookup := newFake("lookup", tool.Read, ok(map[string]string{"hotel_id": "h-2"}))
	m := newScript(
		turn(call("step:search", "lookup", `{}`)), // a model that takes the input's id
		turn(call("c2", "book", `{"hotel_id":"h-2"}`)),
		turn(call("c3", "book", `{"hotel_id":"h-9"}`)),
		turn(call("c4", react.ToolOutputSet, `{"key":"hotel","value":"h-1","sourceType":"tool_result","sourceRef":"step:search"}`)),
		turn(call("c5", react.ToolFinish, `{}`)),
	)
	e := newEnv(t, m, book.Tool, lookup.Tool)
	e.cfg.KeepRunState = true // to read the run's ledger after it ended
	var err error
	e.loop, err = react.New(e.cfg)
	require.NoError(t, err)
	in := react.Inputs{
		Steps:     []react.Input{{Step: "search", Outputs: map[string]json.RawMessage{"hotel_id": json.RawMessage(`"h-1"`)}}},
		UserTexts: []string{"the one near the station"},
		Statuses:  []react.StepState{{Step: "search", Status: react.StepSatisfied}, {Step: "reviews", Status: react.StepBlocked, Reason: "a captcha", MustSay: "no reviews could be read"}},
	}
	node := react.Node{Tools: []string{"book", "lookup"}, Outputs: []react.Output{{Key: "hotel", Required: true, Field: "hotel_id"}}}
	res, err := e.loop.Run(context.Background(), node, "book it", react.WithInputs(in))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, react.GoalMet, res.Goal, "an output copied from an earlier step's verified output is checked")
	assert.Equal(t, react.StepSatisfied, res.Step.Status)
	assert.Equal(t, errcode.ToolCallInvalid, res.Calls[0].Code, "no model call may take the id of an input")
	assert.Equal(t, errcode.ParamProvenanceMismatch, res.Calls[1].Code, "a value of this step's own tool result is not the earlier step's output")
	assert.Equal(t, errcode.ParamProvenanceMismatch, res.Calls[2].Code, "an invented value")
	assert.Equal(t, 0, book.executions())
	sys := m.requests()[0].Messages[0].Content
	assert.Contains(t, sys, `- step:search (step search): {"hotel_id":"h-1"}`, "the model sees the inputs and how to cite them")
	assert.Contains(t, sys, "- reviews: blocked: a captcha; the answer must say: no reviews could be read")
	said, err := e.guards.Ledger.UserSaid(context.Background(), "run-1", "near the station")
	require.NoError(t, err)
	assert.True(t, said, "the user's words of earlier steps stay the user's")
	said, err = e.guards.Ledger.UserSaid(context.Background(), "run-1", "h-1")
	require.NoError(t, err)
	assert.False(t, said, "an earlier step's output is not the user's words")

	_, err = e.loop.Run(context.Background(), node, "x", react.WithInputs(react.Inputs{Steps: []react.Input{{Step: "a"}, {Step: "a"}}}))
	assert.ErrorIs(t, err, react.ErrInvalidInputs)
}

// Inputs and host state are sealed in the snapshot: a resume in another
// loop shows the same system message, returns the host state, and needs
// the host's kind.
func TestRun_HostStateAndInputsSealed(t *testing.T) {
	m := newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which city?"}`)), turn(call("f", react.ToolFinish, `{}`)))
	e := newEnv(t, m)
	in := react.Inputs{
		Steps:    []react.Input{{Step: "search", Outputs: map[string]json.RawMessage{"city": json.RawMessage(`"Bern"`)}}},
		Statuses: []react.StepState{{Step: "reviews", Status: react.StepBlocked, Reason: "a captcha"}}, // sealed, and let through on restore
	}
	res, err := e.loop.Run(context.Background(), react.Node{Name: "ask"}, "plan a trip", react.WithInputs(in), react.WithHostState("acme.task", []byte{0, 1, 0xff}))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.Equal(t, []byte{0, 1, 0xff}, res.HostState)
	assert.Equal(t, react.StepInProgress, res.Step.Status)
	p, err := e.loop.Inspect(context.Background(), res.Snapshot)
	require.NoError(t, err)
	assert.Equal(t, "acme.task", p.HostKind)

	other := e.again(m)
	ticket := res.Suspension.Ticket
	_, err = other.Resume(context.Background(), res.Snapshot, react.Answer(ticket, "Bern"))
	require.ErrorIs(t, err, react.ErrHostState, "a plain resume cannot continue a run its host drives")
	assert.Contains(t, err.Error(), `is driven by a "acme.task" host; resume it through it (WithHostState("acme.task", …))`, "the error names the host to resume through")
	_, err = other.Resume(context.Background(), res.Snapshot, react.Answer(ticket, "Bern"), react.WithHostState("other.host", nil))
	require.ErrorIs(t, err, react.ErrHostState)
	res2, err := other.Resume(context.Background(), res.Snapshot, react.Answer(ticket, "Bern"), react.WithHostState("acme.task", nil))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res2.Status)
	assert.Equal(t, []byte{0, 1, 0xff}, res2.HostState, "the sealed state comes back, not the caller's")
	reqs := m.requests()
	assert.Equal(t, reqs[0].Messages[0].Content, reqs[1].Messages[0].Content, "the resumed run's system message shows the same inputs")
	assert.Contains(t, reqs[1].Messages[0].Content, "- reviews: blocked: a captcha")

	plain := newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which city?"}`)))
	e2 := newEnv(t, plain)
	res, err = e2.loop.Run(context.Background(), react.Node{}, "plan")
	require.NoError(t, err)
	_, err = e2.loop.Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "Bern"), react.WithHostState("acme.task", nil))
	require.ErrorIs(t, err, react.ErrHostState, "a host does not resume a run it does not drive")
	assert.Contains(t, err.Error(), `has no host state; resume it without WithHostState("acme.task")`, "the error says the run has no host")

	_, err = e2.loop.Run(context.Background(), react.Node{}, "x", react.WithHostState("", []byte("s")))
	require.ErrorIs(t, err, react.ErrHostState)
	_, err = e2.loop.Run(context.Background(), react.Node{}, "x", react.WithHostState("k", make([]byte, react.MaxHostState+1)))
	require.ErrorIs(t, err, react.ErrHostState)
}

// Evidence provenance travels in the snapshot of an in-process ledger.
func TestSnapshot_EvidenceProvenance(t *testing.T) {
	q := quoteTool(stepNow.Add(-time.Minute))
	m := newScript(turn(call("c1", "quote", `{}`)), turn(call("q", react.ToolFollowUp, `{"question":"Which currency?"}`)), turn(call("f", react.ToolFinish, `{}`)))
	e := stepEnv(t, m, q.Tool)
	res := e.run(react.Node{Tools: []string{"quote"}}, "price")
	require.Equal(t, react.Suspended, res.Status)
	assert.Contains(t, string(res.Snapshot), `"source":"https://quotes.example/q"`)
	fresh := newEnv(t, m, q.Tool) // another process: a new in-memory ledger
	fresh.cfg.KeepRunState = true
	var err error
	fresh.loop, err = react.New(fresh.cfg)
	require.NoError(t, err)
	_, err = fresh.loop.Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "CHF"))
	require.NoError(t, err)
	rec, ok, err := fresh.guards.Ledger.Lookup(context.Background(), "run-1", "c1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "v3", rec.Provenance.Version)
	assert.True(t, rec.Provenance.FetchedAt.Equal(stepNow.Add(-time.Minute)))
}

// A step's status follows its run: failed, or satisfied by its
// completion conditions without a verifier.
func TestRun_StepStatusWithoutVerifier(t *testing.T) {
	list := newFake("list", tool.Read, ok(map[string]string{"id": "s-1"}))
	m := newScript(turn(call("c1", "list", `{}`)), turn(call("o", react.ToolOutputSet, `{"key":"id","value":"s-1","sourceType":"tool_result","sourceRef":"c1"}`)), turn(call("f", react.ToolFinish, `{}`)))
	e := newEnv(t, m, list.Tool)
	res := e.run(react.Node{Tools: []string{"list"}, Outputs: []react.Output{{Key: "id", Required: true, Field: "id"}}}, "the id")
	assert.Equal(t, react.StepReport{Status: react.StepSatisfied}, res.Step, "every required output from a checked source")
	m = newScript(turn(call("f", react.ToolFail, `{"reason":"cannot"}`)))
	e = newEnv(t, m)
	res = e.run(react.Node{}, "x")
	assert.Equal(t, react.StepReport{Status: react.StepFailed, Reason: "cannot"}, res.Step)
}

func TestStepStatus_Enum(t *testing.T) {
	for s := react.StepNone; s <= react.StepFailed; s++ {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var back react.StepStatus
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back)
		assert.NotContains(t, s.String(), "step_status(")
		if s != react.StepNone {
			assert.NotEqual(t, s.Text(prompt.For(prompt.English)), s.Text(prompt.For(prompt.Chinese)), "%v has words in both catalogs", s)
		}
	}
	assert.Equal(t, "已满足", react.StepSatisfied.Text(prompt.For(prompt.Chinese)), "the source document's words")
	_, err := react.StepStatus(99).MarshalText()
	assert.Error(t, err)
	var s react.StepStatus
	assert.Error(t, s.UnmarshalText([]byte("done")))
	assert.True(t, strings.HasPrefix(react.StepStatus(99).String(), "step_status("))
}

// A snapshot sealed before evidence records carried provenance, and
// before runs carried step state, inputs and host state (generated by the
// loop of that time), still opens, resumes and finishes.
func TestSnapshot_SealedBeforeProvenance(t *testing.T) {
	snap, err := os.ReadFile("testdata/snapshot_v3_before_provenance.json")
	require.NoError(t, err)
	list := newFake("list", tool.Read, ok(map[string]string{"id": "s-1"}))
	m := newScript(turn(call("o", react.ToolOutputSet, `{"key":"id","value":"s-1","sourceType":"tool_result","sourceRef":"c1"}`)), turn(call("f", react.ToolFinish, `{}`)))
	e := newEnv(t, m, list.Tool)
	e.cfg.SnapshotKeys = [][]byte{[]byte("0123456789abcdef0123456789abcdef")}
	e.cfg.KeepRunState = true
	e.loop, err = react.New(e.cfg)
	require.NoError(t, err)
	owner := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
	p, err := e.loop.Inspect(context.Background(), snap, owner)
	require.NoError(t, err, "the old seal still verifies: the new fields are absent from its canonical form")
	assert.Empty(t, p.HostKind)
	res, err := e.loop.Resume(context.Background(), snap, react.Answer(p.Suspension.Ticket, "Spring"), owner)
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	var set *react.CallReport
	for i := range res.Calls {
		if res.Calls[i].CallID == "o" {
			set = &res.Calls[i]
		}
	}
	require.NotNil(t, set)
	assert.Equal(t, outcome.Success, set.Outcome, "the old record's payload is evidence: the output is set from it")
	assert.Contains(t, res.Outputs, "id")
	rec, ok, err := e.guards.Ledger.Lookup(context.Background(), "run-1", "c1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, rec.Provenance.IsZero(), "an old record reads without provenance")
}

// A required output set from a stale result meets the completion
// conditions (its value is checked) but does not satisfy the step.
func TestRun_StepOnStaleSource(t *testing.T) {
	q := quoteTool(stepNow.Add(-2 * time.Hour))
	m := newScript(turn(call("c1", "quote", `{}`)),
		turn(call("o", react.ToolOutputSet, `{"key":"price","value":10.5,"sourceType":"tool_result","sourceRef":"c1"}`)),
		turn(call("f", react.ToolFinish, `{}`)))
	e := stepEnv(t, m, q.Tool)
	node := react.Node{Tools: []string{"quote"}, Require: map[string]tool.Requirement{"quote": tool.RequireLatest}, Outputs: []react.Output{{Key: "price", Required: true, Field: "price"}}}
	res := e.run(node, "the latest price")
	assert.Equal(t, react.GoalMet, res.Goal)
	assert.Equal(t, react.StepInsufficient, res.Step.Status)
	assert.Contains(t, res.Step.Reason, "the result of quote does not serve the goal: the result of quote is 2h0m0s old")
}

// A required output set from an accepted job's result (not done yet)
// does not satisfy the step either: an accepted result is never done at
// once. The same output from the polled, done result does.
func TestRun_StepOnAcceptedSource(t *testing.T) {
	job := newFake("export", tool.Read, ok(map[string]string{"job": "j-1", "status": "running"}))
	job.Contract = &tool.Contract{Async: &tool.Async{Poll: "export", Param: "job", Pending: func(r any) (string, bool) {
		m := r.(map[string]string)
		return m["job"], m["status"] == "running"
	}}}
	job.InputSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"job": {Type: "string"}}}
	node := react.Node{Tools: []string{"export"}, Outputs: []react.Output{{Key: "job", Required: true, Field: "job"}}}
	m := newScript(turn(call("c1", "export", `{}`)),
		turn(call("o", react.ToolOutputSet, `{"key":"job","value":"j-1","sourceType":"tool_result","sourceRef":"c1"}`)),
		turn(call("f", react.ToolFinish, `{}`)))
	res := stepEnv(t, m, job.Tool).run(node, "export")
	assert.Equal(t, react.GoalMet, res.Goal)
	assert.Equal(t, react.BusinessAccepted, res.Calls[0].Business)
	assert.Equal(t, react.StepInsufficient, res.Step.Status, "an output from an accepted job's result")
	assert.Contains(t, res.Step.Reason, "the result of export does not serve the goal")

	done := newFake("export", tool.Read, ok(map[string]string{"job": "j-1", "status": "done"}))
	done.Contract, done.InputSchema = job.Contract, job.InputSchema
	m = newScript(turn(call("c1", "export", `{}`)),
		turn(call("o", react.ToolOutputSet, `{"key":"job","value":"j-1","sourceType":"tool_result","sourceRef":"c1"}`)),
		turn(call("f", react.ToolFinish, `{}`)))
	res = stepEnv(t, m, done.Tool).run(node, "export")
	assert.Equal(t, react.StepSatisfied, res.Step.Status, "the same output from a done result")
}

func TestLoop_CheckNode(t *testing.T) {
	q := quoteTool(stepNow)
	e := newEnv(t, newScript(), q.Tool)
	assert.NoError(t, e.loop.CheckNode(react.Node{Tools: []string{"quote"}, Require: map[string]tool.Requirement{"quote": tool.RequireLatest}}))
	assert.ErrorIs(t, e.loop.CheckNode(react.Node{Tools: []string{"nope"}}), react.ErrInvalidNode)
	assert.ErrorIs(t, e.loop.CheckNode(react.Node{Tools: []string{"quote"}, Require: map[string]tool.Requirement{"quote": tool.RequireComplete}}), react.ErrInvalidNode)
}

// A refused finish carries the verifier's code only when it is one of the
// call layer's, with the verifier's reason as the whole reason; any other
// code (an execution or business code, an undefined one) is replaced by
// STEP_NOT_SATISFIED, since a finish is a call the loop refused.
func TestRun_VerifierCode(t *testing.T) {
	const why = "the answer leaves out the second hotel"
	for _, c := range []struct {
		name   string
		code   errcode.Code
		reason string
		want   errcode.Code
	}{
		{"a call-layer code is kept", errcode.AnswerOmitsMissing, why, errcode.AnswerOmitsMissing},
		{"a call-layer code without a reason is replaced: the model would read nothing", errcode.AnswerOmitsMissing, "", errcode.StepNotSatisfied},
		{"a business code is replaced", errcode.ToolBusinessFailed, why, errcode.StepNotSatisfied},
		{"an execution code is replaced", errcode.ToolTimeout, why, errcode.StepNotSatisfied},
		{"no code", 0, why, errcode.StepNotSatisfied},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := react.VerifierFunc(func(_ context.Context, ch react.Check) (react.StepVerdict, error) {
				if !ch.End {
					return react.StepVerdict{Status: react.StepNone}, nil
				}
				return react.StepVerdict{Status: react.StepInsufficient, Reason: c.reason, Code: c.code}, nil
			})
			m := newScript(turn(call("f1", react.ToolFinish, `{"summary":"h-1"}`)), turn(call("f2", react.ToolFail, `{"reason":"x"}`)))
			e := newEnv(t, m)
			res, err := e.loop.Run(context.Background(), react.Node{Name: "find"}, "find hotels", react.WithVerifier(v))
			require.NoError(t, err)
			require.NotEmpty(t, res.Calls)
			assert.Equal(t, c.want, res.Calls[0].Code, "the refused finish's code")
			msg := toolMessage(t, res.Transcript, "f1").Content
			switch {
			case c.want == c.code:
				assert.True(t, strings.HasPrefix(msg, why), "the verifier's reason is the whole reason: %s", msg)
			case c.reason == "":
				assert.True(t, strings.HasPrefix(msg, "the step is not verified as done: it is insufficient"), "the status stands for the reason: %s", msg)
			default:
				assert.Contains(t, msg, "the step is not verified as done: it is insufficient: "+why)
			}
		})
	}
}

// The step's status when the run failed after a result that fell short:
// insufficient when the model gave up on it (more information may
// complete the step), failed when the loop ended the run (its round
// limit), even when that result was the run's first call.
func TestRun_StepAfterAShortResult(t *testing.T) {
	none := newFake("invoices", tool.Read, ok([]string{}))
	none.Contract = &tool.Contract{Empty: tool.EmptyAllowed}
	t.Run("the model gives up", func(t *testing.T) {
		m := newScript(turn(call("c1", "invoices", `{}`)), turn(call("f", react.ToolFail, `{"reason":"no invoices this month"}`)))
		e := stepEnv(t, m, none.Tool)
		res := e.run(react.Node{Tools: []string{"invoices"}}, "list this month's invoices")
		require.Equal(t, react.Failed, res.Status)
		require.Equal(t, react.BusinessInsufficient, res.Calls[0].Business, "an empty result the contract allows serves no goal by itself")
		assert.Equal(t, react.StepReport{Status: react.StepInsufficient, Reason: "no invoices this month"}, res.Step)
	})
	t.Run("the round limit ends it", func(t *testing.T) {
		m := newScript(turn(call("c1", "invoices", `{}`)), turn(call("c2", "invoices", `{"month":"2026-11"}`)))
		e := stepEnv(t, m, none.Tool)
		res := e.run(react.Node{Tools: []string{"invoices"}, MaxRounds: 1}, "list this month's invoices")
		require.Equal(t, react.Failed, res.Status)
		require.NotNil(t, res.Failure)
		require.Equal(t, react.FailedRoundLimit, res.Failure.Kind)
		assert.Equal(t, react.StepFailed, res.Step.Status)
	})
}

// A run that stops before it ends (a question to the user) is in progress;
// its report carries the reason of the latest verdict that was not
// satisfied, and nothing after a satisfied one.
func TestRun_StepInProgressReason(t *testing.T) {
	list := newFake("list", tool.Read, ok(map[string]string{"id": "s-1"}))
	for _, c := range []struct {
		name    string
		verdict react.StepVerdict
		want    string
	}{
		{"an insufficient verdict's reason", react.StepVerdict{Status: react.StepInsufficient, Reason: "one source only"}, "one source only"},
		{"a satisfied verdict leaves no reason", react.StepVerdict{Status: react.StepSatisfied, Reason: "two sources agree"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := react.VerifierFunc(func(context.Context, react.Check) (react.StepVerdict, error) { return c.verdict, nil })
			m := newScript(turn(call("c1", "list", `{}`)), turn(reacttest.FollowUp("q", "Which site?")))
			e := stepEnv(t, m, list.Tool)
			res, err := e.loop.Run(context.Background(), react.Node{Tools: []string{"list"}}, "find the site", react.WithVerifier(v))
			require.NoError(t, err)
			require.Equal(t, react.Suspended, res.Status)
			assert.Equal(t, react.StepReport{Status: react.StepInProgress, Reason: c.want}, res.Step)
		})
	}
}

// A resumed run takes back the latest verdict from its call reports, even
// when it is the verdict of the run's first call and later calls carry
// none: the resumed run that stops again reports its reason. A blocked
// verdict's reason names the step's status over the model's own words.
func TestResume_RestoresTheLatestVerdict(t *testing.T) {
	list := newFake("list", tool.Read, ok(map[string]string{"id": "s-1"}))
	v := react.VerifierFunc(func(context.Context, react.Check) (react.StepVerdict, error) {
		return react.StepVerdict{Status: react.StepInsufficient, Reason: "one source only"}, nil
	})
	m := newScript(turn(call("c1", "list", `{}`)), turn(reacttest.FollowUp("q1", "Which site?")))
	e := stepEnv(t, m, list.Tool)
	res, err := e.loop.Run(context.Background(), react.Node{Tools: []string{"list"}}, "find the site", react.WithVerifier(v))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	res, err = e.again(newScript(turn(reacttest.FollowUp("q2", "Which city?")))).Resume(context.Background(), res.Snapshot,
		react.Answer(res.Suspension.Ticket, "the blue one"), react.WithVerifier(v))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.Equal(t, react.StepReport{Status: react.StepInProgress, Reason: "one source only"}, res.Step, "c1's verdict, restored")

	blocked := react.VerifierFunc(func(context.Context, react.Check) (react.StepVerdict, error) {
		return react.StepVerdict{Status: react.StepBlocked, Reason: "a captcha on the page"}, nil
	})
	m = newScript(turn(call("c1", "list", `{}`)), turn(call("f", react.ToolFail, `{"reason":"cannot go on"}`)))
	e = stepEnv(t, m, list.Tool)
	res, err = e.loop.Run(context.Background(), react.Node{Tools: []string{"list"}}, "find the site", react.WithVerifier(blocked))
	require.NoError(t, err)
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, react.StepReport{Status: react.StepBlocked, Reason: "a captcha on the page"}, res.Step)
}

// The system prompt lists the inputs a task gives a step: the earlier
// steps' verified outputs under their header and the steps' statuses under
// theirs, each header only when something follows it, one blank line
// between the two; statuses alone are listed too.
func TestRun_InputsPrompt(t *testing.T) {
	const (
		outputsHeader  = "Verified outputs of earlier steps."
		statusesHeader = "Status of the task's steps."
	)
	search := react.Input{Step: "search", Outputs: map[string]json.RawMessage{"city": json.RawMessage(`"Bern"`)}}
	reviews := react.StepState{Step: "reviews", Status: react.StepBlocked, Reason: "a captcha"}
	for _, c := range []struct {
		name      string
		in        react.Inputs
		want, not []string
	}{
		{"outputs only", react.Inputs{Steps: []react.Input{search}},
			[]string{outputsHeader, `- step:search (step search): {"city":"Bern"}`}, []string{statusesHeader}},
		{"statuses only", react.Inputs{Statuses: []react.StepState{reviews}},
			[]string{statusesHeader, "- reviews: blocked: a captcha"}, []string{outputsHeader, "\n\n\n"}},
		{"both, a blank line between", react.Inputs{Steps: []react.Input{search}, Statuses: []react.StepState{reviews}},
			[]string{outputsHeader, `{"city":"Bern"}` + "\n\n" + statusesHeader}, nil},
		{"user texts only", react.Inputs{UserTexts: []string{"near the station"}},
			nil, []string{outputsHeader, statusesHeader}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newScript(turn(call("f", react.ToolFinish, `{}`)))
			e := newEnv(t, m)
			_, err := e.loop.Run(context.Background(), react.Node{Name: "plan"}, "plan a trip", react.WithInputs(c.in))
			require.NoError(t, err)
			sys := m.requests()[0].Messages[0].Content
			for _, w := range c.want {
				assert.Contains(t, sys, w)
			}
			for _, n := range c.not {
				assert.NotContains(t, sys, n)
			}
		})
	}
}

// WithHostState's bounds are inclusive: a kind of MaxToolName bytes and a
// state of MaxHostState bytes are sealed, a byte more of either is
// ErrHostState and nothing runs; a state without a kind is refused.
func TestWithHostState_Bounds(t *testing.T) {
	kind := strings.Repeat("k", react.MaxToolName)
	for _, c := range []struct {
		name  string
		kind  string
		state []byte
		ok    bool
	}{
		{"a kind of MaxToolName bytes", kind, []byte("s"), true},
		{"a kind a byte longer", kind + "k", []byte("s"), false},
		{"a state of MaxHostState bytes", "acme.task", make([]byte, react.MaxHostState), true},
		{"a state a byte longer", "acme.task", make([]byte, react.MaxHostState+1), false},
		{"a state without a kind", "", []byte("s"), false},
		{"a kind without a state", "acme.task", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which city?"}`)), turn(call("f", react.ToolFinish, `{}`)))
			e := newEnv(t, m)
			res, err := e.loop.Run(context.Background(), react.Node{Name: "plan"}, "plan a trip", react.WithHostState(c.kind, c.state))
			if !c.ok {
				require.ErrorIs(t, err, react.ErrHostState)
				assert.Empty(t, m.requests(), "nothing ran")
				return
			}
			require.NoError(t, err)
			require.Equal(t, react.Suspended, res.Status)
			assert.Equal(t, len(c.state), len(res.HostState), "the state comes back whole")
			// A state sealed within the bounds is restored within them.
			res, err = e.loop.Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "Bern"), react.WithHostState(c.kind, nil))
			require.NoError(t, err)
			assert.Equal(t, react.Finished, res.Status)
			assert.Equal(t, len(c.state), len(res.HostState), "the resumed run's state comes back whole")
		})
	}
}
