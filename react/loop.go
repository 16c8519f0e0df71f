package react

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// DefaultMaxResultBytes is the size above which a tool result is cut down
// for the model when [Config].MaxResultBytes is 0.
const DefaultMaxResultBytes = 32 << 10

// Config configures a [Loop]. The zero value means defaults for every
// field but Model, which is required. New copies the config; changing it
// afterwards has no effect.
type Config struct {
	// Model is the LLM client. Required.
	Model Model
	// Tools is the catalog the nodes' visible tools come from; nil means
	// an empty catalog (only the built-in tools).
	Tools *tool.Catalog
	// Lang selects the prompt catalog of every text the model sees; 0 means
	// English.
	Lang prompt.Lang
	// Guards configures the default guard chain and holds the stores the
	// loop shares with it: the evidence ledger (builtin_output_set checks
	// sources against it), the approvals (builtin_node_approval reads the
	// gated call, Resume approves through it) and the write ledger. Nil
	// means the zero guard.Options. New fills nil stores with in-memory
	// ones and stores them back into *Guards, as guard.Default does, so
	// that a second Loop (resuming in the same process) can share them;
	// Guards.Catalog nil means the loop's language.
	Guards *guard.Options
	// Handler runs the calls of catalog tools. Nil means the default chain:
	// invoker.Chain(invoker.New(…), guard.Default(Guards)...). A custom
	// handler replaces the whole chain, guards included; the loop still
	// reads the stores of Guards, so a custom chain that gates writes must
	// use the same Approvals. The built-in tools always run through the
	// default invoker, without guards.
	Handler invoker.Handler
	// Observer receives the events of every run; nil means a
	// [LogObserver] writing to Logger. To keep the log and add metrics,
	// pass Observers(NewLogObserver(logger), metrics).
	Observer Observer
	// Logger is the logger of the default observer and of the default
	// invoker; nil means [slog.Default].
	Logger *slog.Logger
	// MaxResultBytes bounds the JSON of a successful result shown to the
	// model; a longer one is cut and ends with RESULT_TRUNCATED naming the
	// call id under which the full payload is recorded. 0 means
	// [DefaultMaxResultBytes]; a negative value means no bound.
	MaxResultBytes int
	// NewRunID returns the id of a new run; nil means a random UUID. It
	// must return a non-empty id that is unique among the runs sharing the
	// stores.
	NewRunID func() string
	// Now is the clock of durations in events; nil means time.Now. It must
	// be safe for concurrent use when nodes run reads in parallel.
	Now func() time.Time
	// KeepRunState keeps a run's evidence and approvals in the stores after
	// the run finished or failed. By default the loop calls Forget(run) on
	// every store of Guards that has such a method (the in-memory stores
	// do) once a run has ended for good, so a long-running service does not
	// keep every run's state; a suspended or interrupted run is never
	// forgotten, since it will be resumed. The write ledger is never
	// forgotten: it is what keeps a write from running twice.
	KeepRunState bool
}

// Loop runs nodes. It holds no state of its own between runs: every run's
// state lives in the run and, when it stops early, in its snapshot, so a
// Loop is safe for concurrent use by any number of runs, and a snapshot
// can be resumed by any Loop built with equivalent configuration (another
// process included).
type Loop struct {
	model     Model
	catalog   *tool.Catalog
	cat       *prompt.Catalog
	handler   invoker.Handler
	builtins  invoker.Handler
	approvals guard.Approvals
	ledger    evidence.Ledger
	observer  Observer
	maxResult int
	newID     func() string
	now       func() time.Time
	keepState bool
	schemas   sync.Map // *tool.Tool → schemaEntry
}

// forgetter is implemented by stores that can drop a run's state.
type forgetter interface{ Forget(run string) }

// forget drops the state of a run that ended for good, unless the
// configuration keeps it.
func (l *Loop) forget(run string) {
	if l.keepState {
		return
	}
	if f, ok := l.ledger.(forgetter); ok {
		f.Forget(run)
	}
	if f, ok := l.approvals.(forgetter); ok {
		f.Forget(run)
	}
}

// ErrNoModel is returned by [New] when [Config].Model is nil.
var ErrNoModel = errors.New("react: Config.Model is required")

// New returns a loop for cfg, or [ErrNoModel].
func New(cfg Config) (*Loop, error) {
	if cfg.Model == nil {
		return nil, ErrNoModel
	}
	l := &Loop{
		model:     cfg.Model,
		catalog:   cfg.Tools,
		cat:       prompt.For(cfg.Lang),
		handler:   cfg.Handler,
		observer:  cfg.Observer,
		maxResult: cfg.MaxResultBytes,
		newID:     cfg.NewRunID,
		keepState: cfg.KeepRunState,
		now:       cfg.Now,
	}
	if l.catalog == nil {
		l.catalog = &tool.Catalog{}
	}
	if l.observer == nil {
		l.observer = NewLogObserver(cfg.Logger)
	}
	if l.maxResult == 0 {
		l.maxResult = DefaultMaxResultBytes
	}
	if l.newID == nil {
		l.newID = uuid.NewString
	}
	if l.now == nil {
		l.now = time.Now
	}
	gopts := cfg.Guards
	if gopts == nil {
		gopts = &guard.Options{}
	}
	g := *gopts
	if g.Catalog == nil {
		g.Catalog = l.cat
	}
	interceptors := guard.Default(&g)
	gopts.Ledger, gopts.Approvals, gopts.WriteLedger = g.Ledger, g.Approvals, g.WriteLedger
	l.approvals, l.ledger = g.Approvals, g.Ledger
	l.builtins = invoker.New(&invoker.Options{Catalog: l.cat, Logger: cfg.Logger})
	if l.handler == nil {
		l.handler = invoker.Chain(l.builtins, interceptors...)
	}
	return l, nil
}

// Run starts a run of node with the user's words userInput and drives it
// until it finishes, fails, suspends, or is interrupted. An invalid node
// is an error wrapping [ErrInvalidNode], with an empty result. An
// interruption (ctx cancelled, the model or a store failed) returns the
// error together with an [Interrupted] result whose Snapshot resumes the
// run with [Continue]. Otherwise the error is nil and the result's Status
// says how the run ended.
func (l *Loop) Run(ctx context.Context, node Node, userInput string) (Result, error) {
	id := l.newID()
	if id == "" {
		return Result{}, errors.New("react: Config.NewRunID returned an empty id")
	}
	r, err := l.newRun(id, node)
	if err != nil {
		return Result{}, err
	}
	r.observer.OnNodeStarted(ctx, NodeEvent{Run: r.id, Node: r.node.Name})
	r.msgs = append(r.msgs, Message{Role: RoleUser, Content: userInput})
	r.userTexts = append(r.userTexts, userInput)
	if err := l.ledger.AddUserText(ctx, r.id, userInput); err != nil {
		return r.interrupt(ctx, fmt.Errorf("react: evidence: %w", err))
	}
	return r.loop(ctx)
}

// ErrDecision is wrapped by the error [Loop.Resume] returns when the
// decision does not fit what the snapshot waits for (an answer for an
// approval, an empty answer, a zero Decision, anything but Continue for an
// interrupted run).
var ErrDecision = errors.New("react: decision does not fit the snapshot")

// Resume continues a run from its snapshot (see [Result].Snapshot) with
// the user's decision: [Approve] or [Decline] for an approval suspension,
// [Answer] for a follow-up, [Continue] for an interrupted run. A snapshot
// that is corrupt or was not written by this package is refused with an
// error wrapping [ErrSnapshot]; a decision that does not fit, with
// [ErrDecision]. The node is the one in the snapshot; its catalog tools
// must be in this loop's catalog.
//
// Resuming the same snapshot twice runs the rest of the run twice; the
// write ledger shared through the stores makes an approved write execute
// at most once. Resuming needs the stores the run used (approvals, write
// ledger; the evidence of an in-memory ledger travels in the snapshot).
func (l *Loop) Resume(ctx context.Context, snapshot []byte, d Decision) (Result, error) {
	s, err := decodeSnapshot(snapshot)
	if err != nil {
		return Result{}, err
	}
	r, err := l.restore(ctx, s)
	if err != nil {
		return Result{}, err
	}
	switch s.Status {
	case Interrupted:
		if d.kind != decideContinue {
			return Result{}, fmt.Errorf("%w: the run was interrupted; resume it with Continue, not %s", ErrDecision, d)
		}
	case Suspended:
		if err := r.decide(ctx, d); err != nil {
			if errors.Is(err, ErrDecision) {
				return Result{}, err
			}
			res := r.result()
			res.Status, res.Suspension, res.Snapshot = Suspended, s.Suspension, append([]byte(nil), snapshot...)
			return res, err
		}
	default: // decodeSnapshot accepts no other status
	}
	return r.loop(ctx)
}

// loop drives the run until it ends or stops.
func (r *run) loop(ctx context.Context) (Result, error) {
	for {
		if r.wave != nil {
			if err := r.processWave(ctx); err != nil {
				return r.interrupt(ctx, err)
			}
			if r.status != 0 {
				return r.end(ctx)
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return r.interrupt(ctx, err)
		}
		if r.round >= r.node.maxRounds() {
			r.fail(FailedRoundLimit, "round limit "+strconv.Itoa(r.node.maxRounds())+" reached")
			return r.end(ctx)
		}
		r.msgs[0] = Message{Role: RoleSystem, Content: r.systemPrompt()}
		resp, err := r.l.model.Generate(ctx, Request{Messages: r.msgs, Tools: r.specs})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return r.interrupt(ctx, cerr)
			}
			return r.interrupt(ctx, fmt.Errorf("react: model: %w", err))
		}
		r.round++
		r.appendAssistant(resp)
		if r.wave == nil {
			r.noToolCalls(ctx)
			if r.status != 0 {
				return r.end(ctx)
			}
		}
	}
}

// systemPrompt is the system message of the current round: the node's
// instructions, the ReAct rules and the phase hint, in the loop's
// language.
func (r *run) systemPrompt() string {
	// The prompt changes only when an output is added (outputs are never
	// removed), so it is built once per count of outputs.
	if r.sysFor == len(r.outputs)+1 {
		return r.sys
	}
	var b strings.Builder
	if s := strings.TrimSpace(r.node.Instructions); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString(r.cat.Text(prompt.SystemRules))
	if hint := r.cat.PhaseHint(r.required, r.written); hint != "" {
		b.WriteString("\n\n")
		b.WriteString(hint)
	}
	r.sys, r.sysFor = b.String(), len(r.outputs)+1
	return r.sys
}

func (r *run) written(key string) bool {
	_, ok := r.outputs[key]
	return ok
}

// noToolCalls applies the rule for a turn without a tool call: one stall,
// and a user message saying so.
func (r *run) noToolCalls(ctx context.Context) {
	r.observer.OnNoToolCalls(ctx, r.roundEvent())
	r.msgs = append(r.msgs, Message{Role: RoleUser, Content: r.cat.Message(r.cat.Text(prompt.ReasonNoToolCalls), r.cat.Text(prompt.NextCallTool))})
	r.stall(ctx, "no_tool_calls", "")
}

// stall counts one no-progress and fails the node past the limit.
func (r *run) stall(ctx context.Context, reason, callID string) {
	r.stalls++
	limit := r.node.noProgressLimit()
	r.observer.OnStall(ctx, StallEvent{RoundEvent: r.roundEvent(), Count: r.stalls, Limit: limit, Reason: reason, CallID: callID})
	if r.stalls > limit {
		r.fail(FailedNoProgress, fmt.Sprintf("%d consecutive rounds without progress (limit %d)", r.stalls, limit))
	}
}

func (r *run) resetStalls(ctx context.Context, callID string) {
	if r.stalls == 0 {
		return
	}
	r.stalls = 0
	r.observer.OnStallReset(ctx, StallEvent{RoundEvent: r.roundEvent(), Limit: r.node.noProgressLimit(), CallID: callID})
}

func (r *run) fail(kind FailureKind, reason string) {
	r.status = Failed
	r.failure = &Failure{Kind: kind, Reason: reason}
}

func (r *run) roundEvent() RoundEvent {
	return RoundEvent{NodeEvent: NodeEvent{Run: r.id, Node: r.node.Name}, Round: r.round}
}

// end reports the end of a run that finished, failed or suspended and
// builds its result.
func (r *run) end(ctx context.Context) (Result, error) {
	res := r.result()
	switch r.status {
	case Finished:
		r.observer.OnFinished(ctx, EndEvent{RoundEvent: r.roundEvent(), Outputs: len(r.outputs), Goal: res.Goal})
		r.l.forget(r.id)
	case Failed:
		r.observer.OnFailed(ctx, EndEvent{RoundEvent: r.roundEvent(), Failure: r.failure, Outputs: len(r.outputs), Goal: res.Goal})
		r.l.forget(r.id)
	case Suspended:
		r.observer.OnSuspended(ctx, SuspendEvent{RoundEvent: r.roundEvent(), Suspension: *r.susp})
		snap, err := r.snapshot(ctx)
		if err != nil {
			return res, err
		}
		res.Snapshot = snap
	case Interrupted:
	}
	return res, nil
}

// interrupt stops the run on err with a snapshot that resumes it.
func (r *run) interrupt(ctx context.Context, err error) (Result, error) {
	r.status = Interrupted
	res := r.result()
	// The snapshot is taken even when ctx is done: exporting the evidence
	// of an in-process ledger does not block.
	snap, serr := r.snapshot(context.WithoutCancel(ctx))
	if serr != nil {
		return res, errors.Join(err, serr)
	}
	res.Snapshot = snap
	return res, err
}

// result builds the Result of the run's current state.
func (r *run) result() Result {
	res := Result{
		Status:     r.status,
		Run:        r.id,
		Outputs:    make(map[string]OutputValue, len(r.outputs)),
		Summary:    r.summary,
		Failure:    r.failure,
		Rounds:     r.round,
		Stalls:     r.stalls,
		Transcript: r.msgs[1:len(r.msgs):len(r.msgs)],
		Calls:      r.calls[:len(r.calls):len(r.calls)],
		Goal:       r.goal(),
	}
	for k, v := range r.outputs {
		res.Outputs[k] = v
	}
	if r.susp != nil {
		s := *r.susp
		res.Suspension = &s
	}
	return res
}

// isWrite reports whether the catalog tool name is a write.
func (r *run) isWrite(name string) bool {
	t, ok := r.visible[name]
	return ok && t.Effect.IsWrite()
}
