package react

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
)

// The bounds of what observers may carry in a snapshot; see [Carrier].
const (
	MaxCarried      = 16
	MaxCarriedKey   = 64
	MaxCarriedValue = 1024
)

// ErrPanicked is the Err of an End event reported while a panic of the
// Model or of a custom handler unwinds through the loop. The loop does not
// recover the panic: it ends what it started and lets it go on.
var ErrPanicked = errors.New("react: panic")

// RunStartEvent details [EventRunStart]: a run that Run or Resume (or
// their streaming forms) starts driving: Run with a valid node, Resume
// once it claimed its snapshot (a refused snapshot, decision or claim
// starts nothing).
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
	// Thread and Turn are the thread whose message the run answers and
	// the message's turn in it ([InThread]); "" and 0 outside a thread.
	Thread string
	Turn   int
}

// RunEndEvent details [EventRunEnd]: how a call of Run or Resume ended.
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
	// Result is what Run or Resume returns with Err; nil while a panic
	// unwinds. A host that streams the run reads it here.
	Result *Result
}

// ModelStartEvent details [EventModelStart]: a model call about to be
// made.
type ModelStartEvent struct {
	// Round is the round the model's answer will open.
	RoundEvent
	// Model names the loop's model ([Describer]).
	Model ModelInfo
	// Request is what the model receives. It is the loop's: read it
	// during the call only, do not change or keep it.
	Request Request
}

// ModelEndEvent details [EventModelEnd]: a model call that returned.
type ModelEndEvent struct {
	ModelStartEvent
	// Response is the model's answer; zero when Err is set. Read it, do
	// not change it: the loop keeps its tool calls.
	Response Response
	// Err is the model's error, or [ErrPanicked].
	Err error
	// Duration is the time the model call took, measured with
	// Config.Now.
	Duration time.Duration
	// Streamed reports a call made through [StreamModel].
	Streamed bool
	// FirstChunk is the time from the call's start to its first chunk,
	// measured with Config.Now: the time to the first token of a
	// streamed answer. 0 when the call was not streamed or no chunk came.
	FirstChunk time.Duration
}

// ToolStartEvent details [EventToolStart]: a tool call about to be checked
// and dispatched. A call answered by the user's decision on resume
// (approval, follow-up) is not started again: its EventToolEnd came when
// it suspended.
type ToolStartEvent struct {
	RoundEvent
	// CallID and Tool identify the call as the loop records it (a
	// missing or repeated id has already been replaced).
	CallID string
	Tool   string
	// Builtin reports a call that runs as a built-in control tool.
	Builtin bool
	// Description is the description the model was given of the tool
	// (telemetry's gen_ai.tool.description); "" for a malformed call or a
	// tool the node does not offer.
	Description string
	// Args are the arguments exactly as the model sent them (maybe not
	// JSON). They are the loop's: read them during the call only.
	Args json.RawMessage
}

// ToolEndEvent details [EventToolEnd]: a tool call whose verdict is
// known, or that was interrupted.
type ToolEndEvent struct {
	// ToolEvent is what [EventToolInvoked] reports for the call, with one difference: a result that counts as new evidence or
	// as a repeat of earlier evidence has Layers.Business BusinessNone,
	// since that is judged in call order, when EventToolInvoked comes. When
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
	if !r.hears(EventRunStart) {
		return ctx
	}
	if len(carried) == 0 {
		carried = nil
	}
	e := &RunStartEvent{
		NodeEvent: NodeEvent{Run: r.id, Node: r.node.Name},
		Round:     r.round, Resumed: d != nil, Model: r.l.info, Carried: carried,
	}
	if d != nil {
		e.Decision, e.DecidedBy = d.kind.String(), d.by
	}
	if t := r.thread; t != nil {
		e.Thread, e.Turn = t.id, t.turn
	}
	return r.emit(ctx, Event{Kind: EventRunStart, RoundEvent: RoundEvent{NodeEvent: e.NodeEvent, Round: r.round}, RunStart: e})
}

// endRun reports the end of a call of Run or Resume; it must be deferred
// directly, so that it sees a panic unwinding (which it lets go on after
// reporting it).
func (r *run) endRun(ctx context.Context, res *Result, err *error) {
	if !r.hears(EventRunEnd) {
		return
	}
	e := &RunEndEvent{
		RoundEvent: r.roundEvent(), Status: r.status, Failure: r.failure,
		Stalls: r.stalls, Outputs: len(r.outputs), Goal: r.goal(), Err: *err,
	}
	if r.susp != nil {
		s := *r.susp
		e.Suspension = &s
	}
	if p := recover(); p != nil {
		e.Status, e.Err = Interrupted, ErrPanicked
		r.emit(ctx, Event{Kind: EventRunEnd, RoundEvent: e.RoundEvent, RunEnd: e})
		panic(p)
	}
	if e.Status == 0 { // the resume of an interrupted run failed before it went on
		e.Status = Interrupted
	}
	out := *res
	e.Result = &out
	r.emit(ctx, Event{Kind: EventRunEnd, RoundEvent: e.RoundEvent, RunEnd: e})
}

// carry returns what the observers keep in the run's snapshot, within the
// bounds of MaxCarried*; nil when there is nothing.
func (r *run) carry(ctx context.Context) map[string]string {
	c := r.l.carrier
	if c == nil {
		return nil
	}
	return boundCarried(c.Carry(ctx))
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

// generate asks the model for the next turn (see ask), reporting the call
// as EventModelStart and EventModelEnd.
func (r *run) generate(ctx context.Context, req Request) (Response, error) {
	if !r.hears(EventModelStart) && !r.hears(EventModelEnd) {
		resp, _, _, err := r.ask(ctx, req, time.Time{})
		return resp, err
	}
	e := &ModelStartEvent{RoundEvent: r.roundEvent(), Model: r.l.info, Request: req}
	e.Round++
	mctx := r.emit(ctx, Event{Kind: EventModelStart, RoundEvent: e.RoundEvent, ModelStart: e})
	start := r.l.now()
	returned := false
	defer func() {
		if !returned {
			end := &ModelEndEvent{ModelStartEvent: *e, Err: ErrPanicked, Duration: r.l.now().Sub(start)}
			r.emit(mctx, Event{Kind: EventModelEnd, RoundEvent: e.RoundEvent, ModelEnd: end})
		}
	}()
	resp, first, streamed, err := r.ask(mctx, req, start)
	returned = true
	end := &ModelEndEvent{ModelStartEvent: *e, Err: err, Duration: r.l.now().Sub(start), Streamed: streamed, FirstChunk: first}
	if err == nil {
		end.Response = resp
	}
	r.emit(mctx, Event{Kind: EventModelEnd, RoundEvent: e.RoundEvent, ModelEnd: end})
	return resp, err
}

// dispatch produces the observation of call i of the wave into out (see
// call), reporting the call as EventToolStart and EventToolEnd.
func (r *run) dispatch(ctx context.Context, c ToolCall, i int, out *callResult, batched bool) error {
	if !r.hears(EventToolStart) && !r.hears(EventToolEnd) {
		return r.call(ctx, c, i, out)
	}
	emit := r.emit
	if batched && r.sink != nil {
		// Concurrent with the other calls of the batch: the observer
		// hears the events here, the stream once the batch returned.
		emit = func(ctx context.Context, e Event) context.Context {
			out.streamed = append(out.streamed, e)
			return r.observe(ctx, e)
		}
	}
	_, bad := r.wave.invalid[i]
	builtin := !bad && r.runsBuiltin(c.Name)
	re := r.roundEvent()
	tctx := emit(ctx, Event{Kind: EventToolStart, RoundEvent: re, ToolStart: &ToolStartEvent{RoundEvent: re, CallID: c.ID, Tool: c.Name, Builtin: builtin, Description: r.description(c.Name, bad), Args: c.Args}})
	returned := false
	defer func() {
		if !returned {
			emit(tctx, Event{Kind: EventToolEnd, RoundEvent: re, ToolEnd: &ToolEndEvent{
				ToolEvent: ToolEvent{RoundEvent: re, CallID: c.ID, Tool: c.Name, Builtin: builtin, Position: i},
				Err:       ErrPanicked,
			}})
		}
	}()
	err := r.call(tctx, c, i, out)
	returned = true
	e := &ToolEndEvent{Err: err}
	if err != nil {
		e.ToolEvent = ToolEvent{RoundEvent: re, CallID: c.ID, Tool: c.Name, Builtin: builtin, Position: i}
	} else {
		e.ToolEvent = r.toolEvent(c, i, out.obs, out.dur, r.account(c, i, out, false))
		e.Observation = out.obs
		if out.eff != nil && out.eff.kind == effectSuspend && out.obs.Outcome() == outcome.Success {
			e.Suspends = out.eff.suspension.Kind
		}
	}
	emit(tctx, Event{Kind: EventToolEnd, RoundEvent: re, ToolEnd: e})
	return err
}

// emit reports e to the run's observer when it wants e's kind, then to
// the host's stream, and returns the context of what e starts (ctx for
// other kinds).
func (r *run) emit(ctx context.Context, e Event) context.Context {
	ctx = r.observe(ctx, e)
	if r.sink != nil {
		r.sink.put(e)
	}
	return ctx
}

// observe reports e to the run's observer, when it wants e's kind.
func (r *run) observe(ctx context.Context, e Event) context.Context {
	if !r.wants.Has(e.Kind) {
		return ctx
	}
	if c := r.observer.Observe(ctx, e); e.Kind.starts() && c != nil {
		return c
	}
	return ctx
}

// hears reports whether an event of kind k is read by anyone, so that the
// loop builds only the events somebody reads.
func (r *run) hears(k EventKind) bool { return r.sink != nil || r.wants.Has(k) }

// description is the description of the tool name as the model was given
// it: the visible catalog tool's, or the built-in's spec; "" for a
// malformed call (bad) or a tool the node does not offer.
func (r *run) description(name string, bad bool) string {
	if bad {
		return ""
	}
	if t, ok := r.visible[name]; ok {
		return t.Description
	}
	if !isBuiltin(name) {
		return ""
	}
	for i := len(r.specs) - 1; i >= 0; i-- { // the built-ins come last
		if r.specs[i].Name == name {
			return r.specs[i].Description
		}
	}
	return ""
}
