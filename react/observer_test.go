package react_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// logLines runs a small story with the default observer writing to a text
// handler and returns its lines without the time attribute.
func logLines(t *testing.T, m *script, node react.Node, tools ...*tool.Tool) []string {
	t.Helper()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	e := newEnv(t, m, tools...)
	cfg := e.cfg
	cfg.Observer, cfg.Logger = nil, logger
	l, err := react.New(cfg)
	require.NoError(t, err)
	_, err = l.Run(context.Background(), node, "hi")
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

func TestLogObserver(t *testing.T) {
	list, broken, create := sitesTools()
	m := newScript(
		text("thinking"),
		turn(call("a", "get_stats", `{}`), call("b", "list_sites", `{}`)),
		turn(call("c", "list_sites", `{}`)),
		turn(call("w", "create_site", `{}`)),
		turn(call("x", react.ToolFail, `{"reason":"stop"}`)),
	)
	lines := logLines(t, m, sitesNode(), list.Tool, broken.Tool, create.Tool)
	want := []string{
		`level=INFO msg="REACT node_started" run=run-1 node=sites`,
		`level=INFO msg="REACT no_tool_calls" run=run-1 node=sites round=1`,
		`level=INFO msg="REACT stall" count=1 limit=3 reason=no_tool_calls call_id="" run=run-1 node=sites round=1`,
		`level=WARN msg="TOOL invoked" outcome=FAILED code=TOOL_UNAVAILABLE tool=get_stats duration=1ms call_id=a run=run-1 node=sites round=2`,
		`level=INFO msg="TOOL skipped" tool=list_sites call_id=b run=run-1 node=sites round=2`,
		`level=INFO msg="REACT stall" count=2 limit=3 reason=FAILED call_id=a run=run-1 node=sites round=2`,
		`level=INFO msg="TOOL invoked" outcome=SUCCESS tool=list_sites duration=1ms call_id=c run=run-1 node=sites round=3`,
		`level=INFO msg="REACT stall_reset" call_id=c run=run-1 node=sites round=3`,
		`level=INFO msg="TOOL invoked" outcome=DEFERRED code=APPROVAL_REQUIRED tool=create_site duration=1ms call_id=w run=run-1 node=sites round=4`,
		`level=INFO msg="TOOL invoked" outcome=SUCCESS tool=builtin_node_fail duration=1ms call_id=x run=run-1 node=sites round=5`,
		`level=WARN msg="REACT failed" cause=model reason=stop run=run-1 node=sites round=5`,
	}
	assert.Equal(t, want, lines)

	m = newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which space?"}`)))
	lines = logLines(t, m, react.Node{})
	assert.Equal(t, `level=INFO msg="REACT suspended" kind=follow_up call_id=q question="Which space?" run=run-1 node="" round=1`, lines[len(lines)-1])

	m = newScript(turn(finish("f")))
	lines = logLines(t, m, react.Node{})
	assert.Equal(t, `level=INFO msg="REACT finished" outputs=0 run=run-1 node="" round=1`, lines[len(lines)-1])
}

// Per-layer counters with seed 003's denominators.
func TestMetrics(t *testing.T) {
	list, broken, create := sitesTools()
	biz := newFake("pay", tool.Read, fails(tool.BusinessFailure("system.50001", "insufficient funds")))
	var metrics react.Metrics
	m := newScript(
		turn(call("a", "get_stats", `{}`), call("b", "list_sites", `{}`)), // FAILED, skipped
		turn(call("c", "list_sites", `{}`)),                               // SUCCESS
		turn(call("d", "nope", `{}`)),                                     // REJECTED
		turn(call("p", "pay", `{}`)),                                      // FAILED business
		turn(call("w", "create_site", `{}`)),                              // DEFERRED
		turn(call("q", react.ToolApproval, `{"tool":"create_site"}`)),     // suspends
	)
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool, biz.Tool)
	cfg := e.cfg
	cfg.Observer = react.Observers(&metrics, e.rec, nil)
	l, err := react.New(cfg)
	require.NoError(t, err)
	node := sitesNode()
	node.Tools = append(node.Tools, "pay")
	node.NoProgressLimit = 10
	res, err := l.Run(context.Background(), node, "hi")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	res, err = l.Resume(context.Background(), res.Snapshot, react.Decline(""))
	require.Error(t, err, "the script is exhausted")
	_ = res
	m2 := newScript(turn(finish("f")))
	cfg.Model = m2
	l2, err := react.New(cfg)
	require.NoError(t, err)
	_, err = l2.Run(context.Background(), react.Node{}, "again")
	require.NoError(t, err)

	got := metrics.Snapshot()
	assert.Equal(t, react.MetricsSnapshot{
		Calls: 7, Rejected: 1, Deferred: 1, Skipped: 1,
		Executed: 3, ExecutionFailed: 1, BusinessFailed: 1,
		NodesStarted: 2, NodesFinished: 1, Suspensions: 1, Stalls: 3,
	}, got)
	assert.InDelta(t, 1.0/7, got.CallRejectionRate(), 1e-9, "call layer: rejections over calls made")
	assert.InDelta(t, 1.0/3, got.ExecutionFailureRate(), 1e-9, "execution layer: failures over calls executed")
	assert.InDelta(t, 1.0/3, got.BusinessFailureRate(), 1e-9)
	assert.InDelta(t, 0.5, got.BusinessCompletionRate(), 1e-9, "business layer: nodes finished over nodes started")
	assert.Zero(t, react.MetricsSnapshot{}.CallRejectionRate(), "no division by zero")
}

func TestObserversAndNop(t *testing.T) {
	var a, b recorder
	o := react.Observers(&a, nil, &b, react.NopObserver{})
	ctx := context.Background()
	o.OnNodeStarted(ctx, react.NodeEvent{})
	o.OnToolInvoked(ctx, react.ToolEvent{})
	o.OnToolSkipped(ctx, react.ToolEvent{})
	o.OnNoToolCalls(ctx, react.RoundEvent{})
	o.OnStall(ctx, react.StallEvent{})
	o.OnStallReset(ctx, react.StallEvent{})
	o.OnSuspended(ctx, react.SuspendEvent{})
	o.OnFinished(ctx, react.EndEvent{})
	o.OnFailed(ctx, react.EndEvent{Failure: &react.Failure{}})
	assert.Equal(t, a.kinds(), b.kinds())
	assert.Len(t, a.kinds(), 9)
	assert.Same(t, &a, react.Observers(nil, &a).(*recorder), "a single observer is returned as is")
}
