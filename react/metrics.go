package react

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
)

// Metrics counts the events of runs per layer of success, each
// layer with its own figures and denominators, never merged into one
// "tool success rate":
//
//   - call layer: did the model decide to call a tool, could each call be
//     paired by id, resolved to a visible tool and parsed, and was it
//     admitted (the funnel of [CallMetrics]);
//   - execution layer: of the calls that passed the call and permission
//     checks and really entered execution — guard rejections, deferrals,
//     write-ledger reuses and built-in tools excluded, permission refusals
//     counted apart — how many attempts and calls kept the tool's
//     contract, on the first attempt and finally, by execution status
//     ([ExecutionMetrics]);
//   - business layer: new evidence produced per successful execution,
//     runs whose completion conditions were met over the runs started (not
//     runs the model declared done; a run still suspended, interrupted or
//     abandoned counts as not met), human takeover as the share of runs
//     started with at least one suspension (approvals and follow-ups
//     apart), and the final task as judged by the host
//     ([BusinessMetrics]).
//
// docs/evaluation.md defines every figure with its numerator and
// denominator. Metrics is an [Observer]: pass it in [Config].Observer
// (with [Observers] to keep the log); report the host's verdict on a task
// with [Metrics.RecordTask]. The zero value is ready to use; it is safe
// for concurrent use and allocates nothing per tool event (it keeps one
// map entry per run while the run is open: started and not ended). Counts
// are per process, and so is the window of the per-run figures: a run is
// counted where it started; what it does after it was resumed in another
// process counts there only in the per-event counters.
type Metrics struct {
	// call layer
	noToolCalls, turnsWithCalls  atomic.Int64
	calls, builtinCalls, skipped atomic.Int64
	callStatus                   [maxCallStatus + 1]atomic.Int64
	// execution layer
	execCalls, attempts, firstOK, finalOK, retried, recovered atomic.Int64
	reused, forbidden                                         atomic.Int64
	firstStatus, finalStatus                                  [maxExecStatus + 1]atomic.Int64
	// business layer
	business                                 [maxBusinessStatus + 1]atomic.Int64
	nodesStarted, nodesFinished, nodesFailed atomic.Int64
	goals                                    [maxGoalStatus + 1]atomic.Int64
	approvals, followUps                     atomic.Int64
	tasks, tasksPassed                       atomic.Int64
	runsMet, runsSuspended                   atomic.Int64
	runsApproval, runsFollowUp               atomic.Int64
	open                                     openRuns
	// loop
	stalls atomic.Int64
}

var (
	_ Observer    = (*Metrics)(nil)
	_ EventFilter = (*Metrics)(nil)
)

// Rate is a ratio with its numerator and denominator, so that a figure is
// never shown without what it was computed from.
type Rate struct {
	Num, Den int64
}

// Value returns Num/Den, or 0 when Den is 0 (no sample).
func (r Rate) Value() float64 {
	if r.Den == 0 {
		return 0
	}
	return float64(r.Num) / float64(r.Den)
}

// String returns "num/den (pp.p%)", or "num/0 (no sample)".
func (r Rate) String() string {
	s := strconv.FormatInt(r.Num, 10) + "/" + strconv.FormatInt(r.Den, 10)
	if r.Den == 0 {
		return s + " (no sample)"
	}
	return s + " (" + strconv.FormatFloat(100*r.Value(), 'f', 1, 64) + "%)"
}

// MetricsSnapshot is a copy of the counters of a [Metrics], by layer.
type MetricsSnapshot struct {
	Call      CallMetrics
	Execution ExecutionMetrics
	Business  BusinessMetrics
	// Stalls counts every no-progress the loop counted.
	Stalls int64
}

// CallMetrics are the call layer's counters.
type CallMetrics struct {
	// Turns is the number of model turns: TurnsWithCalls plus the turns
	// without a tool call.
	Turns int64
	// TurnsWithCalls is the number of model turns with at least one tool
	// call.
	TurnsWithCalls int64
	// Calls is the number of calls processed, built-in calls included,
	// skipped calls excluded; Builtin how many of them were built-in.
	Calls, Builtin int64
	// Skipped is the number of calls skipped (REASON_SKIPPED), not judged.
	Skipped int64
	// ByStatus counts Calls by call status.
	ByStatus map[CallStatus]int64
}

// Decision is TurnsWithCalls / Turns: how often the model answered with
// a tool call.
func (c CallMetrics) Decision() Rate { return Rate{c.TurnsWithCalls, c.Turns} }

// Pairing is the calls with a usable id over Calls (call-id pairing).
func (c CallMetrics) Pairing() Rate {
	return Rate{c.Calls - c.ByStatus[CallUnpaired], c.Calls}
}

// Resolution is the paired calls whose tool name resolved to a visible
// tool, over the paired calls (name resolution).
func (c CallMetrics) Resolution() Rate {
	paired := c.Calls - c.ByStatus[CallUnpaired]
	return Rate{paired - c.ByStatus[CallUnknownTool], paired}
}

// Arguments is the resolved calls whose arguments parsed and passed the
// schema and argument policy, over the resolved calls (argument
// structure).
func (c CallMetrics) Arguments() Rate {
	resolved := c.Calls - c.ByStatus[CallUnpaired] - c.ByStatus[CallUnknownTool]
	return Rate{resolved - c.ByStatus[CallInvalidArgs], resolved}
}

// Admission is the calls admitted (valid) over Calls: the whole call
// layer, refusals by rules and deferrals included in the denominator.
func (c CallMetrics) Admission() Rate { return Rate{c.ByStatus[CallValid], c.Calls} }

// ExecutionMetrics are the execution layer's counters. A call counts here
// only when it passed the call and permission checks and really entered
// execution: catalog calls with at least one executed attempt whose final
// attempt was not refused permission.
type ExecutionMetrics struct {
	// Calls is the number of calls that entered execution (the
	// denominator of every per-call rate).
	Calls int64
	// Attempts is the number of executed attempts of those calls, retries
	// included (the denominator of the per-attempt rate).
	Attempts int64
	// FirstOK and FinalOK count the calls whose first, and whose final,
	// attempt kept the tool's contract (ok or empty).
	FirstOK, FinalOK int64
	// Retried counts the calls that ran more than once; Recovered those
	// whose first attempt failed and whose final attempt kept the
	// contract.
	Retried, Recovered int64
	// Reused counts the calls answered from the write ledger without
	// executing; Forbidden the calls the tool's backend refused
	// permission (TOOL_FORBIDDEN). Neither is in Calls.
	Reused, Forbidden int64
	// FirstByStatus and FinalByStatus count Calls by the execution status
	// of their first and of their final attempt.
	FirstByStatus, FinalByStatus map[ExecStatus]int64
}

// Success is FinalOK / Attempts: the attempts that kept the contract over
// the attempts that really executed (only a call's last attempt can
// succeed: retries stop at the first success).
func (e ExecutionMetrics) Success() Rate { return Rate{e.FinalOK, e.Attempts} }

// FirstAttempt is FirstOK / Calls: stability without retries.
func (e ExecutionMetrics) FirstAttempt() Rate { return Rate{e.FirstOK, e.Calls} }

// Final is FinalOK / Calls: the calls whose execution ended well, retries
// included.
func (e ExecutionMetrics) Final() Rate { return Rate{e.FinalOK, e.Calls} }

// Recovery is Recovered over the calls whose first attempt failed:
// resilience.
func (e ExecutionMetrics) Recovery() Rate { return Rate{e.Recovered, e.Calls - e.FirstOK} }

// Status is the calls whose final attempt had status s, over Calls (for
// example the timeout rate, or the contract violations with
// [ExecResultInvalid]).
func (e ExecutionMetrics) Status(s ExecStatus) Rate { return Rate{e.FinalByStatus[s], e.Calls} }

// Permission is Forbidden over the calls that reached a tool (Calls +
// Forbidden): how often the backend refused permission.
func (e ExecutionMetrics) Permission() Rate { return Rate{e.Forbidden, e.Calls + e.Forbidden} }

// BusinessMetrics are the business layer's counters.
type BusinessMetrics struct {
	// Results counts the calls whose execution kept the contract (final
	// status ok or empty): the results the business layer judges.
	Results int64
	// ByStatus counts the judged calls by business status: evidence,
	// repeated, insufficient, and rejected (a business refusal inside an
	// answer, which is also in Results as an execution that kept its
	// contract).
	ByStatus map[BusinessStatus]int64
	// NodesStarted counts runs started by [Loop.Run]; NodesFinished and
	// NodesFailed the runs that ended so (resumed runs included).
	NodesStarted, NodesFinished, NodesFailed int64
	// Goals counts the ended runs by goal status (met, unverified, unmet).
	Goals map[GoalStatus]int64
	// RunsMet counts the runs started here that ended with their goal met.
	RunsMet int64
	// Approvals and FollowUps count the suspensions for a human: approval
	// of a write, answer to a question (a run may suspend many times).
	Approvals, FollowUps int64
	// RunsSuspended counts the runs started here that suspended at least
	// once; RunsApproval and RunsFollowUp those with at least one approval,
	// and at least one follow-up, suspension.
	RunsSuspended, RunsApproval, RunsFollowUp int64
	// Tasks and TasksPassed count the final verdicts the host recorded
	// with [Metrics.RecordTask].
	Tasks, TasksPassed int64
}

// NewEvidence is the results that were new evidence over Results.
func (b BusinessMetrics) NewEvidence() Rate { return Rate{b.ByStatus[BusinessEvidence], b.Results} }

// Insufficient is the results that were empty or fell short of the
// contract's business check over Results ("executed, business not
// satisfied").
func (b BusinessMetrics) Insufficient() Rate {
	return Rate{b.ByStatus[BusinessInsufficient], b.Results}
}

// SubGoals is RunsMet over NodesStarted: the runs whose goal was met by
// their completion conditions over the runs started in the window. A run
// that is still suspended, was interrupted or abandoned, failed, or that
// the model finished without a checkable condition (unverified) counts as
// not met: it is in the denominator, never dropped from it.
func (b BusinessMetrics) SubGoals() Rate { return Rate{b.RunsMet, b.NodesStarted} }

// Takeover is RunsSuspended over NodesStarted: the share of runs a human
// had to take over at least once (never above 100%, however often a run
// suspends).
func (b BusinessMetrics) Takeover() Rate { return Rate{b.RunsSuspended, b.NodesStarted} }

// ApprovalTakeover is RunsApproval over NodesStarted: the share of runs
// with at least one approval suspension.
func (b BusinessMetrics) ApprovalTakeover() Rate { return Rate{b.RunsApproval, b.NodesStarted} }

// FollowUpTakeover is RunsFollowUp over NodesStarted: the share of runs
// with at least one follow-up suspension.
func (b BusinessMetrics) FollowUpTakeover() Rate { return Rate{b.RunsFollowUp, b.NodesStarted} }

// FinalTask is TasksPassed over Tasks: the host's acceptance of the final
// task (its own validator, the user's acceptance, an evaluation case).
func (b BusinessMetrics) FinalTask() Rate { return Rate{b.TasksPassed, b.Tasks} }

// RecordTask records the host's final verdict on one task (the user's
// goal, which may span several runs): passed or not. Live traffic carries
// no labels, so only the host can say; the evaluation harness (package
// eval) records one per case.
func (m *Metrics) RecordTask(passed bool) {
	m.tasks.Add(1)
	if passed {
		m.tasksPassed.Add(1)
	}
}

// Snapshot returns the current counters. Counters are read one by one, so
// a snapshot taken while runs are active may mix two moments.
func (m *Metrics) Snapshot() MetricsSnapshot {
	s := MetricsSnapshot{
		Call: CallMetrics{
			TurnsWithCalls: m.turnsWithCalls.Load(),
			Calls:          m.calls.Load(),
			Builtin:        m.builtinCalls.Load(),
			Skipped:        m.skipped.Load(),
			ByStatus:       make(map[CallStatus]int64),
		},
		Execution: ExecutionMetrics{
			Calls:         m.execCalls.Load(),
			Attempts:      m.attempts.Load(),
			FirstOK:       m.firstOK.Load(),
			FinalOK:       m.finalOK.Load(),
			Retried:       m.retried.Load(),
			Recovered:     m.recovered.Load(),
			Reused:        m.reused.Load(),
			Forbidden:     m.forbidden.Load(),
			FirstByStatus: make(map[ExecStatus]int64),
			FinalByStatus: make(map[ExecStatus]int64),
		},
		Business: BusinessMetrics{
			ByStatus:      make(map[BusinessStatus]int64),
			NodesStarted:  m.nodesStarted.Load(),
			NodesFinished: m.nodesFinished.Load(),
			NodesFailed:   m.nodesFailed.Load(),
			Goals:         make(map[GoalStatus]int64),
			RunsMet:       m.runsMet.Load(),
			Approvals:     m.approvals.Load(),
			FollowUps:     m.followUps.Load(),
			RunsSuspended: m.runsSuspended.Load(),
			RunsApproval:  m.runsApproval.Load(),
			RunsFollowUp:  m.runsFollowUp.Load(),
			Tasks:         m.tasks.Load(),
			TasksPassed:   m.tasksPassed.Load(),
		},
		Stalls: m.stalls.Load(),
	}
	s.Call.Turns = s.Call.TurnsWithCalls + m.noToolCalls.Load()
	for i := range m.callStatus {
		if n := m.callStatus[i].Load(); n != 0 {
			s.Call.ByStatus[CallStatus(i)] = n
		}
	}
	for i := range m.firstStatus {
		if n := m.firstStatus[i].Load(); n != 0 {
			s.Execution.FirstByStatus[ExecStatus(i)] = n
		}
		if n := m.finalStatus[i].Load(); n != 0 {
			s.Execution.FinalByStatus[ExecStatus(i)] = n
		}
	}
	for i := range m.business {
		if n := m.business[i].Load(); n != 0 {
			s.Business.ByStatus[BusinessStatus(i)] = n
		}
	}
	s.Business.Results = s.Execution.FinalOK
	for i := range m.goals {
		if n := m.goals[i].Load(); n != 0 {
			s.Business.Goals[GoalStatus(i)] = n
		}
	}
	return s
}

// Observe implements [Observer]: it counts the kinds [Metrics.Wants]
// returns and ignores the others.
func (m *Metrics) Observe(ctx context.Context, e Event) context.Context {
	switch e.Kind {
	case EventRunStart:
		if !e.RunStart.Resumed {
			m.nodesStarted.Add(1)
			m.open.start(e.RunStart.Run)
		}
	case EventToolInvoked:
		m.onToolInvoked(e.Tool)
	case EventToolSkipped:
		m.skipped.Add(1)
	case EventNoToolCalls:
		m.noToolCalls.Add(1)
	case EventStall:
		m.stalls.Add(1)
	case EventSuspended:
		m.onSuspended(e.Suspend)
	case EventFinished:
		m.nodesFinished.Add(1)
		m.goal(e.End)
	case EventFailed:
		m.nodesFailed.Add(1)
		m.goal(e.End)
	default: // not counted
	}
	return ctx
}

// metricEvents are the kinds a Metrics counts.
var metricEvents = Events(EventRunStart, EventToolInvoked, EventToolSkipped, EventNoToolCalls,
	EventStall, EventSuspended, EventFinished, EventFailed)

// Wants implements [EventFilter]: the kinds it counts.
func (m *Metrics) Wants() EventSet { return metricEvents }

func (m *Metrics) onToolInvoked(e *ToolEvent) {
	m.calls.Add(1)
	if e.Position == 0 {
		m.turnsWithCalls.Add(1)
	}
	if e.Builtin {
		m.builtinCalls.Add(1)
	}
	l := e.Layers
	if l.Call.IsValid() {
		m.callStatus[l.Call].Add(1)
	}
	switch {
	case l.Execution == ExecReused:
		m.reused.Add(1)
		return
	case l.Attempts == 0 || !l.Final.Status.IsValid() || !l.First.Status.IsValid():
		return // nothing executed
	case l.Final.Status == ExecForbidden:
		m.forbidden.Add(1)
		return
	}
	m.execCalls.Add(1)
	m.attempts.Add(int64(l.Attempts))
	m.firstStatus[l.First.Status].Add(1)
	m.finalStatus[l.Final.Status].Add(1)
	if l.First.Status.Succeeded() {
		m.firstOK.Add(1)
	}
	if l.Final.Status.Succeeded() {
		m.finalOK.Add(1)
		if l.Business.IsValid() && l.Business != BusinessNone {
			m.business[l.Business].Add(1)
		}
	}
	if l.Attempts > 1 {
		m.retried.Add(1)
	}
	if l.Recovered() {
		m.recovered.Add(1)
	}
}

func (m *Metrics) onSuspended(e *SuspendEvent) {
	var kind uint8
	switch e.Suspension.Kind {
	case SuspendApproval:
		m.approvals.Add(1)
		kind = openApproval
	case SuspendFollowUp:
		m.followUps.Add(1)
		kind = openFollowUp
	}
	before, tracked := m.open.mark(e.Run, kind)
	if !tracked {
		return // started in another process (or past the bound): counted there
	}
	if before == 0 {
		m.runsSuspended.Add(1)
	}
	if before&kind == 0 {
		switch kind {
		case openApproval:
			m.runsApproval.Add(1)
		case openFollowUp:
			m.runsFollowUp.Add(1)
		}
	}
}

func (m *Metrics) goal(e *EndEvent) {
	if e.Goal.IsValid() {
		m.goals[e.Goal].Add(1)
	}
	if m.open.end(e.Run) && e.Goal == GoalMet {
		m.runsMet.Add(1)
	}
}

// maxOpenRuns bounds the runs a [Metrics] keeps open (started, not ended):
// past it, starting a run forgets an arbitrary open one, whose later
// suspension or met goal then goes uncounted (never counted twice).
const maxOpenRuns = 1 << 16

// The flags of an open run.
const (
	openApproval  uint8 = 1 << iota // suspended for an approval at least once
	openFollowUp                    // suspended for a follow-up at least once
	openSuspended                   // suspended at least once (any kind)
)

// openRuns holds the runs started in this process that have not ended,
// with what they did so far: the per-run figures count each run once.
type openRuns struct {
	mu   sync.Mutex
	runs map[string]uint8
}

func (o *openRuns) start(run string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.runs == nil {
		o.runs = make(map[string]uint8)
	}
	if _, open := o.runs[run]; !open && len(o.runs) >= maxOpenRuns {
		for k := range o.runs {
			delete(o.runs, k)
			break
		}
	}
	o.runs[run] = 0
}

// mark records a suspension of kind (a flag, 0 for another kind) of run
// and returns the run's flags before it (0: its first suspension); tracked
// is false for a run not open here.
func (o *openRuns) mark(run string, kind uint8) (before uint8, tracked bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.runs[run]
	if !ok {
		return 0, false
	}
	o.runs[run] = f | kind | openSuspended
	return f, true
}

// end forgets run and reports whether it was open here.
func (o *openRuns) end(run string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.runs[run]
	delete(o.runs, run)
	return ok
}
