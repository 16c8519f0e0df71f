package react_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
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
	e.guards.Now = func() time.Time { return stepNow } // the records' fetch time
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
		`level=WARN msg="TOOL invoked" outcome=FAILED code=TOOL_UNAVAILABLE tool=get_stats duration=1ms call_id=a call_status=valid exec_status=temporarily_unavailable business_status=none schema=a2c799262a3c fetched_at=2025-06-01T12:00:00Z error="unavailable: stats backend down" run=run-1 node=sites round=2`,
		`level=INFO msg="TOOL skipped" tool=list_sites call_id=b run=run-1 node=sites round=2`,
		`level=INFO msg="REACT stall" count=2 limit=3 reason=FAILED call_id=a run=run-1 node=sites round=2`,
		`level=INFO msg="TOOL invoked" outcome=SUCCESS tool=list_sites duration=1ms call_id=c call_status=valid exec_status=ok business_status=evidence schema=a2c799262a3c fetched_at=2025-06-01T12:00:00Z run=run-1 node=sites round=3`,
		`level=INFO msg="REACT stall_reset" call_id=c run=run-1 node=sites round=3`,
		`level=INFO msg="TOOL invoked" outcome=DEFERRED code=APPROVAL_REQUIRED tool=create_site duration=1ms call_id=w call_status=deferred exec_status=none business_status=none schema=a2c799262a3c run=run-1 node=sites round=4`,
		`level=INFO msg="TOOL invoked" outcome=SUCCESS tool=builtin_node_fail duration=1ms call_id=x call_status=valid exec_status=none business_status=none run=run-1 node=sites round=5`,
		`level=WARN msg="REACT failed" cause=model reason=stop goal=unmet run=run-1 node=sites round=5`,
	}
	assert.Equal(t, want, lines)

	m = newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which space?"}`)))
	lines = logLines(t, m, react.Node{})
	assert.Equal(t, `level=INFO msg="REACT suspended" kind=follow_up call_id=q question="Which space?" run=run-1 node="" round=1`, lines[len(lines)-1])

	m = newScript(turn(finish("f")))
	lines = logLines(t, m, react.Node{})
	assert.Equal(t, `level=INFO msg="REACT finished" outputs=0 goal=unverified run=run-1 node="" round=1`, lines[len(lines)-1])

	// The provenance a tool's contract gives is on the line.
	q := quoteTool(stepNow.Add(-2 * time.Hour))
	m = newScript(turn(call("q1", "quote", `{}`)), turn(finish("f")))
	lines = logLines(t, m, react.Node{Tools: []string{"quote"}}, q.Tool)
	assert.Contains(t, lines, `level=INFO msg="TOOL invoked" outcome=SUCCESS tool=quote duration=1ms call_id=q1 call_status=valid exec_status=ok business_status=evidence schema=a2c799262a3c fetched_at=2025-06-01T10:00:00Z source=https://quotes.example/q version=v3 run=run-1 node="" round=1`)
	// A run failed by rounds of text alone: the host's line says why and
	// what to do, not only that rounds made no progress.
	m = newScript(text("Done."), text("Done."), text("Done."), text("Done."))
	lines = logLines(t, m, react.Node{})
	last := lines[len(lines)-1]
	assert.Contains(t, last, `msg="REACT failed" cause=no_progress reason="4 consecutive rounds without progress (limit 3), 4 of them without a tool call`)
	assert.Contains(t, last, `remedy="the model must end its turn by calling `+react.ToolFinish)
	assert.Contains(t, last, "Node.TextAnswers")
}

// Per-layer counters with seed 003's definitions and denominators: the
// execution layer counts only calls that passed the call and permission
// checks and really ran (a reused write and TOOL_FORBIDDEN are apart),
// every attempt of a retried call, and the first failure of a call that
// recovered even after the run's ledger was forgotten; the business layer
// judges the goal from completion conditions, not from the model's finish.
func TestMetrics(t *testing.T) {
	list, broken, create := sitesTools()
	biz := newFake("pay", tool.Read, fails(tool.BusinessFailure("system.50001", "insufficient funds")))
	secret := newFake("secret", tool.Read, fails(tool.Forbidden("no access")))
	var metrics react.Metrics
	m := newScript(
		text("thinking"), // no tool call
		turn(call("a", "get_stats", `{}`), call("b", "list_sites", `{}`)), // FAILED unavailable, skipped
		turn(call("c", "list_sites", `{}`)),                               // SUCCESS: evidence
		turn(call("d", "nope", `{}`)),                                     // REJECTED: unknown tool
		turn(call("p", "pay", `{}`)),                                      // FAILED business: executed ok, rejected
		turn(call("s", "secret", `{}`)),                                   // FAILED forbidden: apart
		turn(call("r", "quote", `{}`)),                                    // FAILED, then SUCCESS on retry
		turn(call("w", "create_site", `{}`)),                              // DEFERRED
		turn(call("q", react.ToolApproval, `{"tool":"create_site"}`)),     // suspends
	)
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool, biz.Tool, secret.Tool, retried(t).Tool)
	cfg := e.cfg
	cfg.Observer = react.Observers(&metrics, e.rec, nil)
	l, err := react.New(cfg)
	require.NoError(t, err)
	node := sitesNode()
	node.Tools = append(node.Tools, "pay", "secret", "quote")
	node.NoProgressLimit = 10
	res, err := l.Run(context.Background(), node, "hi")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	cfg.Model = newScript(
		turn(call("w2", "create_site", `{}`)), // SUCCESS: executed
		turn(call("w3", "create_site", `{}`)), // SUCCESS: reused from the write ledger, not executed
		turn(finish("f")),                     // finished without a completion condition: unverified
	)
	l, err = react.New(cfg)
	require.NoError(t, err)
	res, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	cfg.Model = newScript(turn(call("x", react.ToolFail, `{"reason":"cannot"}`)))
	l, err = react.New(cfg)
	require.NoError(t, err)
	_, err = l.Run(context.Background(), react.Node{}, "again")
	require.NoError(t, err)
	metrics.RecordTask(true)
	metrics.RecordTask(false)

	got := metrics.Snapshot()
	assert.Equal(t, react.MetricsSnapshot{
		Call: react.CallMetrics{
			Turns: 13, TurnsWithCalls: 12, Calls: 12, Builtin: 3, Skipped: 1,
			ByStatus: map[react.CallStatus]int64{react.CallValid: 10, react.CallUnknownTool: 1, react.CallDeferred: 1},
		},
		Execution: react.ExecutionMetrics{
			Calls: 5, Attempts: 6, FirstOK: 3, FinalOK: 4, Retried: 1, Recovered: 1, Reused: 1, Forbidden: 1,
			FirstByStatus: map[react.ExecStatus]int64{react.ExecOK: 3, react.ExecTemporarilyUnavailable: 2},
			FinalByStatus: map[react.ExecStatus]int64{react.ExecOK: 4, react.ExecTemporarilyUnavailable: 1},
		},
		Business: react.BusinessMetrics{
			Results:      4,
			ByStatus:     map[react.BusinessStatus]int64{react.BusinessEvidence: 3, react.BusinessRejected: 1},
			NodesStarted: 2, NodesFinished: 1, NodesFailed: 1,
			Goals:     map[react.GoalStatus]int64{react.GoalUnverified: 1, react.GoalUnmet: 1},
			Approvals: 1, RunsSuspended: 1, RunsApproval: 1,
			Tasks: 2, TasksPassed: 1,
		},
		Stalls: 5,
	}, got)

	rates := []struct {
		name string
		got  react.Rate
		want react.Rate
		why  string
	}{
		{"decision", got.Call.Decision(), react.Rate{12, 13}, "turns with a tool call over model turns"},
		{"pairing", got.Call.Pairing(), react.Rate{12, 12}, "calls with a usable id"},
		{"resolution", got.Call.Resolution(), react.Rate{11, 12}, "one unknown tool"},
		{"arguments", got.Call.Arguments(), react.Rate{11, 11}, "over the resolved calls"},
		{"admission", got.Call.Admission(), react.Rate{10, 12}, "valid over processed"},
		{"execution success", got.Execution.Success(), react.Rate{4, 6}, "over attempts that really executed, retries included"},
		{"first attempt", got.Execution.FirstAttempt(), react.Rate{3, 5}, "the retried call's first failure counts"},
		{"final", got.Execution.Final(), react.Rate{4, 5}, "after retries"},
		{"recovery", got.Execution.Recovery(), react.Rate{1, 2}, "one of two first failures recovered"},
		{"unavailable", got.Execution.Status(react.ExecTemporarilyUnavailable), react.Rate{1, 5}, "final status by class"},
		{"permission", got.Execution.Permission(), react.Rate{1, 6}, "forbidden over calls that reached a tool"},
		{"new evidence", got.Business.NewEvidence(), react.Rate{3, 4}, "over results that kept the contract"},
		{"insufficient", got.Business.Insufficient(), react.Rate{0, 4}, ""},
		{"sub-goals", got.Business.SubGoals(), react.Rate{0, 2}, "a finish without a completion condition is not a met goal"},
		{"takeover", got.Business.Takeover(), react.Rate{1, 2}, "runs with at least one suspension over runs started"},
		{"approvals", got.Business.ApprovalTakeover(), react.Rate{1, 2}, "runs with an approval suspension over runs started"},
		{"follow-ups", got.Business.FollowUpTakeover(), react.Rate{0, 2}, "counted apart from approvals"},
		{"final task", got.Business.FinalTask(), react.Rate{1, 2}, "as the host recorded it"},
	}
	for _, r := range rates {
		assert.Equal(t, r.want, r.got, "%s: %s", r.name, r.why)
	}
	assert.InDelta(t, 4.0/6, got.Execution.Success().Value(), 1e-9)
	assert.Equal(t, "4/6 (66.7%)", got.Execution.Success().String())
	assert.Equal(t, "0/0 (no sample)", react.Rate{}.String())
	assert.Zero(t, react.Rate{}.Value(), "no division by zero")
}

func TestObserversAndNop(t *testing.T) {
	var a, b recorder
	o := react.Observers(&a, nil, &b, react.DiscardObserver)
	ctx := context.Background()
	for _, e := range []react.Event{
		{Kind: react.EventRunStart, RunStart: &react.RunStartEvent{}},
		{Kind: react.EventToolInvoked, Tool: &react.ToolEvent{}},
		{Kind: react.EventToolSkipped, Tool: &react.ToolEvent{}},
		{Kind: react.EventNoToolCalls},
		{Kind: react.EventStall, Stall: &react.StallEvent{}},
		{Kind: react.EventStallReset, Stall: &react.StallEvent{}},
		{Kind: react.EventSuspended, Suspend: &react.SuspendEvent{}},
		{Kind: react.EventFinished, End: &react.EndEvent{}},
		{Kind: react.EventFailed, End: &react.EndEvent{Failure: &react.Failure{}}},
	} {
		o.Observe(ctx, e)
	}
	assert.Equal(t, a.kinds(), b.kinds())
	assert.Len(t, a.kinds(), 9)
	assert.Same(t, &a, react.Observers(nil, &a).(*recorder), "a single observer is returned as is")
}

// A silenced logger costs an event no allocation: the attributes are built
// only for a handler that writes the level.
func TestLogObserver_SilencedAllocatesNothing(t *testing.T) {
	o := react.NewLogObserver(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	e := react.ToolEvent{RoundEvent: react.RoundEvent{NodeEvent: react.NodeEvent{Run: "r", Node: "n"}, Round: 1}, CallID: "c", Tool: "t", Outcome: outcome.Failed, Code: errcode.ToolTimeout}
	stall := &react.StallEvent{RoundEvent: e.RoundEvent, Count: 1}
	end := &react.EndEvent{RoundEvent: e.RoundEvent}
	allocs := testing.AllocsPerRun(100, func() {
		o.Observe(ctx, react.Event{Kind: react.EventToolInvoked, Tool: &e})
		o.Observe(ctx, react.Event{Kind: react.EventToolSkipped, Tool: &e})
		o.Observe(ctx, react.Event{Kind: react.EventStall, Stall: stall})
		o.Observe(ctx, react.Event{Kind: react.EventFailed, End: end})
	})
	if allocs != 0 {
		t.Errorf("events on a silenced logger allocate %.0f times; want 0", allocs)
	}
}

// countingClock counts the readings of Config.Now.
type countingClock struct {
	clock
	reads atomic.Int64
}

func (c *countingClock) now() time.Time {
	c.reads.Add(1)
	return c.clock.now()
}

// levelHandler keeps the records at or above its level.
type levelHandler struct {
	min     slog.Level
	mu      sync.Mutex
	records []slog.Record
}

func (h *levelHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
func (h *levelHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *levelHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *levelHandler) WithGroup(string) slog.Handler      { return h }

// toolDurations returns the durations of the "TOOL" records by outcome.
func (h *levelHandler) toolDurations() map[string]time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]time.Duration{}
	for _, r := range h.records {
		var o string
		var d time.Duration
		found := false
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "outcome":
				o = a.Value.String()
			case "duration":
				d, found = a.Value.Duration(), true
			}
			return true
		})
		if found {
			out[o] = d
		}
	}
	return out
}

// A call is timed and reported only when someone reads it: with the log
// observer alone and a logger that reports no call (the default logger
// silenced), no clock is read for the calls; with a logger at Info every
// call is logged with its duration; at Warn, the failed call is.
func TestLogObserverTimesOnlyWhatItReports(t *testing.T) {
	tests := []struct {
		name      string
		level     slog.Level
		wantTimed []string // outcomes logged with a duration
		why       string
	}{
		{"silenced", slog.LevelError + 4, nil, "nobody reads the calls: no clock reading per call"},
		{"info", slog.LevelInfo, []string{"SUCCESS", "FAILED"}, "every call is reported, with its duration"},
		{"warn", slog.LevelWarn, []string{"FAILED"}, "a production logger at Warn still times the failure it reports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, broken, _ := sitesTools()
			m := newScript(turn(call("a", "list_sites", `{}`)), turn(call("b", "get_stats", `{}`)), turn(finish("f")))
			cat, err := tool.NewCatalog(list.Tool, broken.Tool)
			require.NoError(t, err)
			h := &levelHandler{min: tt.level}
			clk := &countingClock{}
			l, err := react.New(react.Config{Model: m, Tools: cat, Logger: slog.New(h), Now: clk.now, Guards: memoryStores()})
			require.NoError(t, err)
			res, err := l.Run(context.Background(), react.Node{Name: "sites", Tools: []string{"list_sites", "get_stats"}}, "go")
			require.NoError(t, err)
			require.Equal(t, react.Finished, res.Status)
			durations := h.toolDurations()
			assert.Len(t, durations, len(tt.wantTimed), tt.why)
			for _, o := range tt.wantTimed {
				assert.Equal(t, time.Millisecond, durations[o], "%s: %s measured with Config.Now", tt.why, o)
			}
			if tt.wantTimed == nil {
				assert.Zero(t, clk.reads.Load(), tt.why)
			} else {
				assert.Positive(t, clk.reads.Load(), tt.why)
			}
		})
	}
}
