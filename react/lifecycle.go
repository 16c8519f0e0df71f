package react

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
)

// The optional interfaces of an [Observer] that follow runs, model calls
// and tool calls from their start to their end, so that an observer can
// open a span (or a timer, a log scope, …) around each and hand the work
// a context that carries it. An Observer implements any of them in
// addition to its event methods; [New] checks which once, so observers
// that implement none keep working unchanged and cost nothing. Each Start
// method returns the context of the work it starts: ctx itself, or a
// context derived from it. The loop passes that context to the work (the
// model's Generate, the guard chain and the tool) and to the matching End
// method, and ends every start exactly once: after success, failure,
// cancellation, and while a panic of the Model or of a custom
// [Config].Handler unwinds (Err is then [ErrPanicked] and the panic goes
// on after the End method returns). [Observers] combines them: each Start
// method receives the context the previous observer returned, and each
// End method the context the last one returned, so an observer must find
// its own values in the context by its own keys.

// RunObserver is an optional interface of an [Observer] that follows each
// call of [Loop.Run] and [Loop.Resume] that drives a run: Run with a
// valid node, Resume once it claimed its snapshot (a refused snapshot,
// decision or claim starts nothing). OnRunStart is called before anything
// else of the run is reported; the context it returns is the context of
// the whole call: every event of the run, every model and tool call, and
// OnRunEnd, called once when the call returns.
//
// Carry is called when the run stops with a snapshot (suspended or
// interrupted), with the run's context: the strings it returns are kept
// inside the snapshot and handed back in [RunStartEvent].Carried when the
// snapshot is resumed, in this process or another. This is how a tracer
// links a resumed run to the span of the run it resumes. The loop keeps
// at most [MaxCarried] entries, each with a key of 1 to [MaxCarriedKey]
// bytes and a value of at most [MaxCarriedValue] bytes; entries past these
// bounds are dropped (telemetry never fails a run). With several
// observers, the maps are merged in order and a later observer's key
// replaces an earlier one's, so keys should be specific (the W3C names
// traceparent and tracestate are).
type RunObserver interface {
	OnRunStart(ctx context.Context, e RunStartEvent) context.Context
	OnRunEnd(ctx context.Context, e RunEndEvent)
	Carry(ctx context.Context) map[string]string
}

// ModelObserver is an optional interface of an [Observer] that follows
// every model call: OnModelStart before Generate, OnModelEnd after it
// returned, both on the goroutine that runs the loop.
type ModelObserver interface {
	OnModelStart(ctx context.Context, e ModelStartEvent) context.Context
	OnModelEnd(ctx context.Context, e ModelEndEvent)
}

// ToolObserver is an optional interface of an [Observer] that follows
// every tool call the loop processes, built-in and refused ones included:
// OnToolStart before the call is checked and dispatched, OnToolEnd as soon
// as its verdict is known (or the call was interrupted). Unlike the other
// events, the calls of a batch of parallel reads (Node.ParallelReads) are
// started and ended on the goroutines that run them, concurrently; their
// OnToolInvoked events still come later, in call order. A call answered by
// the user's decision on resume (approval, follow-up) is not started
// again: its OnToolEnd came when it suspended.
type ToolObserver interface {
	OnToolStart(ctx context.Context, e ToolStartEvent) context.Context
	OnToolEnd(ctx context.Context, e ToolEndEvent)
}

// The bounds of what observers may carry in a snapshot; see
// [RunObserver].
const (
	MaxCarried      = 16
	MaxCarriedKey   = 64
	MaxCarriedValue = 1024
)

// ErrPanicked is the Err of an End event reported while a panic of the
// Model or of a custom handler unwinds through the loop. The loop does not
// recover the panic: it ends what it started and lets it go on.
var ErrPanicked = errors.New("react: panic")

// RunStartEvent describes a run that Run or Resume starts driving.
type RunStartEvent struct {
	NodeEvent
	// Round is the number of model turns the run had already taken: 0 for
	// Run, the snapshot's count for Resume.
	Round int
	// Resumed reports a call of Resume (or ResumeRun).
	Resumed bool
	// Decision is the kind of decision a resume applies (approve,
	// decline, answer, continue); "" for Run.
	Decision string
	// DecidedBy is who made it ([Decision.DecidedBy]); "" when the host did
	// not say. It names a person: keep it out of metric attributes.
	DecidedBy string
	// Model names the loop's model ([Describer]).
	Model ModelInfo
	// Carried is what the observers' Carry returned when the resumed
	// snapshot was taken; nil for Run and when nothing was carried. It is
	// shared by every observer: read it, do not change it.
	Carried map[string]string
}

// RunEndEvent describes how a call of Run or Resume ended.
type RunEndEvent struct {
	RoundEvent
	// Status is the run's status: Finished, Failed, Suspended or
	// Interrupted. It is Interrupted when the call unwinds from a panic.
	// When Resume could not apply the decision (the snapshot stays valid
	// and is returned again), it is the snapshot's status.
	Status Status
	// Failure is set when Status is Failed.
	Failure *Failure
	// Suspension is set when Status is Suspended.
	Suspension *Suspension
	// Stalls is the no-progress counter.
	Stalls int
	// Outputs is the number of outputs set.
	Outputs int
	// Goal is the run's goal status judged from its completion conditions
	// (met, unverified or unmet once it finished or failed; none while it
	// is suspended or interrupted; see [GoalStatus]).
	Goal GoalStatus
	// Err is the error Run or Resume returns (an interruption, a store
	// failure, a decision that could not be applied), or [ErrPanicked].
	Err error
}

// ModelStartEvent describes a model call about to be made.
type ModelStartEvent struct {
	// Round is the round the model's answer will open.
	RoundEvent
	// Model names the loop's model ([Describer]).
	Model ModelInfo
	// Request is what the model receives. It is the loop's: read it
	// during the call only, do not change or keep it.
	Request Request
}

// ModelEndEvent describes a model call that returned.
type ModelEndEvent struct {
	ModelStartEvent
	// Response is the model's answer; zero when Err is set. Read it, do
	// not change it: the loop keeps its tool calls.
	Response Response
	// Err is the model's error, or [ErrPanicked].
	Err error
	// Duration is the time Generate took, measured with Config.Now.
	Duration time.Duration
}

// ToolStartEvent describes a tool call about to be checked and dispatched.
type ToolStartEvent struct {
	RoundEvent
	// CallID and Tool identify the call as the loop records it (a
	// missing or repeated id has already been replaced).
	CallID string
	Tool   string
	// Builtin reports a call that runs as a built-in control tool.
	Builtin bool
	// Args are the arguments exactly as the model sent them (maybe not
	// JSON). They are the loop's: read them during the call only.
	Args json.RawMessage
}

// ToolEndEvent describes a tool call whose verdict is known, or that was
// interrupted.
type ToolEndEvent struct {
	// ToolEvent is the event [Observer].OnToolInvoked receives for the
	// call, with one difference: a result that counts as new evidence or
	// as a repeat of earlier evidence has Layers.Business BusinessNone,
	// since that is judged in call order, when OnToolInvoked comes. When
	// Err is set only the call's identity is filled (Outcome and Code are
	// 0).
	ToolEvent
	// Observation is the call's observation, as the guards and the tool
	// produced it; zero when Err is set.
	Observation observation.Observation
	// Suspends is the kind of suspension the call requests (a built-in
	// approval or follow-up the loop accepted); 0 otherwise.
	Suspends SuspensionKind
	// Err is why the call has no verdict: the context was cancelled, a
	// store or the chain failed (the run is interrupted and the call is
	// dispatched again on resume), or [ErrPanicked].
	Err error
}

// observers are the optional interfaces of a loop's observer, nil when it
// implements none.
type observers struct {
	run   RunObserver
	model ModelObserver
	tool  ToolObserver
}

// optionalObservers returns the optional interfaces o implements. A
// combination of [Observers] implements one only when a member does.
func optionalObservers(o Observer) observers {
	if m, ok := o.(*multiLife); ok {
		var obs observers
		if len(m.runs) > 0 {
			obs.run = m
		}
		if len(m.models) > 0 {
			obs.model = m
		}
		if len(m.tools) > 0 {
			obs.tool = m
		}
		return obs
	}
	var obs observers
	obs.run, _ = o.(RunObserver)
	obs.model, _ = o.(ModelObserver)
	obs.tool, _ = o.(ToolObserver)
	return obs
}

// describe returns what m says about itself.
func describe(m Model) ModelInfo {
	if d, ok := m.(Describer); ok {
		return d.Describe()
	}
	return ModelInfo{}
}

// beginRun reports the start of a call of Run (d nil) or Resume and
// returns its context.
func (r *run) beginRun(ctx context.Context, d *Decision, carried map[string]string) context.Context {
	ro := r.l.obs.run
	if ro == nil {
		return ctx
	}
	if len(carried) == 0 {
		carried = nil
	}
	e := RunStartEvent{
		NodeEvent: NodeEvent{Run: r.id, Node: r.node.Name},
		Round:     r.round, Resumed: d != nil, Model: r.l.info, Carried: carried,
	}
	if d != nil {
		e.Decision, e.DecidedBy = d.kind.String(), d.by
	}
	return ro.OnRunStart(ctx, e)
}

// endRun reports the end of a call of Run or Resume; it must be deferred
// directly, so that it sees a panic unwinding (which it lets go on after
// reporting it).
func (r *run) endRun(ctx context.Context, err *error) {
	ro := r.l.obs.run
	if ro == nil {
		return
	}
	e := RunEndEvent{
		RoundEvent: r.roundEvent(), Status: r.status, Failure: r.failure,
		Stalls: r.stalls, Outputs: len(r.outputs), Goal: r.goal(), Err: *err,
	}
	if r.susp != nil {
		s := *r.susp
		e.Suspension = &s
	}
	if p := recover(); p != nil {
		e.Status, e.Err = Interrupted, ErrPanicked
		ro.OnRunEnd(ctx, e)
		panic(p)
	}
	if e.Status == 0 { // the resume of an interrupted run failed before it went on
		e.Status = Interrupted
	}
	ro.OnRunEnd(ctx, e)
}

// carry returns what the run observers keep in the run's snapshot, within
// the bounds of MaxCarried*; nil when there is nothing.
func (r *run) carry(ctx context.Context) map[string]string {
	ro := r.l.obs.run
	if ro == nil {
		return nil
	}
	return boundCarried(ro.Carry(ctx))
}

// boundCarried returns the entries of m within the bounds, the smallest
// keys first when there are too many; nil when none is left.
func boundCarried(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if !carriable(k, v) {
			continue
		}
		if out == nil {
			out = make(map[string]string, min(len(m), MaxCarried))
		}
		out[k] = v
	}
	for len(out) > MaxCarried {
		var largest string
		for k := range out {
			if k > largest {
				largest = k
			}
		}
		delete(out, largest)
	}
	return out
}

func carriable(k, v string) bool {
	return k != "" && len(k) <= MaxCarriedKey && len(v) <= MaxCarriedValue
}

// generate asks the model for the next turn, reporting the call to the
// model observer.
func (r *run) generate(ctx context.Context, req Request) (Response, error) {
	mo := r.l.obs.model
	if mo == nil {
		return r.l.model.Generate(ctx, req)
	}
	e := ModelStartEvent{RoundEvent: r.roundEvent(), Model: r.l.info, Request: req}
	e.Round++
	mctx := mo.OnModelStart(ctx, e)
	start := r.l.now()
	returned := false
	defer func() {
		if !returned {
			mo.OnModelEnd(mctx, ModelEndEvent{ModelStartEvent: e, Err: ErrPanicked, Duration: r.l.now().Sub(start)})
		}
	}()
	resp, err := r.l.model.Generate(mctx, req)
	returned = true
	end := ModelEndEvent{ModelStartEvent: e, Err: err, Duration: r.l.now().Sub(start)}
	if err == nil {
		end.Response = resp
	}
	mo.OnModelEnd(mctx, end)
	return resp, err
}

// dispatch produces the observation of call i of the wave into out (see
// call), reporting the call to the tool observer.
func (r *run) dispatch(ctx context.Context, c ToolCall, i int, out *callResult) error {
	to := r.l.obs.tool
	if to == nil {
		return r.call(ctx, c, i, out)
	}
	_, bad := r.wave.invalid[i]
	builtin := !bad && r.runsBuiltin(c.Name)
	tctx := to.OnToolStart(ctx, ToolStartEvent{RoundEvent: r.roundEvent(), CallID: c.ID, Tool: c.Name, Builtin: builtin, Args: c.Args})
	returned := false
	defer func() {
		if !returned {
			to.OnToolEnd(tctx, ToolEndEvent{
				ToolEvent: ToolEvent{RoundEvent: r.roundEvent(), CallID: c.ID, Tool: c.Name, Builtin: builtin, Position: i},
				Err:       ErrPanicked,
			})
		}
	}()
	err := r.call(tctx, c, i, out)
	returned = true
	e := ToolEndEvent{Err: err}
	if err != nil {
		e.ToolEvent = ToolEvent{RoundEvent: r.roundEvent(), CallID: c.ID, Tool: c.Name, Builtin: builtin, Position: i}
	} else {
		e.ToolEvent = r.toolEvent(c, i, out.obs, out.dur, r.account(c, i, out, false))
		e.Observation = out.obs
		if out.eff != nil && out.eff.kind == effectSuspend && out.obs.Outcome() == outcome.Success {
			e.Suspends = out.eff.suspension.Kind
		}
	}
	to.OnToolEnd(tctx, e)
	return err
}
