package task

import (
	"sync/atomic"

	"github.com/reactguard/reactguard/react"
)

// Metrics counts the tasks a [Runner] drives (Options.Metrics), judged by
// each task's own acceptance rule — not by a host's call, and not by the
// model saying it is done ("business completion is judged from
// task samples and completion conditions"). Every rate's denominator is
// the tasks started, so that a task that never ended (still suspended,
// abandoned) counts against completion instead of disappearing. Counts
// are per process: a task started in one process and resumed in another
// is started in the first and ends in the second. The zero value is ready
// to use; it is safe for concurrent use; a nil *Metrics counts nothing.
type Metrics struct {
	started, met, partial, unmet, suspensions atomic.Int64
	steps                                     [7]atomic.Int64 // by react.StepStatus
}

// MetricsSnapshot is a copy of a [Metrics]' counters.
type MetricsSnapshot struct {
	// Started counts the tasks started (Runner.Run).
	Started int64
	// Met, PartiallyMet and Unmet count the tasks that ended so.
	Met, PartiallyMet, Unmet int64
	// Suspensions counts the steps that stopped for a person.
	Suspensions int64
	// Steps counts the step runs that ended, by status (satisfied,
	// insufficient, blocked, failed).
	Steps map[react.StepStatus]int64
}

// FinalTask is the tasks met over the tasks started: the final-task
// success rate.
func (s MetricsSnapshot) FinalTask() react.Rate { return react.Rate{Num: s.Met, Den: s.Started} }

// Partial is the tasks partially met over the tasks started.
func (s MetricsSnapshot) Partial() react.Rate { return react.Rate{Num: s.PartiallyMet, Den: s.Started} }

// StepsSatisfied is the step runs satisfied over the step runs that ended.
func (s MetricsSnapshot) StepsSatisfied() react.Rate {
	var n int64
	for _, c := range s.Steps {
		n += c
	}
	return react.Rate{Num: s.Steps[react.StepSatisfied], Den: n}
}

// Snapshot returns the current counters (read one by one: a snapshot
// taken while tasks run may mix two moments).
func (m *Metrics) Snapshot() MetricsSnapshot {
	if m == nil {
		return MetricsSnapshot{Steps: map[react.StepStatus]int64{}}
	}
	s := MetricsSnapshot{
		Started: m.started.Load(), Met: m.met.Load(), PartiallyMet: m.partial.Load(), Unmet: m.unmet.Load(),
		Suspensions: m.suspensions.Load(), Steps: map[react.StepStatus]int64{},
	}
	for i := range m.steps {
		if n := m.steps[i].Load(); n > 0 {
			s.Steps[react.StepStatus(i)] = n
		}
	}
	return s
}

func (m *Metrics) countStarted() {
	if m != nil {
		m.started.Add(1)
	}
}

func (m *Metrics) countSuspended() {
	if m != nil {
		m.suspensions.Add(1)
	}
}

func (m *Metrics) countStep(s react.StepStatus) {
	if m != nil && int(s) < len(m.steps) {
		m.steps[s].Add(1)
	}
}

func (m *Metrics) countEnded(s Status) {
	if m == nil {
		return
	}
	switch s {
	case Met:
		m.met.Add(1)
	case PartiallyMet:
		m.partial.Add(1)
	case Unmet:
		m.unmet.Add(1)
	case Suspended, Interrupted:
	}
}
