package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// noSleep lets the retry guard retry at once.
func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// reportOf returns the call report of callID.
func reportOf(t *testing.T, res react.Result, callID string) react.CallReport {
	t.Helper()
	var found []react.CallReport
	for _, c := range res.Calls {
		if c.CallID == callID {
			found = append(found, c)
		}
	}
	require.Len(t, found, 1, "exactly one report of call %s", callID)
	return found[0]
}

// toolEvents records the tool events an observer received.
type toolEvents struct {
	invoked, skipped []react.ToolEvent
	ends             []react.EndEvent
}

func (o *toolEvents) OnToolInvoked(_ context.Context, e react.ToolEvent) {
	o.invoked = append(o.invoked, e)
}

func (o *toolEvents) OnToolSkipped(_ context.Context, e react.ToolEvent) {
	o.skipped = append(o.skipped, e)
}
func (o *toolEvents) OnFinished(_ context.Context, e react.EndEvent) { o.ends = append(o.ends, e) }
func (o *toolEvents) OnFailed(_ context.Context, e react.EndEvent)   { o.ends = append(o.ends, e) }

func attempt(o outcome.Outcome, code errcode.Code, s react.ExecStatus) react.Attempt {
	return react.Attempt{Outcome: o, Code: code, Status: s}
}

func once(o outcome.Outcome, code errcode.Code, s react.ExecStatus) (int, react.Attempt, react.Attempt) {
	a := attempt(o, code, s)
	return 1, a, a
}

// Every call gets the three layers of seed 003, each judged by its own
// evidence: the call layer by pairing, resolution, arguments and
// admission; the execution layer by the final attempt's class (an empty
// result is "empty" even when the contract allows it); the business layer
// by the result's use to the task.
func TestLayers_PerCall(t *testing.T) {
	needsName := &jsonschema.Schema{Type: "object", Required: []string{"name"}, Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}
	shaped := &jsonschema.Schema{Type: "object", Required: []string{"id"}}
	tests := []struct {
		name   string
		why    string
		tool   *tool.Tool
		calls  []react.ToolCall // the last one is judged
		node   react.Node
		want   react.Layers
		result outcome.Outcome
	}{
		{name: "useful result", why: "a non-empty result is new evidence",
			tool:  newFake("t", tool.Read, ok(map[string]any{"id": 7})).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecOK, Business: react.BusinessEvidence}},
		{name: "empty result the contract allows", why: "executed, business not satisfied; the verdict stays SUCCESS",
			tool:  newFake("t", tool.Read, ok([]any{})).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecEmpty, Business: react.BusinessInsufficient}},
		{name: "raw empty result", why: "raw JSON is judged without decoding it",
			tool:  newFake("t", tool.Read, ok(json.RawMessage(` { } `))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecEmpty, Business: react.BusinessInsufficient}},
		{name: "empty result the contract refuses", why: "TOOL_RESULT_EMPTY",
			tool:  withContract(newFake("t", tool.Read, ok([]any{})).Tool, &tool.Contract{Empty: tool.EmptyFails}),
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecEmpty, Business: react.BusinessInsufficient}},
		{name: "empty result that is the answer", why: "tool.EmptyAnswers: \"no invoice is overdue\" is evidence; Sufficient is not asked",
			tool: withContract(newFake("t", tool.Read, ok([]any{})).Tool, &tool.Contract{Empty: tool.EmptyAnswers,
				Sufficient: func(any) (bool, string) { return false, "never asked" }}),
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecEmpty, Business: react.BusinessEvidence}},
		{name: "non-empty result of an empty-answers tool", why: "Sufficient is asked as for any other result",
			tool: withContract(newFake("t", tool.Read, ok([]any{1})).Tool, &tool.Contract{Empty: tool.EmptyAnswers,
				Sufficient: func(any) (bool, string) { return false, "short" }}),
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecOK, Business: react.BusinessInsufficient, Reason: "short"}},
		{name: "custom emptiness", why: "the contract's IsEmpty decides",
			tool: withContract(newFake("t", tool.Read, ok(map[string]any{"total": 0})).Tool,
				&tool.Contract{IsEmpty: func(r any) bool { return r.(map[string]any)["total"] == 0 }}),
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecEmpty, Business: react.BusinessInsufficient}},
		{name: "insufficient result", why: "the contract's Sufficient check refused a non-empty result",
			tool: withContract(newFake("t", tool.Read, ok(map[string]any{"status": "pending"})).Tool,
				&tool.Contract{Sufficient: func(any) (bool, string) { return false, "the order is not delivered" }}),
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecOK, Business: react.BusinessInsufficient, Reason: "the order is not delivered"}},
		{name: "business failure in a 200 body", why: "the execution kept its contract; the business refused",
			tool:  newFake("t", tool.Read, fails(tool.BusinessFailure("crm.7", "quota exceeded"))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecOK, Business: react.BusinessRejected}},
		{name: "timeout", why: "TOOL_TIMEOUT",
			tool:  newFake("t", tool.Read, fails(tool.Classified(tool.KindTimeout, "slow", nil))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecTimeout}},
		{name: "forbidden", why: "TOOL_FORBIDDEN",
			tool:  newFake("t", tool.Read, fails(tool.Forbidden("no access"))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecForbidden}},
		{name: "too large", why: "TOOL_RESULT_TOO_LARGE has its own class, beside timeout and rate limit",
			tool:  newFake("t", tool.Read, fails(tool.Classified(tool.KindTooLarge, "4 GB", nil))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecTooLarge}},
		{name: "not found", why: "TOOL_NOT_FOUND",
			tool:  newFake("t", tool.Read, fails(tool.NotFound("no such order"))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecNotFound}},
		{name: "rate limited", why: "TOOL_RATE_LIMITED is temporarily unavailable",
			tool:  newFake("t", tool.Read, fails(tool.RateLimited("slow down"))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecTemporarilyUnavailable}},
		{name: "plain error", why: "TOOL_ERROR is unknown",
			tool:  newFake("t", tool.Read, fails(errors.New("boom"))).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecUnknown}},
		{name: "changed response shape", why: "TOOL_RESULT_INVALID",
			tool:  withContract(newFake("t", tool.Read, ok(map[string]any{"ID": 7})).Tool, &tool.Contract{Output: shaped}),
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Failed,
			want: react.Layers{Call: react.CallValid, Execution: react.ExecResultInvalid}},
		{name: "unknown tool", why: "CATALOG_DENIED: name resolution",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			calls: []react.ToolCall{call("a", "nope", `{}`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallUnknownTool}},
		{name: "no tool name", why: "TOOL_CALL_INVALID without a name: name resolution",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			calls: []react.ToolCall{call("a", "", `{}`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallUnknownTool}},
		{name: "no call id", why: "TOOL_CALL_INVALID without an id: call-id pairing",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			calls: []react.ToolCall{call("", "t", `{}`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallUnpaired}},
		{name: "arguments not JSON", why: "ARG_JSON_INVALID: argument structure",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			calls: []react.ToolCall{call("a", "t", `{"name":`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallInvalidArgs}},
		{name: "argument missing", why: "ARG_REJECTED by the schema: argument structure",
			tool:  withSchema(newFake("t", tool.Read, ok(1)).Tool, needsName),
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallInvalidArgs}},
		{name: "built-in arguments not JSON", why: "the default invoker: ARG_JSON_INVALID",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			calls: []react.ToolCall{call("a", react.ToolFail, `nope`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallInvalidArgs}},
		{name: "write without approval", why: "DEFERRED: admitted later",
			tool:  newFake("t", tool.Write, ok(1)).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`)}, result: outcome.Deferred,
			want: react.Layers{Call: react.CallDeferred}},
		{name: "fingerprint trip", why: "a rule refused a well-formed call",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			calls: []react.ToolCall{call("a", "t", `{}`), call("b", "t", `{}`), call("c", "t", `{}`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallRefused}},
		{name: "finish refused", why: "a built-in tool's refusal",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			node:  react.Node{Outputs: []react.Output{{Key: "k", Required: true}}},
			calls: []react.ToolCall{call("a", react.ToolFinish, `{}`)}, result: outcome.Rejected,
			want: react.Layers{Call: react.CallRefused}},
		{name: "built-in accepted", why: "a control tool executes nothing",
			tool:  newFake("t", tool.Read, ok(1)).Tool,
			calls: []react.ToolCall{call("a", react.ToolFail, `{"reason":"x"}`)}, result: outcome.Success,
			want: react.Layers{Call: react.CallValid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var turns []any
			for _, c := range tt.calls {
				turns = append(turns, turn(c))
			}
			ends := tt.calls[len(tt.calls)-1].Name == react.ToolFail && tt.result == outcome.Success
			if !ends {
				turns = append(turns, turn(call("z", react.ToolFail, `{"reason":"end"}`)))
			}
			e := newEnv(t, newScript(turns...), tt.tool)
			node := tt.node
			node.Tools, node.NoProgressLimit = []string{tt.tool.Name}, 10
			res := e.run(node, "hi")
			require.Equal(t, react.Failed, res.Status)
			want := len(tt.calls)
			if !ends {
				want++
			}
			require.Len(t, res.Calls, want, "every processed call has a report")
			got := res.Calls[len(tt.calls)-1]
			assert.Equal(t, tt.result, got.Outcome, "%s: verdict", tt.why)
			if tt.want.Execution.Executed() {
				n, first, final := once(got.Outcome, got.Code, tt.want.Execution)
				tt.want.Attempts, tt.want.First, tt.want.Final = n, first, final
			}
			assert.Equal(t, tt.want, got.Layers, "%s: %s", tt.name, tt.why)
			assert.Equal(t, tt.want.Execution.Executed(), got.Fingerprint != "", "an executed call carries its fingerprint")
		})
	}
}

func withContract(t *tool.Tool, c *tool.Contract) *tool.Tool   { t.Contract = c; return t }
func withSchema(t *tool.Tool, s *jsonschema.Schema) *tool.Tool { t.InputSchema = s; return t }

// Seed 003: "后续重试成功时，也不要覆盖第一次失败". A call that failed once and
// recovered on retry reports both attempts — in the event, the log line
// and the run's result — after the run's evidence was forgotten.
func TestLayers_RetryKeepsFirstFailure(t *testing.T) {
	var n int
	flaky := newFake("quote", tool.Read, func(context.Context, tool.Request) (any, error) {
		n++
		if n == 1 {
			return nil, tool.Unavailable("backend restarting")
		}
		return map[string]any{"price": 12}, nil
	})
	flaky.Retry = &tool.RetryPolicy{Attempts: 3}
	m := newScript(turn(call("q", "quote", `{}`)), turn(finish("f")))
	e := newEnv(t, m, flaky.Tool)
	e.guards.Retry.Sleep = noSleep
	var events toolEvents
	e.cfg.Observer = react.Observers(&events, react.NewLogObserver(discardLogger()))
	loop := e.again(m)
	res, err := loop.Run(context.Background(), react.Node{Tools: []string{"quote"}}, "price?")
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)

	want := react.Layers{
		Call: react.CallValid, Execution: react.ExecOK, Business: react.BusinessEvidence, Attempts: 2,
		First: attempt(outcome.Failed, errcode.ToolUnavailable, react.ExecTemporarilyUnavailable),
		Final: attempt(outcome.Success, 0, react.ExecOK),
	}
	got := reportOf(t, res, "q")
	assert.Equal(t, want, got.Layers, "the run's result keeps the first failure and the recovery")
	assert.True(t, got.Recovered())
	assert.Equal(t, 2, flaky.executions())
	require.Len(t, events.invoked, 2)
	assert.Equal(t, want, events.invoked[0].Layers, "the observer sees both attempts")

	records, err := e.guards.Ledger.Records(context.Background(), res.Run)
	require.NoError(t, err)
	assert.Empty(t, records, "the ledger forgot the run (KeepRunState is off): only the result keeps the first failure")

	lines := logLines(t, newScript(turn(call("q", "quote", `{}`)), turn(finish("f"))), react.Node{Tools: []string{"quote"}}, retried(t).Tool)
	assert.Contains(t, lines[1], `msg="TOOL invoked" outcome=SUCCESS tool=quote duration=1ms call_id=q call_status=valid exec_status=ok business_status=evidence attempts=2 first_outcome=FAILED first_code=TOOL_UNAVAILABLE schema=`,
		"the log line shows the first attempt")
}

// retried returns a tool that fails once, then succeeds, with a retry
// policy without delay.
func retried(t *testing.T) *fake {
	t.Helper()
	var n int
	f := newFake("quote", tool.Read, func(context.Context, tool.Request) (any, error) {
		n++
		if n == 1 {
			return nil, tool.Unavailable("backend restarting")
		}
		return map[string]any{"price": 12}, nil
	})
	f.Retry = &tool.RetryPolicy{Attempts: 2}
	return f
}

// Repeats are judged by result and state, not by arguments alone: the same
// read that gives another result is new evidence (a balance that changed);
// the same result again is a repeat, across a suspension too (the digests
// are rebuilt from the snapshot's reports).
func TestLayers_RepeatJudgedByResult(t *testing.T) {
	balance := map[string]int{"A": 500, "B": 7}
	read := newFake("balance", tool.Read, func(_ context.Context, req tool.Request) (any, error) {
		var in struct{ Acct string }
		_ = json.Unmarshal(req.Args, &in)
		return map[string]any{"balance": balance[in.Acct]}, nil
	})
	m := newScript(
		turn(call("a", "balance", `{"acct":"A"}`)),
		func(react.Request) react.Response {
			balance["A"] = 600
			return turn(call("b", "balance", `{"acct":"A"}`))
		},
		turn(call("c", "balance", `{"acct":"B"}`)),
		turn(call("q", react.ToolFollowUp, `{"question":"Which account next?"}`)),
	)
	e := newEnv(t, m, read.Tool)
	res := e.run(react.Node{Tools: []string{"balance"}}, "balance of A and B")
	require.Equal(t, react.Suspended, res.Status)
	m2 := newScript(turn(call("d", "balance", `{"acct":"B"}`)), turn(finish("f")))
	res, err := e.again(m2).Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "B again"))
	require.NoError(t, err)
	got := map[string]react.BusinessStatus{}
	for _, c := range res.Calls {
		if c.Tool == "balance" {
			got[c.CallID] = c.Business
			assert.NotEmpty(t, c.ResultDigest, "%s carries its result's digest", c.CallID)
		}
	}
	assert.Equal(t, map[string]react.BusinessStatus{
		"a": react.BusinessEvidence, "b": react.BusinessEvidence, "c": react.BusinessEvidence, "d": react.BusinessRepeated,
	}, got, "A: 500, then 600 (new); B: 7, after resuming 7 again (a repeat)")
	assert.Equal(t, reportOf(t, res, "c").ResultDigest, reportOf(t, res, "d").ResultDigest)
	assert.NotEqual(t, reportOf(t, res, "a").ResultDigest, reportOf(t, res, "b").ResultDigest)
}

// The same call twice produces no new evidence the second time; other
// arguments do; a reused write is no new evidence either and did not run.
func TestLayers_EvidenceRepeatAndReuse(t *testing.T) {
	list := newFake("list", tool.Read, ok(map[string]any{"ids": []int{1, 2}}))
	create := newFake("create", tool.Write, ok(map[string]any{"id": 9}))
	m := newScript(
		turn(call("a", "list", `{"q":"x"}`)),
		turn(call("b", "list", `{ "q" : "x" }`)),
		turn(call("c", "list", `{"q":"y"}`)),
		turn(call("w1", "create", `{"n":1}`)),
		turn(call("ap", react.ToolApproval, `{"tool":"create"}`)),
	)
	e := newEnv(t, m, list.Tool, create.Tool)
	node := react.Node{Tools: []string{"list", "create"}}
	res := e.run(node, "go")
	require.Equal(t, react.Suspended, res.Status)
	m2 := newScript(turn(call("w2", "create", `{"n":1}`)), turn(call("w3", "create", `{"n":1}`)), turn(call("c2", "list", `{"q":"y"}`)), turn(finish("f")))
	res, err := e.again(m2).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)

	business := map[string]react.BusinessStatus{}
	execution := map[string]react.ExecStatus{}
	for _, c := range res.Calls {
		business[c.CallID], execution[c.CallID] = c.Business, c.Execution
	}
	assert.Equal(t, map[string]react.BusinessStatus{
		"a": react.BusinessEvidence, "b": react.BusinessRepeated, "c": react.BusinessEvidence,
		"w1": react.BusinessNone, "ap": react.BusinessNone, "w2": react.BusinessEvidence, "w3": react.BusinessRepeated,
		"c2": react.BusinessEvidence, "f": react.BusinessNone,
	}, business, "the calls before the suspension are in the result; after the write w2 ran, the same read is new evidence again (c2)")
	assert.Equal(t, react.ExecReused, execution["w3"], "the second approved write was answered from the write ledger")
	assert.Equal(t, 0, reportOf(t, res, "w3").Attempts)
	assert.Equal(t, 1, create.executions(), "the write ran once")
	assert.Equal(t, react.ExecOK, execution["w2"])
}

// A handler without the evidence guard notes no attempts: an executed
// verdict still counts as one attempt.
func TestLayers_CustomHandler(t *testing.T) {
	h := func(_ context.Context, c invoker.Call) (observation.Observation, error) {
		if c.Name == "bad" {
			return observation.Failed(errcode.ToolTimeout, "slow", "wait"), nil
		}
		return observation.Success("ok", map[string]int{"n": 1}), nil
	}
	m := newScript(turn(call("a", "good", `{}`)), turn(call("b", "bad", `{}`)), turn(finish("f")))
	e := newEnv(t, m, newFake("good", tool.Read, ok(1)).Tool, newFake("bad", tool.Read, ok(1)).Tool)
	e.cfg.Handler = h
	res, err := e.again(m).Run(context.Background(), react.Node{Tools: []string{"good", "bad"}}, "go")
	require.NoError(t, err)
	a, b := reportOf(t, res, "a"), reportOf(t, res, "b")
	assert.Equal(t, react.Layers{Call: react.CallValid, Execution: react.ExecOK, Business: react.BusinessEvidence, Attempts: 1,
		First: attempt(outcome.Success, 0, react.ExecOK), Final: attempt(outcome.Success, 0, react.ExecOK)}, a.Layers)
	assert.Equal(t, react.ExecTimeout, b.Execution)
	assert.Equal(t, 1, b.Attempts)
}

// Parallel reads are judged like sequential ones, in call order.
func TestLayers_ParallelReads(t *testing.T) {
	a := newFake("a", tool.Read, ok(map[string]int{"a": 1}))
	b := newFake("b", tool.Read, ok([]int{}))
	m := newScript(turn(call("1", "a", `{}`), call("2", "b", `{}`), call("3", "a", `{}`)), turn(finish("f")))
	e := newEnv(t, m, a.Tool, b.Tool)
	res := e.run(react.Node{Tools: []string{"a", "b"}, ParallelReads: true}, "go")
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, react.BusinessEvidence, reportOf(t, res, "1").Business)
	assert.Equal(t, react.BusinessInsufficient, reportOf(t, res, "2").Business)
	assert.Equal(t, react.ExecEmpty, reportOf(t, res, "2").Execution)
	assert.Equal(t, react.BusinessRepeated, reportOf(t, res, "3").Business)
}

// The goal of a run is judged from its completion conditions, never from
// the model saying it is done.
func TestGoal(t *testing.T) {
	list := newFake("list", tool.Read, ok(map[string]any{"id": "s-1"}))
	list2 := newFake("list2", tool.Read, ok(map[string]any{"id": "s-1", "parent": "s-0"}))
	required := []react.Output{{Key: "id", Required: true, Field: "id", Accepts: []react.SourceType{react.SourceToolResult, react.SourceModel}}}
	anywhere := []react.Output{{Key: "id", Required: true}}
	fromTool := []react.Output{{Key: "id", Required: true, Tool: "list2", Field: "id"}}
	setFrom := func(ref, value string) react.Response {
		return turn(call("o", react.ToolOutputSet, `{"key":"id","value":"`+value+`","sourceType":"tool_result","sourceRef":"`+ref+`"}`))
	}
	tests := []struct {
		name string
		why  string
		node react.Node
		turn []react.Response
		want react.GoalStatus
	}{
		{"finished without a condition", "no required output: the model's word only",
			react.Node{Tools: []string{"list"}}, []react.Response{turn(finish("f"))}, react.GoalUnverified},
		{"finished with checked outputs", "every required output comes from a checked source",
			react.Node{Tools: []string{"list"}, Outputs: required},
			[]react.Response{turn(call("l", "list", `{}`)), turn(call("o", react.ToolOutputSet, `{"key":"id","value":"s-1","sourceType":"tool_result","sourceRef":"l"}`)), turn(finish("f"))},
			react.GoalMet},
		{"a value of the result, no declared field", "the value matched some field of the result, not a declared one: a copied wrong field would pass too",
			react.Node{Tools: []string{"list2"}, Outputs: anywhere},
			[]react.Response{turn(call("l", "list2", `{}`)), setFrom("l", "s-0"), turn(finish("f"))},
			react.GoalUnverified},
		{"the declared field of the declared tool", "checked against list2's id",
			react.Node{Tools: []string{"list", "list2"}, Outputs: fromTool},
			[]react.Response{turn(call("l", "list2", `{}`)), setFrom("l", "s-1"), turn(finish("f"))},
			react.GoalMet},
		{"a copied wrong field", "s-0 is list2's parent, not its id: OUTPUT_VALUE_MISMATCH, the run cannot finish",
			react.Node{Tools: []string{"list2"}, Outputs: fromTool, NoProgressLimit: 1},
			[]react.Response{turn(call("l", "list2", `{}`)), setFrom("l", "s-0"), turn(finish("f"))},
			react.GoalUnmet},
		{"the declared field of another tool", "list's id is s-1 too, but the output must come from list2",
			react.Node{Tools: []string{"list", "list2"}, Outputs: fromTool, NoProgressLimit: 1},
			[]react.Response{turn(call("l", "list", `{}`)), setFrom("l", "s-1"), turn(finish("f"))},
			react.GoalUnmet},
		{"finished with the model's own value", "source model is not checked",
			react.Node{Tools: []string{"list"}, Outputs: required},
			[]react.Response{turn(call("o", react.ToolOutputSet, `{"key":"id","value":"s-9","sourceType":"model"}`)), turn(finish("f"))},
			react.GoalUnverified},
		{"failed", "the model gave up",
			react.Node{Tools: []string{"list"}}, []react.Response{turn(call("x", react.ToolFail, `{"reason":"no"}`))}, react.GoalUnmet},
		{"suspended", "not ended",
			react.Node{Tools: []string{"list"}}, []react.Response{turn(call("q", react.ToolFollowUp, `{"question":"Which one?"}`))}, react.GoalNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var turns []any
			for _, r := range tt.turn {
				turns = append(turns, r)
			}
			e := newEnv(t, newScript(turns...), list.Tool, list2.Tool)
			var events toolEvents
			e.cfg.Observer = &events
			res, err := e.again(e.model).Run(context.Background(), tt.node, "the id please")
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Goal, tt.why)
			if tt.want != react.GoalNone {
				require.Len(t, events.ends, 1)
				assert.Equal(t, tt.want, events.ends[0].Goal, "the end event carries the goal")
			}
		})
	}
}

// Tool events carry the call-layer detail seed 003 asks to monitor: the
// call's position in its turn, the tools the model saw, the schema version.
func TestToolEvent_CallLayerDetail(t *testing.T) {
	list, broken, create := sitesTools()
	m := newScript(turn(call("a", "list_sites", `{}`), call("b", "get_stats", `{}`), call("c", "list_sites", `{"p":2}`)), turn(finish("f")))
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
	var events toolEvents
	e.cfg.Observer = &events
	_, err := e.again(m).Run(context.Background(), sitesNode(), "hi")
	require.NoError(t, err)
	require.Len(t, events.invoked, 3)
	require.Len(t, events.skipped, 1)
	assert.Equal(t, []int{0, 1, 0}, []int{events.invoked[0].Position, events.invoked[1].Position, events.invoked[2].Position})
	assert.Equal(t, 2, events.skipped[0].Position)
	assert.Equal(t, []string{"list_sites", "get_stats", "create_site", react.ToolApproval, react.ToolFollowUp, react.ToolFinish, react.ToolFail}, events.invoked[0].Offered)
	v := events.invoked[0].SchemaVersion
	assert.Len(t, v, 12)
	assert.Equal(t, v, events.invoked[1].SchemaVersion, "the same schema has the same version")
	assert.Empty(t, events.invoked[2].SchemaVersion, "built-in tools have none")
	assert.Equal(t, react.Layers{}, events.skipped[0].Layers, "a skipped call is not judged")
}

// The JSON form of a report is stable: names, not numbers; no attempts for
// a call that did not run.
func TestCallReport_JSON(t *testing.T) {
	r := react.CallReport{CallID: "a", Tool: "t", Round: 2, Outcome: outcome.Success, Fingerprint: "fp",
		Layers: react.Layers{Call: react.CallValid, Execution: react.ExecOK, Business: react.BusinessEvidence, Attempts: 2,
			First: attempt(outcome.Failed, errcode.ToolRateLimited, react.ExecTemporarilyUnavailable), Final: attempt(outcome.Success, 0, react.ExecOK)}}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"call_id":"a","tool":"t","round":2,"outcome":"SUCCESS","fingerprint":"fp","call":"valid","execution":"ok","business":"evidence",
		"attempts":2,"first":{"outcome":"FAILED","code":"TOOL_RATE_LIMITED","status":"temporarily_unavailable"},"final":{"outcome":"SUCCESS","status":"ok"}}`, string(b))
	var back react.CallReport
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, r, back)

	b, err = json.Marshal(react.CallReport{CallID: "b", Tool: "w", Outcome: outcome.Deferred, Code: errcode.ApprovalRequired, Layers: react.Layers{Call: react.CallDeferred}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"call_id":"b","tool":"w","round":0,"outcome":"DEFERRED","code":"APPROVAL_REQUIRED","call":"deferred","execution":"none","business":"none"}`, string(b))
}

// Every value of the four status enums has a name that round-trips; an
// unknown name or value is refused.
func TestStatusEnums(t *testing.T) {
	type enum interface {
		String() string
		MarshalText() ([]byte, error)
	}
	check := func(t *testing.T, values []enum, parse func([]byte) (enum, error), bad enum) {
		t.Helper()
		seen := map[string]bool{}
		for _, v := range values {
			b, err := v.MarshalText()
			require.NoError(t, err, "%v", v)
			assert.False(t, seen[string(b)], "name %s is unique", b)
			seen[string(b)] = true
			back, err := parse(b)
			require.NoError(t, err)
			assert.Equal(t, v, back, "round trip of %s", b)
		}
		_, err := parse([]byte("nonsense"))
		assert.Error(t, err, "an unknown name is refused")
		_, err = bad.MarshalText()
		assert.Error(t, err, "an undefined value is refused")
		assert.Contains(t, bad.String(), "(", "an undefined value prints its number")
	}
	var cs []enum
	for v := react.CallNone; v <= react.CallDeferred; v++ {
		cs = append(cs, v)
	}
	check(t, cs, func(b []byte) (enum, error) { var v react.CallStatus; err := v.UnmarshalText(b); return v, err }, react.CallStatus(99))
	var es []enum
	for v := react.ExecNone; v <= react.ExecTooLarge; v++ {
		es = append(es, v)
	}
	check(t, es, func(b []byte) (enum, error) { var v react.ExecStatus; err := v.UnmarshalText(b); return v, err }, react.ExecStatus(99))
	var bs []enum
	for v := react.BusinessNone; v <= react.BusinessRejected; v++ {
		bs = append(bs, v)
	}
	check(t, bs, func(b []byte) (enum, error) { var v react.BusinessStatus; err := v.UnmarshalText(b); return v, err }, react.BusinessStatus(99))
	var gs []enum
	for v := react.GoalNone; v <= react.GoalUnmet; v++ {
		gs = append(gs, v)
	}
	check(t, gs, func(b []byte) (enum, error) { var v react.GoalStatus; err := v.UnmarshalText(b); return v, err }, react.GoalStatus(99))

	// The execution status of every failure code follows its class.
	for _, c := range errcode.All() {
		s := react.ExecStatusOf(c)
		assert.True(t, s.IsValid() && s != react.ExecNone && s != react.ExecReused, "%v maps to %v", c, s)
	}
	assert.Equal(t, react.ExecOK, react.ExecStatusOf(errcode.ToolBusinessFailed), "a business refusal is a correct execution")
	assert.Equal(t, react.ExecEmpty, react.ExecStatusOf(errcode.ToolResultEmpty))
	assert.True(t, react.ExecEmpty.Succeeded() && react.ExecOK.Succeeded() && !react.ExecReused.Succeeded() && !react.ExecTimeout.Succeeded())
	assert.True(t, react.ExecTimeout.Executed() && !react.ExecReused.Executed() && !react.ExecNone.Executed())
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Observe implements react.Observer through dispatch.
func (x *toolEvents) Observe(ctx context.Context, e react.Event) context.Context {
	return dispatch(ctx, e, x)
}
