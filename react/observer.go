package react

import (
	"context"
	"log/slog"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
)

// Observer receives the events of a run, synchronously, on the goroutine
// that runs the loop (parallel reads are reported in call order after they
// all returned). Methods must not block for long and must be safe for
// concurrent use when one observer serves several runs at once. Embed
// [NopObserver] to implement only some methods.
type Observer interface {
	// OnNodeStarted reports that [Loop.Run] started a run (not Resume).
	OnNodeStarted(ctx context.Context, e NodeEvent)
	// OnToolInvoked reports the observation of one tool call, built-in
	// calls included.
	OnToolInvoked(ctx context.Context, e ToolEvent)
	// OnToolSkipped reports a call that was not run, or whose result was
	// discarded, because an earlier call of its turn did not succeed
	// (REASON_SKIPPED) or exited the node: finish, fail, or a suspension
	// that was decided (REASON_SKIPPED_EXITED).
	OnToolSkipped(ctx context.Context, e ToolEvent)
	// OnNoToolCalls reports a model turn without a tool call.
	OnNoToolCalls(ctx context.Context, e RoundEvent)
	// OnStall reports one no-progress counted.
	OnStall(ctx context.Context, e StallEvent)
	// OnStallReset reports the no-progress counter going back to 0 after a
	// SUCCESS (only when it was above 0).
	OnStallReset(ctx context.Context, e StallEvent)
	// OnSuspended reports a run suspending for approval or a follow-up.
	OnSuspended(ctx context.Context, e SuspendEvent)
	// OnFinished reports a run that finished.
	OnFinished(ctx context.Context, e EndEvent)
	// OnFailed reports a run that failed.
	OnFailed(ctx context.Context, e EndEvent)
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
	// Layers is the call's three-layer account (seed 003): call,
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

// NopObserver implements [Observer] with methods that do nothing; embed it
// to implement only some of them.
type NopObserver struct{}

// OnNodeStarted does nothing.
func (NopObserver) OnNodeStarted(context.Context, NodeEvent) {}

// OnToolInvoked does nothing.
func (NopObserver) OnToolInvoked(context.Context, ToolEvent) {}

// OnToolSkipped does nothing.
func (NopObserver) OnToolSkipped(context.Context, ToolEvent) {}

// OnNoToolCalls does nothing.
func (NopObserver) OnNoToolCalls(context.Context, RoundEvent) {}

// OnStall does nothing.
func (NopObserver) OnStall(context.Context, StallEvent) {}

// OnStallReset does nothing.
func (NopObserver) OnStallReset(context.Context, StallEvent) {}

// OnSuspended does nothing.
func (NopObserver) OnSuspended(context.Context, SuspendEvent) {}

// OnFinished does nothing.
func (NopObserver) OnFinished(context.Context, EndEvent) {}

// OnFailed does nothing.
func (NopObserver) OnFailed(context.Context, EndEvent) {}

var _ Observer = NopObserver{}

// Observers returns an observer that passes every event to each of obs in
// order. Nil entries are skipped; a single observer is returned as is. The
// result implements the optional [RunObserver], [ModelObserver] and
// [ToolObserver] for the members that implement them (see their doc for
// how contexts and carried entries are combined).
func Observers(obs ...Observer) Observer {
	var m multi
	for _, o := range obs {
		if o != nil {
			m = append(m, o)
		}
	}
	if len(m) == 1 {
		return m[0]
	}
	l := &multiLife{multi: m}
	for _, o := range m {
		opt := optionalObservers(o)
		if opt.run != nil {
			l.runs = append(l.runs, opt.run)
		}
		if opt.model != nil {
			l.models = append(l.models, opt.model)
		}
		if opt.tool != nil {
			l.tools = append(l.tools, opt.tool)
		}
	}
	if len(l.runs)+len(l.models)+len(l.tools) == 0 {
		return m
	}
	return l
}

type multi []Observer

// OnNodeStarted passes the event to every observer.
func (m multi) OnNodeStarted(ctx context.Context, e NodeEvent) {
	for _, o := range m {
		o.OnNodeStarted(ctx, e)
	}
}

// OnToolInvoked passes the event to every observer.
func (m multi) OnToolInvoked(ctx context.Context, e ToolEvent) {
	for _, o := range m {
		o.OnToolInvoked(ctx, e)
	}
}

// OnToolSkipped passes the event to every observer.
func (m multi) OnToolSkipped(ctx context.Context, e ToolEvent) {
	for _, o := range m {
		o.OnToolSkipped(ctx, e)
	}
}

// OnNoToolCalls passes the event to every observer.
func (m multi) OnNoToolCalls(ctx context.Context, e RoundEvent) {
	for _, o := range m {
		o.OnNoToolCalls(ctx, e)
	}
}

// OnStall passes the event to every observer.
func (m multi) OnStall(ctx context.Context, e StallEvent) {
	for _, o := range m {
		o.OnStall(ctx, e)
	}
}

// OnStallReset passes the event to every observer.
func (m multi) OnStallReset(ctx context.Context, e StallEvent) {
	for _, o := range m {
		o.OnStallReset(ctx, e)
	}
}

// OnSuspended passes the event to every observer.
func (m multi) OnSuspended(ctx context.Context, e SuspendEvent) {
	for _, o := range m {
		o.OnSuspended(ctx, e)
	}
}

// OnFinished passes the event to every observer.
func (m multi) OnFinished(ctx context.Context, e EndEvent) {
	for _, o := range m {
		o.OnFinished(ctx, e)
	}
}

// OnFailed passes the event to every observer.
func (m multi) OnFailed(ctx context.Context, e EndEvent) {
	for _, o := range m {
		o.OnFailed(ctx, e)
	}
}

// multiLife is a [multi] some of whose members implement optional
// observer interfaces.
type multiLife struct {
	multi
	runs   []RunObserver
	models []ModelObserver
	tools  []ToolObserver
}

// OnRunStart passes the event to every run observer, each receiving the
// context the previous one returned.
func (m *multiLife) OnRunStart(ctx context.Context, e RunStartEvent) context.Context {
	for _, o := range m.runs {
		ctx = o.OnRunStart(ctx, e)
	}
	return ctx
}

// OnRunEnd passes the event to every run observer, the last one first.
func (m *multiLife) OnRunEnd(ctx context.Context, e RunEndEvent) {
	for i := len(m.runs) - 1; i >= 0; i-- {
		m.runs[i].OnRunEnd(ctx, e)
	}
}

// Carry merges what every run observer carries, in order.
func (m *multiLife) Carry(ctx context.Context) map[string]string {
	var out map[string]string
	for _, o := range m.runs {
		for k, v := range o.Carry(ctx) {
			if out == nil {
				out = make(map[string]string)
			}
			out[k] = v
		}
	}
	return out
}

// OnModelStart passes the event to every model observer, each receiving
// the context the previous one returned.
func (m *multiLife) OnModelStart(ctx context.Context, e ModelStartEvent) context.Context {
	for _, o := range m.models {
		ctx = o.OnModelStart(ctx, e)
	}
	return ctx
}

// OnModelEnd passes the event to every model observer, the last one
// first.
func (m *multiLife) OnModelEnd(ctx context.Context, e ModelEndEvent) {
	for i := len(m.models) - 1; i >= 0; i-- {
		m.models[i].OnModelEnd(ctx, e)
	}
}

// OnToolStart passes the event to every tool observer, each receiving the
// context the previous one returned.
func (m *multiLife) OnToolStart(ctx context.Context, e ToolStartEvent) context.Context {
	for _, o := range m.tools {
		ctx = o.OnToolStart(ctx, e)
	}
	return ctx
}

// OnToolEnd passes the event to every tool observer, the last one first.
func (m *multiLife) OnToolEnd(ctx context.Context, e ToolEndEvent) {
	for i := len(m.tools) - 1; i >= 0; i-- {
		m.tools[i].OnToolEnd(ctx, e)
	}
}

var (
	_ RunObserver   = (*multiLife)(nil)
	_ ModelObserver = (*multiLife)(nil)
	_ ToolObserver  = (*multiLife)(nil)
)

// LogObserver is the default [Observer]: it writes every event to a
// [slog.Logger] with a stable message and attributes:
//
//	TOOL invoked   outcome=… code=… tool=… duration=… call_id=… call_status=… exec_status=… business_status=… [attempts=… first_outcome=… first_code=…] [schema=…] [error=…]
//	               (WARN when FAILED, INFO otherwise)
//	TOOL skipped   tool=… call_id=…                                        (INFO)
//	REACT node_started                                                     (INFO)
//	REACT resumed  decision=… [by=…]                                      (INFO)
//	REACT no_tool_calls                                                    (INFO)
//	REACT stall    count=… limit=… reason=…                                (INFO)
//	REACT stall_reset                                                      (INFO)
//	REACT suspended kind=… call_id=… tool=…|question=…                      (INFO)
//	REACT finished  outputs=… goal=…                                       (INFO)
//	REACT failed    cause=… reason=… goal=…                                (WARN)
//
// Every record also carries run, node and round. code is omitted for
// SUCCESS; attempts, first_outcome and first_code only for a call that ran
// more than once (the first attempt's verdict, seed 003: a recovery never
// hides the first failure); schema (the [ToolEvent].SchemaVersion) only for
// catalog tools; error (the [ToolEvent].Err: the raw error the model never
// sees, so keep the log where secrets may be) only when there is one. Build
// it with [NewLogObserver].
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

// OnNodeStarted implements [Observer].
func (l *LogObserver) OnNodeStarted(ctx context.Context, e NodeEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT node_started", slog.String("run", e.Run), slog.String("node", e.Node))
}

// OnRunStart implements [RunObserver]: it logs "REACT resumed" with the
// decision and who made it for a call of Resume; Run is logged by
// OnNodeStarted.
func (l *LogObserver) OnRunStart(ctx context.Context, e RunStartEvent) context.Context {
	if !e.Resumed {
		return ctx
	}
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return ctx
	}
	attrs := []slog.Attr{slog.String("decision", e.Decision)}
	if e.DecidedBy != "" {
		attrs = append(attrs, slog.String("by", e.DecidedBy))
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT resumed", roundAttrs(RoundEvent{NodeEvent: e.NodeEvent, Round: e.Round}, attrs...)...)
	return ctx
}

// OnRunEnd implements [RunObserver]; the end of a run is logged by
// OnFinished, OnFailed and OnSuspended.
func (l *LogObserver) OnRunEnd(context.Context, RunEndEvent) {}

// Carry implements [RunObserver]; the log carries nothing.
func (l *LogObserver) Carry(context.Context) map[string]string { return nil }

var _ RunObserver = (*LogObserver)(nil)

// OnToolInvoked implements [Observer].
func (l *LogObserver) OnToolInvoked(ctx context.Context, e ToolEvent) {
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
	if e.Err != nil {
		attrs = append(attrs, slog.String("error", errText(e.Err)))
	}
	lg.LogAttrs(ctx, level, "TOOL invoked", roundAttrs(e.RoundEvent, attrs...)...)
}

// OnToolSkipped implements [Observer].
func (l *LogObserver) OnToolSkipped(ctx context.Context, e ToolEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "TOOL skipped",
		roundAttrs(e.RoundEvent, slog.String("tool", e.Tool), slog.String("call_id", e.CallID))...)
}

// OnNoToolCalls implements [Observer].
func (l *LogObserver) OnNoToolCalls(ctx context.Context, e RoundEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT no_tool_calls", roundAttrs(e)...)
}

// OnStall implements [Observer].
func (l *LogObserver) OnStall(ctx context.Context, e StallEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT stall", roundAttrs(e.RoundEvent,
		slog.Int("count", e.Count), slog.Int("limit", e.Limit), slog.String("reason", e.Reason), slog.String("call_id", e.CallID))...)
}

// OnStallReset implements [Observer].
func (l *LogObserver) OnStallReset(ctx context.Context, e StallEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT stall_reset", roundAttrs(e.RoundEvent, slog.String("call_id", e.CallID))...)
}

// OnSuspended implements [Observer].
func (l *LogObserver) OnSuspended(ctx context.Context, e SuspendEvent) {
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

// OnFinished implements [Observer].
func (l *LogObserver) OnFinished(ctx context.Context, e EndEvent) {
	lg, on := l.enabled(ctx, slog.LevelInfo)
	if !on {
		return
	}
	lg.LogAttrs(ctx, slog.LevelInfo, "REACT finished", roundAttrs(e.RoundEvent, slog.Int("outputs", e.Outputs), slog.String("goal", e.Goal.String()))...)
}

// OnFailed implements [Observer].
func (l *LogObserver) OnFailed(ctx context.Context, e EndEvent) {
	lg, on := l.enabled(ctx, slog.LevelWarn)
	if !on {
		return
	}
	attrs := []slog.Attr{}
	if e.Failure != nil {
		attrs = append(attrs, slog.String("cause", e.Failure.Kind.String()), slog.String("reason", e.Failure.Reason))
	}
	attrs = append(attrs, slog.String("goal", e.Goal.String()))
	lg.LogAttrs(ctx, slog.LevelWarn, "REACT failed", roundAttrs(e.RoundEvent, attrs...)...)
}

var _ Observer = (*LogObserver)(nil)

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
