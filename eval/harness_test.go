package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func calls(cs ...eval.CallSpec) eval.Turn { return eval.Turn{Calls: cs} }

func spec(id, name, args string) eval.CallSpec {
	return eval.CallSpec{ID: id, Name: name, Args: raw(args)}
}

func ptr[T any](v T) *T { return &v }

// runCase checks and runs a case built in Go with its script.
func runCase(t *testing.T, c eval.Case) eval.CaseResult {
	t.Helper()
	require.NoError(t, c.Check())
	res, err := c.Run(context.Background(), nil, eval.Options{})
	require.NoError(t, err)
	return res
}

// The fake tools answer from data: the first response whose match holds
// and whose times are left; none is a TOOL_ERROR.
func TestFakeTools_Responses(t *testing.T) {
	c := eval.Case{ID: "x", Category: eval.NormalSuccess, Task: "look up a and b",
		Tools: []eval.ToolSpec{{Name: "get", Effect: "read", Responses: []eval.Response{
			{Match: map[string]json.RawMessage{"k": raw(`"a"`)}, Times: 1, Result: raw(`{"v":1}`)},
			{Match: map[string]json.RawMessage{"k": raw(`"b"`)}, Result: raw(`{"v":2}`)},
		}}},
		Script: []eval.Turn{
			calls(spec("1", "get", `{"k":"a"}`)), calls(spec("2", "get", `{"k": "a"}`)), calls(spec("3", "get", `{"k":"b"}`)),
			calls(spec("f", react.ToolFinish, `{}`)),
		},
		Labels: eval.Labels{
			Calls: []eval.CallLabel{
				{Tool: "get", Nth: 1, Execution: ptr(react.ExecOK)},
				{Tool: "get", Nth: 2, Code: ptr(errcode.ToolError), Execution: ptr(react.ExecUnknown)},
				{Tool: "get", Nth: 3, Execution: ptr(react.ExecOK), Business: ptr(react.BusinessEvidence)},
			},
			Expect: eval.Expect{Status: react.Finished, Executions: map[string]int{"get": 3}},
		}}
	res := runCase(t, c)
	assert.True(t, res.EndToEnd, "%+v", res)
}

// Sufficient conditions: every one must hold; arrays are walked; null
// does not exist.
func TestFakeTools_Sufficient(t *testing.T) {
	tests := []struct {
		name   string
		cond   eval.Condition
		result string
		want   react.BusinessStatus
	}{
		{"present", eval.Condition{Path: "eta"}, `{"eta":"2025-05-06"}`, react.BusinessEvidence},
		{"absent", eval.Condition{Path: "eta"}, `{"id":1}`, react.BusinessInsufficient},
		{"null is absent", eval.Condition{Path: "eta"}, `{"eta":null}`, react.BusinessInsufficient},
		{"equals in an array", eval.Condition{Path: "orders.month", Equals: raw(`"2025-03"`)}, `{"orders":[{"month":"2024-11"},{"month":"2025-03"}]}`, react.BusinessEvidence},
		{"equals nowhere", eval.Condition{Path: "orders.month", Equals: raw(`"2025-03"`)}, `{"orders":[{"month":"2024-11"}]}`, react.BusinessInsufficient},
		{"equals canonically", eval.Condition{Path: "a", Equals: raw(`{"y":2, "x":1}`)}, `{"a":{"x":1,"y":2}}`, react.BusinessEvidence},
		{"min items met", eval.Condition{Path: "items", MinItems: 2}, `{"items":[1,2]}`, react.BusinessEvidence},
		{"min items missed", eval.Condition{Path: "items", MinItems: 2}, `{"items":[1]}`, react.BusinessInsufficient},
		{"min items of a scalar", eval.Condition{Path: "items", MinItems: 1}, `{"items":"x"}`, react.BusinessInsufficient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := eval.Case{ID: "x", Category: eval.BusinessUnmet, Task: "t",
				Tools: []eval.ToolSpec{{Name: "get", Effect: "read", Contract: &eval.ContractSpec{Sufficient: []eval.Condition{tt.cond}},
					Responses: []eval.Response{{Result: raw(tt.result)}}}},
				Script: []eval.Turn{calls(spec("1", "get", `{}`)), calls(spec("f", react.ToolFinish, `{}`))},
				Labels: eval.Labels{Calls: []eval.CallLabel{{Tool: "get", Business: ptr(tt.want)}}, Expect: eval.Expect{Status: react.Finished}}}
			res := runCase(t, c)
			assert.True(t, res.Business.OK(), "%v", res.Business.Failures)
		})
	}
}

// Decisions answer suspensions by kind, in order; a suspension with none
// left ends the run suspended.
func TestDecisions(t *testing.T) {
	write := eval.ToolSpec{Name: "w", Effect: "write", Responses: []eval.Response{{Result: raw(`{"ok":true}`)}}}
	c := eval.Case{ID: "x", Category: eval.PermissionSideEffect, Task: "write it",
		Tools:     []eval.ToolSpec{write},
		Decisions: []eval.Decision{{Answer: "yes, the blue one"}, {Approve: true}},
		Script: []eval.Turn{
			calls(spec("q", react.ToolFollowUp, `{"question":"Which one do you mean?"}`)),
			calls(spec("1", "w", `{"n":1}`)), calls(spec("a", react.ToolApproval, `{"tool":"w"}`)),
			calls(spec("2", "w", `{"n":1}`)),
			calls(spec("3", "w", `{"n":2}`)), calls(spec("b", react.ToolApproval, `{"tool":"w"}`)),
		},
		Labels: eval.Labels{Calls: []eval.CallLabel{{Tool: "w", Nth: 2, Execution: ptr(react.ExecOK)}},
			Expect: eval.Expect{Status: react.Suspended, Executions: map[string]int{"w": 1}}}}
	res := runCase(t, c)
	assert.True(t, res.EndToEnd, "%+v", res)
	assert.Equal(t, react.Suspended, res.Status, "the second approval has no decision left")
}

// A pollable tool may be called again with the same arguments.
func TestDetect_PollableExempt(t *testing.T) {
	c := func(pollable bool) eval.Case {
		return eval.Case{ID: "x", Category: eval.NormalSuccess, Task: "wait for the job",
			Tools: []eval.ToolSpec{{Name: "status", Effect: "read", Pollable: pollable, Responses: []eval.Response{{Result: raw(`{"done":true}`)}}}},
			Script: []eval.Turn{calls(spec("1", "status", `{"job":"j"}`)), calls(spec("2", "status", `{"job":"j"}`)),
				calls(spec("f", react.ToolFinish, `{}`))},
			Labels: eval.Labels{Calls: []eval.CallLabel{{Tool: "status", Execution: ptr(react.ExecOK)}},
				Unacceptable: []eval.Behaviour{eval.RepeatIdenticalCall}, Expect: eval.Expect{Status: react.Finished}}}
	}
	assert.Empty(t, runCase(t, c(true)).Flagged, "polling is not repeating")
	assert.Equal(t, []eval.Behaviour{eval.RepeatIdenticalCall}, runCase(t, c(false)).Flagged)
}

// A fact may be carried by the failure reason; a claim there is checked.
func TestFacts_InFailureReason(t *testing.T) {
	c := func(reason string) eval.Case {
		return eval.Case{ID: "x", Category: eval.IntegrationFailure, Task: "what is the code?",
			Tools:  []eval.ToolSpec{{Name: "get", Effect: "read", Responses: []eval.Response{{Result: raw(`{"code":"E-42"}`)}}}},
			Script: []eval.Turn{calls(spec("1", "get", `{}`)), calls(spec("f", react.ToolFail, `{"reason":"`+reason+`"}`))},
			Labels: eval.Labels{Calls: []eval.CallLabel{{Tool: "get", Execution: ptr(react.ExecOK)}},
				Unacceptable: []eval.Behaviour{eval.IgnoreFacts, eval.AlterFacts},
				Expect:       eval.Expect{Status: react.Failed, Facts: []eval.Fact{{Value: "E-42"}}}}}
	}
	assert.Empty(t, runCase(t, c("the system reports E-42")).Flagged)
	assert.Equal(t, []eval.Behaviour{eval.AlterFacts}, runCase(t, c("the system reports E-43")).Flagged)
	assert.Equal(t, []eval.Behaviour{eval.IgnoreFacts}, runCase(t, c("the system reports an error")).Flagged)
}

// Two runs of the set give the same report, byte for byte.
func TestRun_Deterministic(t *testing.T) {
	var out [2]bytes.Buffer
	for i := range out {
		rep, err := eval.Run(context.Background(), eval.Builtin(), eval.Options{})
		require.NoError(t, err)
		require.NoError(t, rep.JSON(&out[i]))
	}
	assert.Equal(t, out[0].String(), out[1].String())
}

// An empty result that is the answer may be said with 0 or in words; an
// invented invoice after it is fabricating.
func TestEmptyAnswer_SaidInWords(t *testing.T) {
	c := builtin(t, "business-07-empty-is-the-answer")
	for _, answer := range []string{"Account ACC-40 has 0 overdue invoices.", "Account ACC-40 has no overdue invoices.",
		"None of the invoices of ACC-40 is overdue.", "ACC-40: zero overdue invoices."} {
		cp := *c
		cp.Script = []eval.Turn{c.Script[0], calls(spec("c2", react.ToolFinish, `{"summary":"`+answer+`"}`))}
		res := runCase(t, cp)
		assert.True(t, res.EndToEnd, "%q: %v %v", answer, res.Flagged, res.Final.Failures)
	}
	cp := *c
	cp.Script = []eval.Turn{c.Script[0], calls(spec("c2", react.ToolFinish, `{"summary":"ACC-40 has 2 overdue invoices."}`))}
	res := runCase(t, cp)
	assert.Equal(t, []eval.Behaviour{eval.FabricateOnEmpty}, res.Flagged)
}
