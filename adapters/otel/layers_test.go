package otel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// sum adds the data points of an int64 counter whose attributes satisfy
// keep (nil: all).
func sum(t *testing.T, m metricdata.Metrics, keep func(get func(attribute.Key) string) bool) int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is an int64 sum", m.Name)
	var n int64
	for _, dp := range s.DataPoints {
		get := func(k attribute.Key) string { v, _ := dp.Attributes.Value(k); return v.String() }
		if keep == nil || keep(get) {
			n += dp.Value
		}
	}
	return n
}

func in(v string, set ...string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// The per-layer figures of react.Metrics, computed from the counters as
// the package documentation says, equal react.Metrics' own on the same
// runs: every row of the documented table is checked.
func TestCountersGiveTheLayerFigures(t *testing.T) {
	tel := newTelemetry(t)
	var m react.Metrics
	obs := react.Observers(&m, tel.observer(t, nil))
	s := newSite(t)
	n := 0
	quote := reacttest.Respond("quote", func(context.Context, tool.Request) (any, error) {
		if n++; n == 1 {
			return nil, tool.RateLimited("429")
		}
		return map[string]float64{"price": 41.27}, nil
	})
	quote.Tool.Retry = &tool.RetryPolicy{Attempts: 3}
	for _, ft := range []*tool.Tool{quote.Tool, reacttest.Empty("search", tool.EmptyAllowed).Tool,
		reacttest.Fail("secret", tool.KindForbidden, "no").Tool} {
		require.NoError(t, s.catalog.Add(ft))
	}
	g := stores()
	g.Retry.Sleep = func(context.Context, time.Duration) error { return nil }
	node := siteNode()
	node.Tools = append(node.Tools, "quote", "search", "secret")
	ctx := context.Background()

	// An approval run, suspended and resumed.
	res, err := s.loop(t, openAI(
		reacttest.Calls(reacttest.Call("a1", "get_stats", `{}`), reacttest.Call("a2", "list_sites", `{}`)),
		reacttest.Calls(reacttest.Call("a3", "nope", `{}`)),
		reacttest.Calls(reacttest.Call("a4", "create_site", `{"name":"shop"}`)),
		reacttest.Calls(reacttest.Approval("a5", "create_site", "asked")),
	), obs, g).Run(ctx, node, "create a shop")
	require.NoError(t, err)
	_, err = s.loop(t, openAI(
		reacttest.Calls(reacttest.Call("a6", "create_site", `{"name":"shop"}`)),
		reacttest.Calls(reacttest.Finish("a7", "done")),
	), obs, g).Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	// Retried and empty reads, a repeated read, a forbidden call, a turn
	// without calls, a follow-up, and a failed node.
	res, err = s.loop(t, openAI(
		reacttest.Calls(reacttest.Call("b1", "quote", `{}`)),
		reacttest.Calls(reacttest.Call("b2", "search", `{}`), reacttest.Call("b3", "list_sites", `{}`)),
		reacttest.Calls(reacttest.Call("b4", "list_sites", `{"again":true}`)),
		reacttest.Calls(reacttest.Call("b5", "secret", `{}`)),
		reacttest.Text("hmm"),
		reacttest.Calls(reacttest.FollowUp("b6", "Which space?")),
	), obs, g).Run(ctx, node, "price of ACME?")
	require.NoError(t, err)
	_, err = s.loop(t, openAI(reacttest.Calls(reacttest.FailNode("b7", "cannot"))), obs, g).Resume(ctx, res.Snapshot, react.Answer(res.Suspension.Ticket, "blue"))
	require.NoError(t, err)
	m.RecordTask(true)
	m.RecordTask(false)
	o := tel.observer(t, nil)
	o.RecordTask(ctx, true)
	o.RecordTask(ctx, false)

	want := m.Snapshot()
	ms := tel.metrics(t)
	calls, attempts := ms[rgotel.MetricToolCalls], ms[rgotel.MetricToolAttempts]
	turns := ms[rgotel.MetricTurns]
	status := func(get func(attribute.Key) string) string { return get(rgotel.KeyStatusClass) }
	entered := func(get func(attribute.Key) string) bool { return !in(status(get), "none", "reused", "forbidden") }
	kept := func(get func(attribute.Key) string) bool { return entered(get) && in(status(get), "ok", "empty") }
	rate := func(num, den int64) react.Rate { return react.Rate{Num: num, Den: den} }

	assert.Equal(t, want.Call.Decision(), rate(sum(t, turns, func(get func(attribute.Key) string) bool { return get(rgotel.KeyTurnCalls) == "true" }), sum(t, turns, nil)), "Decision")
	assert.Equal(t, want.Call.Admission(), rate(sum(t, calls, func(get func(attribute.Key) string) bool { return get(rgotel.KeyCallStatus) == "valid" }), sum(t, calls, nil)), "Admission")
	for st, count := range want.Call.ByStatus {
		assert.Equal(t, count, sum(t, calls, func(get func(attribute.Key) string) bool { return get(rgotel.KeyCallStatus) == st.String() }), "calls by call status %s", st)
	}
	assert.Equal(t, want.Execution.Calls, sum(t, calls, entered), "calls that entered execution")
	assert.Equal(t, want.Execution.Success(), rate(sum(t, calls, kept), sum(t, attempts, entered)), "Success")
	assert.Equal(t, want.Execution.FirstAttempt(), rate(sum(t, calls, func(get func(attribute.Key) string) bool {
		return entered(get) && in(get(rgotel.KeyFirstStatus), "ok", "empty")
	}), sum(t, calls, entered)), "FirstAttempt")
	assert.Equal(t, want.Execution.Final(), rate(sum(t, calls, kept), sum(t, calls, entered)), "Final")
	for st, count := range want.Execution.FinalByStatus {
		assert.Equal(t, count, sum(t, calls, func(get func(attribute.Key) string) bool { return entered(get) && status(get) == st.String() }), "final status %s", st)
	}
	assert.Equal(t, want.Execution.Permission(), rate(sum(t, calls, func(get func(attribute.Key) string) bool { return status(get) == "forbidden" }),
		sum(t, calls, func(get func(attribute.Key) string) bool { return !in(status(get), "none", "reused") })), "Permission")
	assert.Equal(t, want.Business.NewEvidence(), rate(sum(t, calls, func(get func(attribute.Key) string) bool {
		return get(rgotel.KeyBusinessStatus) == "evidence"
	}), sum(t, calls, kept)), "NewEvidence")
	runs := ms[rgotel.MetricRuns]
	started := sum(t, runs, func(get func(attribute.Key) string) bool { return get(rgotel.KeyResumed) == "false" })
	assert.Equal(t, want.Business.SubGoals(), rate(sum(t, runs, func(get func(attribute.Key) string) bool { return get(rgotel.KeyGoal) == "met" }),
		sum(t, runs, func(get func(attribute.Key) string) bool {
			return in(get(rgotel.KeyGoal), "met", "unverified", "unmet")
		})), "SubGoals")
	susp := ms[rgotel.MetricSuspensions]
	assert.Equal(t, want.Business.ApprovalTakeover(), rate(sum(t, susp, func(get func(attribute.Key) string) bool { return get(rgotel.KeySuspension) == "approval" }), started), "ApprovalTakeover")
	assert.Equal(t, want.Business.FollowUpTakeover(), rate(sum(t, susp, func(get func(attribute.Key) string) bool { return get(rgotel.KeySuspension) == "follow_up" }), started), "FollowUpTakeover")
	tasks := ms[rgotel.MetricTasks]
	assert.Equal(t, want.Business.FinalTask(), rate(sum(t, tasks, func(get func(attribute.Key) string) bool { return get(rgotel.KeyTaskPassed) == "true" }), sum(t, tasks, nil)), "FinalTask")

	// The scenario exercised what it claims.
	assert.Positive(t, want.Execution.Retried)
	assert.Positive(t, want.Execution.Forbidden)
	assert.Positive(t, want.Business.ByStatus[react.BusinessRepeated]+want.Business.ByStatus[react.BusinessEvidence])
	assert.Positive(t, want.Call.Turns-want.Call.TurnsWithCalls)
	assert.Positive(t, want.Business.Approvals)
	assert.Positive(t, want.Business.FollowUps)
}
