package react

import (
	"context"
	"sync/atomic"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
)

// Metrics counts the events of runs per layer of success (seed 003) with
// the denominators that make each rate honest:
//
//   - call layer: REJECTED calls over calls made (every call the loop
//     processed, built-in calls included, skipped calls excluded);
//   - execution layer: execution failures over calls executed, that is the
//     catalog calls that actually ran (SUCCESS + FAILED; built-in calls,
//     REJECTED and DEFERRED calls are not executions);
//   - business layer: nodes finished over nodes started.
//
// Metrics is an [Observer]: pass it in [Config].Observer (with
// [Observers] to keep the log). The zero value is ready to use; it is safe
// for concurrent use. Counts are per process: a run started in one process
// and resumed in another is started in the first and ends in the second.
type Metrics struct {
	NopObserver
	calls, rejected, deferred, skipped       atomic.Int64
	executed, execFailed, businessFailed     atomic.Int64
	nodesStarted, nodesFinished, nodesFailed atomic.Int64
	suspensions, noToolCalls, stalls         atomic.Int64
}

var _ Observer = (*Metrics)(nil)

// MetricsSnapshot is a copy of the counters of a [Metrics].
type MetricsSnapshot struct {
	// Calls is the number of tool calls processed (built-in calls
	// included, skipped calls excluded).
	Calls int64
	// Rejected is the number of REJECTED calls: call-layer rejections.
	Rejected int64
	// Deferred is the number of DEFERRED calls.
	Deferred int64
	// Skipped is the number of calls skipped (REASON_SKIPPED).
	Skipped int64
	// Executed is the number of catalog calls that ran: SUCCESS + FAILED.
	Executed int64
	// ExecutionFailed is the number of executed calls FAILED with a code of
	// the execution (or call) layer.
	ExecutionFailed int64
	// BusinessFailed is the number of executed calls FAILED with a code of
	// the business layer (TOOL_BUSINESS_FAILED, TOOL_RESULT_EMPTY).
	BusinessFailed int64
	// NodesStarted, NodesFinished and NodesFailed count runs.
	NodesStarted, NodesFinished, NodesFailed int64
	// Suspensions counts suspensions; NoToolCalls rounds without a tool
	// call; Stalls every no-progress counted.
	Suspensions, NoToolCalls, Stalls int64
}

// Snapshot returns the current counters. Counters are read one by one, so
// a snapshot taken while runs are active may mix two moments.
func (m *Metrics) Snapshot() MetricsSnapshot {
	return MetricsSnapshot{
		Calls:           m.calls.Load(),
		Rejected:        m.rejected.Load(),
		Deferred:        m.deferred.Load(),
		Skipped:         m.skipped.Load(),
		Executed:        m.executed.Load(),
		ExecutionFailed: m.execFailed.Load(),
		BusinessFailed:  m.businessFailed.Load(),
		NodesStarted:    m.nodesStarted.Load(),
		NodesFinished:   m.nodesFinished.Load(),
		NodesFailed:     m.nodesFailed.Load(),
		Suspensions:     m.suspensions.Load(),
		NoToolCalls:     m.noToolCalls.Load(),
		Stalls:          m.stalls.Load(),
	}
}

func ratio(num, den int64) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// CallRejectionRate is Rejected / Calls; 0 when no call was made.
func (s MetricsSnapshot) CallRejectionRate() float64 { return ratio(s.Rejected, s.Calls) }

// ExecutionFailureRate is ExecutionFailed / Executed; 0 when nothing ran.
func (s MetricsSnapshot) ExecutionFailureRate() float64 {
	return ratio(s.ExecutionFailed, s.Executed)
}

// BusinessFailureRate is BusinessFailed / Executed; 0 when nothing ran.
func (s MetricsSnapshot) BusinessFailureRate() float64 { return ratio(s.BusinessFailed, s.Executed) }

// BusinessCompletionRate is NodesFinished / NodesStarted; 0 when no node
// started.
func (s MetricsSnapshot) BusinessCompletionRate() float64 {
	return ratio(s.NodesFinished, s.NodesStarted)
}

// OnNodeStarted implements [Observer].
func (m *Metrics) OnNodeStarted(context.Context, NodeEvent) { m.nodesStarted.Add(1) }

// OnToolInvoked implements [Observer].
func (m *Metrics) OnToolInvoked(_ context.Context, e ToolEvent) {
	m.calls.Add(1)
	switch e.Outcome {
	case outcome.Rejected:
		m.rejected.Add(1)
	case outcome.Deferred:
		m.deferred.Add(1)
	case outcome.Success:
		if !e.Builtin {
			m.executed.Add(1)
		}
	case outcome.Failed:
		if !e.Builtin {
			m.executed.Add(1)
			if e.Code.Layer() == errcode.LayerBusiness {
				m.businessFailed.Add(1)
			} else {
				m.execFailed.Add(1)
			}
		}
	}
}

// OnToolSkipped implements [Observer].
func (m *Metrics) OnToolSkipped(context.Context, ToolEvent) { m.skipped.Add(1) }

// OnNoToolCalls implements [Observer].
func (m *Metrics) OnNoToolCalls(context.Context, RoundEvent) { m.noToolCalls.Add(1) }

// OnStall implements [Observer].
func (m *Metrics) OnStall(context.Context, StallEvent) { m.stalls.Add(1) }

// OnSuspended implements [Observer].
func (m *Metrics) OnSuspended(context.Context, SuspendEvent) { m.suspensions.Add(1) }

// OnFinished implements [Observer].
func (m *Metrics) OnFinished(context.Context, EndEvent) { m.nodesFinished.Add(1) }

// OnFailed implements [Observer].
func (m *Metrics) OnFailed(context.Context, EndEvent) { m.nodesFailed.Add(1) }
