package react_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// TestMetrics_RunFigures: the business layer's per-run figures as the three
// layers of success define them (docs/evaluation.md), each expectation
// computed by hand from the six runs below, never from a golden file.
//
//	run  what happens                                               ends       goal   suspensions
//	r1   approval, approval again (2nd write), output from the       finished   met    2 approval
//	     declared field, finish
//	r2   follow-up, never answered (abandoned)                       —          —      1 follow-up
//	r3   the model fails with an error (interrupted)                 —          —      0
//	r4   builtin_node_fail                                           failed     unmet  0
//	r5   finish without outputs                                      finished   unver. 0
//	r6   follow-up answered, then approval granted, then the model   failed     unmet  1 follow-up, 1 approval
//	     gives up
//
// Runs started: 6. Met: r1 → sub-goals 1/6 (the earlier definition, met
// over runs ended, gave 1/4: r2 and r3 vanished). Runs with at least one
// suspension: r1, r2, r6 → takeover 3/6; with an approval: r1, r6 → 2/6;
// with a follow-up: r2, r6 → 2/6. Suspensions: 3 approvals (r1 twice, r6),
// 2 follow-ups (r2, r6): as shares of runs started they would read 3/6 and
// 2/6 by luck here, and 2/1 for r1 alone (checked below).
func TestMetrics_RunFigures(t *testing.T) {
	ctx := context.Background()
	read := newFake("balance", tool.Read, ok(map[string]any{"balance": 120, "limit": 500}))
	write := newFake("transfer", tool.Write, ok(map[string]any{"id": "T-1"}))
	cat, err := tool.NewCatalog(read.Tool, write.Tool)
	require.NoError(t, err)
	var m react.Metrics
	guards := memoryStores()
	ids := []string{"r1", "r2", "r3", "r4", "r5", "r6"}
	next := 0
	loop := func(model react.Model) *react.Loop {
		l, err := react.New(react.Config{Model: model, Tools: cat, Observer: &m, Guards: guards,
			NewRunID: func(context.Context) string { id := ids[next]; next++; return id }})
		require.NoError(t, err)
		return l
	}
	l1 := loop(newScript(
		turn(call("b", "balance", `{}`)),
		turn(call("w", "transfer", `{"n":1}`)),
		turn(call("a", react.ToolApproval, `{"tool":"transfer"}`)),
	))
	node := react.Node{Name: "n", Tools: []string{"balance", "transfer"},
		Outputs: []react.Output{{Key: "balance", Required: true, Tool: "balance", Field: "balance"}}}
	res, err := l1.Run(ctx, node, "move money")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	l1b := loop(newScript(
		turn(call("w2", "transfer", `{"n":1}`)),
		turn(call("w3", "transfer", `{"n":2}`)),
		turn(call("a2", react.ToolApproval, `{"tool":"transfer"}`)),
	))
	res, err = l1b.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	res, err = loop(newScript(
		turn(call("w4", "transfer", `{"n":2}`)),
		turn(call("o", react.ToolOutputSet, `{"key":"balance","value":120,"sourceType":"tool_result","sourceRef":"b"}`)),
		turn(finish("f")),
	)).Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	require.Equal(t, react.GoalMet, res.Goal)

	res, err = loop(newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which account?"}`)))).Run(ctx, node, "r2")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status) // r2: abandoned

	res, err = loop(newScript(errors.New("model down"))).Run(ctx, node, "r3")
	require.Error(t, err)
	require.Equal(t, react.Interrupted, res.Status)

	res, err = loop(newScript(turn(call("x", react.ToolFail, `{"reason":"no"}`)))).Run(ctx, node, "r4")
	require.NoError(t, err)
	require.Equal(t, react.Failed, res.Status)

	res, err = loop(newScript(turn(finish("f")))).Run(ctx, react.Node{Name: "n"}, "r5")
	require.NoError(t, err)
	require.Equal(t, react.GoalUnverified, res.Goal)

	l6 := loop(newScript(turn(call("q", react.ToolFollowUp, `{"question":"How much?"}`))))
	res, err = l6.Run(ctx, node, "r6")
	require.NoError(t, err)
	res, err = loop(newScript(turn(call("w", "transfer", `{"n":5}`)), turn(call("a", react.ToolApproval, `{"tool":"transfer"}`)))).
		Resume(ctx, res.Snapshot, react.Answer(res.Suspension.Ticket, "5"))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	res, err = loop(newScript(turn(call("x", react.ToolFail, `{"reason":"changed my mind"}`)))).Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Failed, res.Status)

	b := m.Snapshot().Business
	figures := []struct {
		name string
		got  react.Rate
		want react.Rate
	}{
		{"sub-goals met / runs started", b.SubGoals(), react.Rate{Num: 1, Den: 6}},
		{"runs with a suspension / runs started", b.Takeover(), react.Rate{Num: 3, Den: 6}},
		{"runs with an approval suspension / runs started", b.ApprovalTakeover(), react.Rate{Num: 2, Den: 6}},
		{"runs with a follow-up suspension / runs started", b.FollowUpTakeover(), react.Rate{Num: 2, Den: 6}},
	}
	for _, f := range figures {
		assert.Equal(t, f.want, f.got, f.name)
	}
	assert.Equal(t, int64(6), b.NodesStarted)
	assert.Equal(t, int64(2), b.NodesFinished, "r1, r5")
	assert.Equal(t, int64(2), b.NodesFailed, "r4, r6")
	assert.Equal(t, int64(3), b.Approvals, "suspensions: r1 twice, r6 once")
	assert.Equal(t, int64(2), b.FollowUps, "suspensions: r2, r6")
	assert.Equal(t, map[react.GoalStatus]int64{react.GoalMet: 1, react.GoalUnverified: 1, react.GoalUnmet: 2}, b.Goals)

	// One run that suspends twice is one run taken over, not two.
	var one react.Metrics
	next = 0
	ids = []string{"only"}
	l, err := react.New(react.Config{Model: newScript(turn(call("q", react.ToolFollowUp, `{"question":"A?"}`))), Tools: cat,
		Observer: &one, Guards: memoryStores(), NewRunID: func(context.Context) string { return "only" }})
	require.NoError(t, err)
	res, err = l.Run(ctx, node, "x")
	require.NoError(t, err)
	l2, err := react.New(react.Config{Model: newScript(turn(call("q2", react.ToolFollowUp, `{"question":"B?"}`))), Tools: cat,
		Observer: &one, Guards: memoryStores()})
	require.NoError(t, err)
	res, err = l2.Resume(ctx, res.Snapshot, react.Answer(res.Suspension.Ticket, "a"))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	ob := one.Snapshot().Business
	assert.Equal(t, react.Rate{Num: 1, Den: 1}, ob.Takeover(), "2 suspensions, 1 run")
	assert.Equal(t, react.Rate{Num: 1, Den: 1}, ob.FollowUpTakeover())
	assert.Equal(t, int64(2), ob.FollowUps)
	assert.Equal(t, react.Rate{Num: 0, Den: 1}, ob.SubGoals(), "a run still suspended is not met, and stays counted")

	// A run resumed from another process (another Metrics) counts where it
	// started: here its suspension is an event, not a run taken over.
	var other react.Metrics
	l3, err := react.New(react.Config{Model: newScript(turn(call("q3", react.ToolFollowUp, `{"question":"C?"}`))), Tools: cat,
		Observer: &other, Guards: memoryStores()})
	require.NoError(t, err)
	res, err = l3.Resume(ctx, res.Snapshot, react.Answer(res.Suspension.Ticket, "b"))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	os := other.Snapshot().Business
	assert.Equal(t, int64(1), os.FollowUps)
	assert.Equal(t, react.Rate{Num: 0, Den: 0}, os.Takeover())
}
