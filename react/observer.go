package react

import (
	"context"
	"log/slog"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/outcome"
)

// Observer consumes the events of runs, as a [slog.Handler] consumes
// records: every [Event] of a run (see [EventKind] for the vocabulary),
// the same values a host receives from [Loop.RunStream]. Events are
// delivered synchronously, on the goroutine that runs the loop, except
// the EventToolStart and EventToolEnd of parallel reads, which come from
// the goroutines that run them; the loop waits for Observe to return, so
// it must not block for long, and it must be safe for concurrent use when
// one observer serves several runs at once.
//
// Observe returns a context. For the kinds that start something
// (EventRunStart, EventModelStart, EventToolStart) it is the context of
// that work: ctx itself, or a context derived from it that carries, say,
// a span. The loop passes it to the work (the whole call of Run or
// Resume; the model call; the guard chain and the tool) and to the
// matching end (EventRunEnd, EventModelEnd, EventToolEnd), and ends every
// start exactly once: after success, failure, cancellation, and while a
// panic of the Model or of a custom [Config].Handler unwinds (the end's
// Err is then [ErrPanicked] and the panic goes on after Observe
// returns). For every other kind the returned context is ignored: return
// ctx. A nil return counts as ctx.
//
// An Observer may also implement [EventFilter], to receive only some
// kinds (the loop then builds no event nobody reads), and [Carrier], to
// keep a few strings in a run's snapshot. [ObserverFunc] adapts a
// function.
type Observer interface {
	Observe(ctx context.Context, e Event) context.Context
}

// ObserverFunc adapts a function to [Observer]; Observe calls it and
// returns ctx.
type ObserverFunc func(ctx context.Context, e Event)

// Observe calls f and returns ctx.
func (f ObserverFunc) Observe(ctx context.Context, e Event) context.Context {
	f(ctx, e)
	return ctx
}

// EventFilter is an optional interface of an [Observer] that receives only
// the kinds in the set Wants returns. [New] and [Observers] ask once, so
// the set must not change. An Observer that does not implement it
// receives every kind.
type EventFilter interface {
	Wants() EventSet
}

// Carrier is an optional interface of an [Observer] that keeps a few
// strings in a run's snapshot. Carry is called when the run stops with a
// snapshot (suspended or interrupted), with the run's context (the one
// returned for EventRunStart): the strings it returns are kept inside the
// snapshot and handed back in [RunStartEvent].Carried when the snapshot is
// resumed, in this process or another. This is how a tracer links a
// resumed run to the span of the run it resumes. The loop keeps at most
// [MaxCarried] entries, each with a key of 1 to [MaxCarriedKey] bytes and
// a value of at most [MaxCarriedValue] bytes; entries past these bounds
// are dropped (telemetry never fails a run). With several observers, the
// maps are merged in order and a later observer's key replaces an earlier
// one's, so keys should be specific (the W3C names traceparent and
// tracestate are).
type Carrier interface {
	Carry(ctx context.Context) map[string]string
}

// DiscardObserver is an [Observer] that receives no event (its
// [EventFilter] wants none), as [slog.DiscardHandler] discards records:
// pass it in [Config].Observer to silence the default log. The loop then
// builds no event and times no call.
var DiscardObserver Observer = discard{}

type discard struct{}

// Observe returns ctx.
func (discard) Observe(ctx context.Context, _ Event) context.Context { return ctx }

// Wants implements [EventFilter]: no kind.
func (discard) Wants() EventSet { return 0 }

// wantsOf returns the kinds o receives.
func wantsOf(o Observer) EventSet {
	if f, ok := o.(EventFilter); ok {
		return f.Wants() & AllEvents
	}
	return AllEvents
}

// NodeEvent identifies a run and its node.
type NodeEvent struct {
	Run  string
	Node string
}

// RoundEvent is a [NodeEvent] in a given round.
type RoundEvent struct {
	NodeEvent
	Round int
}

// ToolEvent describes one tool call's observation.
type ToolEvent struct {
	RoundEvent
	// CallID and Tool identify the call.
	CallID string
	Tool   string
	// Builtin reports a built-in control tool.
	Builtin bool
	// Outcome and Code are the verdict (Code is 0 for SUCCESS and for
	// skipped calls; Outcome is 0 for skipped calls).
	Outcome outcome.Outcome
	Code    errcode.Code
	// Duration is the time the call took, measured with Config.Now.
	Duration time.Duration
	// Position is the call's index among the calls of its turn, from 0.
	Position int
	// Layers is the call's account in the three layers of success: call,
	// execution and business status, and the first and final attempt. The
	// zero Layers for skipped calls.
	Layers Layers
	// Offered is the tool names the model saw in the call's round, in the
	// order offered (catalog tools, then built-in tools). It is shared by
	// every event of the run: read it, never modify it.
	Offered []string
	// SchemaVersion identifies the input schema the model saw for a
	// catalog tool: the first 12 hex digits of the SHA-256 of its JSON; ""
	// for built-in tools and names the node does not show.
	SchemaVersion string
	// Err is the raw error behind a non-success (observation.Cause): the
	// tool's own error with everything it holds. It is for logs, traces
	// and metrics only; the model never sees it. Nil for a success, a
	// skipped call, and a verdict no error caused.
	Err error
	// Provenance is when, from where and in which version the executed
	// call's result was obtained, as its evidence record keeps it
	// ([CallReport].Provenance); nil when the call did not execute or its
	// tool's contract and the write gate said nothing. It is shared with
	// the run's report: read it, never modify it.
	Provenance *evidence.Provenance
}

// StallEvent describes a change of the no-progress counter.
type StallEvent struct {
	RoundEvent
	// Count is the counter after the change.
	Count int
	// Limit is the node's no-progress limit.
	Limit int
	// Reason is why the stall was counted: finish_rejected, FAILED,
	// REJECTED (the outcome's name) or no_tool_calls; "" for a reset.
	Reason string
	// CallID is the call that caused the change ("" for a round without
	// tool calls).
	CallID string
}

// SuspendEvent describes a suspension.
type SuspendEvent struct {
	RoundEvent
	Suspension Suspension
}

// EndEvent describes the end of a run.
type EndEvent struct {
	RoundEvent
	// Failure is set for OnFailed.
	Failure *Failure
	// Outputs is the number of outputs set.
	Outputs int
	// Goal is the run's goal status judged from its completion conditions
	// (met, unverified or unmet; see [GoalStatus]).
	Goal GoalStatus
}

// Observers returns an observer that passes every event to each of obs
// in order. Nil entries are skipped; a single observer is returned as is.
// For the kinds that start something, each observer receives the context
// the previous one returned, and the result is the last one's; the kinds
// that end something (EventRunEnd, EventModelEnd, EventToolEnd) are
// passed in reverse order, the last observer first, each with the context
// the loop passes. An observer receives only the kinds its [EventFilter]
// wants; the result wants their union. The result implements [Carrier]
// when a member does, merging their maps in order.
func Observers(obs ...Observer) Observer {
	m := &multi{}
	for _, o := range obs {
		if o == nil {
			continue
		}
		w := wantsOf(o)
		m.obs = append(m.obs, o)
		m.wants = append(m.wants, w)
		m.all |= w
		if c, ok := o.(Carrier); ok {
			m.carriers = append(m.carriers, c)
		}
	}
	if len(m.obs) == 1 {
		return m.obs[0]
	}
	if len(m.carriers) > 0 {
		return &multiCarrier{m}
	}
	return m
}

// multi is the result of [Observers].
type multi struct {
	obs      []Observer
	wants    []EventSet
	all      EventSet
	carriers []Carrier
}

// Observe passes e to every member that wants it (see [Observers]).
func (m *multi) Observe(ctx context.Context, e Event) context.Context {
	switch {
	case e.Kind.ends():
		for i := len(m.obs) - 1; i >= 0; i-- {
			if m.wants[i].Has(e.Kind) {
				m.obs[i].Observe(ctx, e)
			}
		}
	case e.Kind.starts():
		for i, o := range m.obs {
			if m.wants[i].Has(e.Kind) {
				if c := o.Observe(ctx, e); c != nil {
					ctx = c
				}
			}
		}
	default:
		for i, o := range m.obs {
			if m.wants[i].Has(e.Kind) {
				o.Observe(ctx, e)
			}
		}
	}
	return ctx
}

// Wants implements [EventFilter]: the union of the members'.
func (m *multi) Wants() EventSet { return m.all }

// multiCarrier is a [multi] some of whose members implement [Carrier].
type multiCarrier struct{ *multi }

// Carry merges what every carrier carries, in order.
func (m *multiCarrier) Carry(ctx context.Context) map[string]string {
	var out map[string]string
	for _, o := range m.carriers {
		for k, v := range o.Carry(ctx) {
			if out == nil {
				out = make(map[string]string)
			}
			out[k] = v
		}
	}
	return out
}

var (
	_ EventFilter = (*multi)(nil)
	_ Carrier     = (*multiCarrier)(nil)
)

// LogObserver is the default [Observer]: it writes every event to a
// [slog.Logger] with a stable message and attributes:
//
//	TOOL invoked   outcome=… code=… tool=… duration=… call_id=… call_status=… exec_status=… business_status=… [attempts=… first_outcome=… first_code=…] [schema=…] [fetched_at=… source=… object_id=… version=… voucher=… idempotency_key=…] [error=…]
//	               (WARN when FAILED, INFO otherwise)
//	TOOL skipped   tool=… call_id=…                                        (INFO)
//	REACT node_started [thread=… turn=…]                                   (INFO, a call of Run)
//	REACT resumed  decision=… [by=…] [thread=… turn=…]                    (INFO, a call of Resume)
//	REACT no_tool_calls                                                    (INFO)
//	REACT stall    count=… limit=… reason=…                                (INFO)
//	REACT stall_reset                                                      (INFO)
//	REACT suspended kind=… call_id=… tool=…|question=…                      (INFO)
//	REACT finished  outputs=… goal=…                                       (INFO)
//	REACT failed    cause=… reason=… [remedy=…] goal=…                     (WARN)
//
// Every record also carries run, node and round. thread and turn are those
// of a run in a thread ([InThread]); remedy is the [Failure].Remedy when
// there is one. code is omitted for
// SUCCESS; attempts, first_outcome and first_code only for a call that ran
// more than once (the first attempt's verdict: a recovery never hides the
// first failure); schema (the [ToolEvent].SchemaVersion) only for
// catalog tools; fetched_at, source, object_id, version, voucher and
// idempotency_key (the [ToolEvent].Provenance) each only when the call's
// evidence record holds it; error (the [ToolEvent].Err: the raw error the
// model never sees, so keep the log where secrets may be) only when there
// is one. Build it with [NewLogObserver].
type LogObserver struct {
	logger *slog.Logger
}

// NewLogObserver returns a [LogObserver] writing to logger; nil means
// [slog.Default], looked up at every event.
func NewLogObserver(logger *slog.Logger) *LogObserver { return &LogObserver{logger: logger} }

func (l *LogObserver) log() *slog.Logger {
	if l.logger != nil {
		return l.logger
	}
	return slog.Default()
}

// enabled returns the logger and whether it writes records at level: the
// attributes of an event are built only then, so a silenced logger costs
// an event no allocation.
func (l *LogObserver) enabled(ctx context.Context, level slog.Level) (*slog.Logger, bool) {
	lg := l.log()
	return lg, lg.Enabled(ctx, level)
}

func roundAttrs(e RoundEvent, attrs ...slog.Attr) []slog.Attr {
	return append(attrs, slog.String("run", e.Run), slog.String("node", e.Node), slog.Int("round", e.Round))
}

// Observe implements [Observer]: it writes the events listed in the
// type's documentation and ignores the others.
func (l *LogObserver) Observe(ctx context.Context, e Event) context.Context {
	switch e.Kind {
	case EventRunStart:
		l.onRunStart(ctx, e.RunStart)
	case EventToolInvoked:
		l.onToolInvoked(ctx, e.Tool)
	case EventToolSkipped:
		l.onToolSkipped(ctx, e.Tool)
	case EventNoToolCalls:
		l.onNoToolCalls(ctx, e.RoundEvent)
	case EventStall:
		l.onStall(ctx, e.Stall)
	case EventStallReset:
		l.onStallReset(ctx, e.Stall)
	case EventSuspended:
		l.onSuspended(ctx, e.Suspend)
	case EventFinished:
		l.onFinished(ctx, e.End)
	case EventFailed:
		l.onFailed(ctx, e.End)
	default: // not logged
	}
	return ctx
}

// logEvents are the kinds a LogObserver writes.
var logEvents = Events(EventRunStart, EventToolInvoked, EventToolSkipped, EventNoToolCalls,
	EventStall, EventStallReset, EventSuspended, EventFinished, EventFailed)

// Wants implements [EventFilter]: the kinds the type's documentation
// lists.
func (l *LogObserver) Wants() EventSet { return logEvents }

func (l *LogObserver) onRunStart(ctx context.Context, e *RunStartEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	var thread []slog.Attr
	if e.Thread != "" {
		thread = []slog.Attr{slog.String("thread", e.Thread), slog.Int("turn", e.Turn)}
	}
	if e.Resumed {
		attrs := []slog.Attr{slog.String("decision", e.Decision)}
		if e.DecidedBy != "" {
			attrs = append(attrs, slog.String("by", e.DecidedBy))
		}
		lg.LogAttrs(ctx, slog.LevelInfo, "REACT resumed", roundAttrs(RoundEvent{NodeEvent: e.NodeEvent, Round: e.Round}, append(attrs, thread...)...)...)
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT node_started", append([]slog.Attr{slog.String("run", e.Run), slog.String("node", e.Node)}, thread...)...)
}

func (l *LogObserver) onToolInvoked(ctx context.Context, e *ToolEvent) {
	level := slog.LevelInfo
	if e.Outcome == outcome.Failed {
		level = slog.LevelWarn
	}
	lg, on := l.enabled(ctx, level)
	if !on {
		return
	}
	attrs := []slog.Attr{slog.String("outcome", e.Outcome.String())}
	if e.Code != 0 {
		attrs = append(attrs, slog.String("code", e.Code.String()))
	}
	attrs = append(attrs, slog.String("tool", e.Tool), slog.Duration("duration", e.Duration), slog.String("call_id", e.CallID),
		slog.String("call_status", e.Layers.Call.String()), slog.String("exec_status", e.Layers.Execution.String()),
		slog.String("business_status", e.Layers.Business.String()))
	if e.Layers.Attempts > 1 {
		attrs = append(attrs, slog.Int("attempts", e.Layers.Attempts), slog.String("first_outcome", e.Layers.First.Outcome.String()))
		if e.Layers.First.Code != 0 {
			attrs = append(attrs, slog.String("first_code", e.Layers.First.Code.String()))
		}
	}
	if e.SchemaVersion != "" {
		attrs = append(attrs, slog.String("schema", e.SchemaVersion))
	}
	if p := e.Provenance; p != nil {
		attrs = provenanceAttrs(attrs, p)
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("error", errText(e.Err)))
	}
	lg.LogAttrs(ctx, level, "TOOL invoked", roundAttrs(e.RoundEvent, attrs...)...)
}

func (l *LogObserver) onToolSkipped(ctx context.Context, e *ToolEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "TOOL skipped",
		roundAttrs(e.RoundEvent, slog.String("tool", e.Tool), slog.String("call_id", e.CallID))...)
}

func (l *LogObserver) onNoToolCalls(ctx context.Context, e RoundEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT no_tool_calls", roundAttrs(e)...)
}

func (l *LogObserver) onStall(ctx context.Context, e *StallEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT stall", roundAttrs(e.RoundEvent,
		slog.Int("count", e.Count), slog.Int("limit", e.Limit), slog.String("reason", e.Reason), slog.String("call_id", e.CallID))...)
}

func (l *LogObserver) onStallReset(ctx context.Context, e *StallEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT stall_reset", roundAttrs(e.RoundEvent, slog.String("call_id", e.CallID))...)
}

func (l *LogObserver) onSuspended(ctx context.Context, e *SuspendEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	attrs := []slog.Attr{slog.String("kind", e.Suspension.Kind.String()), slog.String("call_id", e.Suspension.CallID)}
	if e.Suspension.Approval != nil {
		attrs = append(attrs, slog.String("tool", e.Suspension.Approval.Tool))
	}
	if e.Suspension.Question != "" {
		attrs = append(attrs, slog.String("question", e.Suspension.Question))
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT suspended", roundAttrs(e.RoundEvent, attrs...)...)
}

func (l *LogObserver) onFinished(ctx context.Context, e *EndEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT finished", roundAttrs(e.RoundEvent, slog.Int("outputs", e.Outputs), slog.String("goal", e.Goal.String()))...)
}

func (l *LogObserver) onFailed(ctx context.Context, e *EndEvent) {
	lg, on := l.enabled(ctx, slog.LevelWarn)
	if !on {
		return
	}
	attrs := []slog.Attr{}
	if e.Failure != nil {
		attrs = append(attrs, slog.String("cause", e.Failure.Kind.String()), slog.String("reason", e.Failure.Reason))
		if e.Failure.Remedy != "" {
			attrs = append(attrs, slog.String("remedy", e.Failure.Remedy))
		}
	}
	attrs = append(attrs, slog.String("goal", e.Goal.String()))
	lg.LogAttrs(ctx, slog.LevelWarn, "REACT failed", roundAttrs(e.RoundEvent, attrs...)...)
}

var (
	_ Observer    = (*LogObserver)(nil)
	_ EventFilter = (*LogObserver)(nil)
)

// errText returns err's text; an error whose Error method panics (a typed
// nil) is logged as such rather than taking the loop down.
func errText(err error) (s string) {
	defer func() {
		if recover() != nil {
			s = "(the error's Error method panicked)"
		}
	}()
	return err.Error()
}

// provenanceAttrs appends the fields p holds, each under its JSON name
// (fetched_at as RFC 3339 in UTC).
func provenanceAttrs(attrs []slog.Attr, p *evidence.Provenance) []slog.Attr {
	if !p.FetchedAt.IsZero() {
		attrs = append(attrs, slog.String("fetched_at", p.FetchedAt.UTC().Format(time.RFC3339Nano)))
	}
	for _, f := range [...]struct{ key, v string }{
		{"source", p.Source}, {"object_id", p.ObjectID}, {"version", p.Version},
		{"voucher", p.Voucher}, {"idempotency_key", p.IdempotencyKey},
	} {
		if f.v != "" {
			attrs = append(attrs, slog.String(f.key, f.v))
		}
	}
	return attrs
}
