package react

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/runstore"
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
	// means the zero guard.Options; Guards.Catalog nil means the loop's
	// language. New reads *Guards and never writes into it, so one Options
	// may serve many Loops built concurrently. Nil stores become in-memory
	// stores private to this Loop: a snapshot resumed by another Loop
	// needs the same stores (give both Loops the same store values, or
	// durable ones shared by every process). With the default chain
	// (Handler nil), an evidence ledger that is not an evidence.Exporter
	// (one kept in a database) is wrapped in an evidence.Cache, so a run's
	// evidence is read from the database once per Run or Resume and every
	// later lookup of that Run or Resume is answered from memory; the loop
	// drops the run from the cache when each Run or Resume starts and
	// ends (see evidence.Cache for why that is coherent). Pass an
	// *evidence.Cache yourself to share one between Loops.
	Guards *guard.Options
	// Handler runs the calls of catalog tools. Nil means the default chain:
	// invoker.Chain(invoker.New(…), guard.Default(Guards)...). A custom
	// handler replaces the whole chain, guards included; the loop still
	// reads the stores of Guards (the evidence ledger as given: the loop
	// wraps it in no cache, since the custom chain may write it behind the
	// loop), so a custom chain that gates writes must use the same
	// Approvals. The built-in tools always run through the default
	// invoker, without guards.
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
	// SnapshotKeys seal the snapshots the loop returns (HMAC-SHA256, see
	// [SnapshotFormat]): the first key seals, every key opens, so keys are
	// rotated by putting the new key first and keeping the old ones until
	// the snapshots sealed under them have been resumed or have expired.
	// Each key must have at least [MinSnapshotKey] random bytes; keep keys
	// where the host keeps its other secrets, never next to the
	// snapshots. Nil means one random key drawn once per process: the
	// snapshots of this process then resume in any Loop of this process
	// and nowhere else (another process refuses them with
	// [ErrSnapshotKey]). New copies the keys.
	SnapshotKeys [][]byte
	// SnapshotMaxAge refuses snapshots sealed longer ago, measured with Now
	// ([ErrSnapshotExpired]); 0 means no limit. A host whose claim store
	// prunes old claims sets it to at most that retention.
	SnapshotMaxAge time.Duration
	// Claims records which snapshots were resumed, so that each is resumed
	// once ([ErrAlreadyResumed]), and settles each claim when its resume
	// stops. Nil means one in-memory claim store shared by every Loop of
	// the process, which protects snapshots within the process; replicas
	// and restarts need a shared durable store (stores/postgres,
	// stores/sqlite), which also gives the claim of a resume whose process
	// died before it settled to the next resume of that snapshot.
	Claims runstore.Claims
	// Runs, when set, keeps the latest snapshot of every stopped run, for an
	// approvals inbox ([runstore.Store.List]) and for [Loop.ResumeRun]:
	// before Run or Resume returns a Suspended or Interrupted result, the
	// loop saves its snapshot with what the inbox shows (node, kind, the
	// gated write or the question, the stop time from Now); when a run
	// finishes or fails, it deletes the run's record. A store failure is
	// returned as the error, with the result and its snapshot intact. Nil
	// keeps nothing: the host stores Result.Snapshot itself.
	Runs runstore.Store
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
	obs       observers // the optional interfaces of observer
	info      ModelInfo // what the model says about itself
	maxResult int
	newID     func() string
	now       func() time.Time
	logOnly   *LogObserver // the observer, when it is a LogObserver alone
	keepState bool
	keys      []sealKey // keys[0] seals
	maxAge    time.Duration
	claims    runstore.Claims
	runs      runstore.Store
	cache     *evidence.Cache           // nil unless the default chain reads a ledger kept outside the process
	schemas   sync.Map                  // *tool.Tool → schemaEntry
	plan      atomic.Pointer[plan]      // the plan of the last node run
	sys       atomic.Pointer[sysPrompt] // the system prompt of the last node run without required outputs
	// builtinSpecs are the built-in tools' specs, without and with
	// builtin_output_set, rendered once in the loop's language.
	builtinSpecs [2][]ToolSpec
}

// processClaims are the claims of loops configured without Claims.
var processClaims = runstore.NewMemoryClaims()

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

// ErrNoModel is returned by [New] when [Config].Model is nil, or a typed
// nil (a nil pointer, map, func, … in a non-nil interface).
var ErrNoModel = errors.New("react: Config.Model is required")

// ErrNilContext is returned by [Loop.Run], [Loop.Resume] and
// [Loop.ResumeRun] when ctx is nil.
var ErrNilContext = errors.New("react: nil context: pass context.Background() or the request's context")

// New returns a loop for cfg, or [ErrNoModel].
func New(cfg Config) (*Loop, error) {
	if isNil(cfg.Model) {
		if cfg.Model != nil {
			return nil, fmt.Errorf("%w: Config.Model is a nil %T; pass a value that answers Generate", ErrNoModel, cfg.Model)
		}
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
	l.builtinSpecs = [2][]ToolSpec{builtinSpecs(l.cat, false), builtinSpecs(l.cat, true)}
	if l.observer == nil {
		l.observer = NewLogObserver(cfg.Logger)
	}
	l.obs, l.info = optionalObservers(l.observer), describe(cfg.Model)
	if lo, ok := l.observer.(*LogObserver); ok && l.obs.tool == nil {
		l.logOnly = lo
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
	keys, err := sealKeys(cfg.SnapshotKeys)
	if err != nil {
		return nil, err
	}
	l.keys, l.maxAge, l.claims, l.runs = keys, cfg.SnapshotMaxAge, cfg.Claims, cfg.Runs
	if l.claims == nil {
		l.claims = processClaims
	}
	var g guard.Options // a copy: New never writes into cfg.Guards
	if cfg.Guards != nil {
		g = *cfg.Guards
	}
	if g.Catalog == nil {
		g.Catalog = l.cat
	}
	if l.handler == nil && g.Ledger != nil {
		// A ledger kept outside the process is read from memory while this
		// process drives a run (see evidence.Cache): the chain below and
		// the loop share the cache. An in-process ledger (an Exporter) is
		// used as it is.
		switch lg := g.Ledger.(type) {
		case *evidence.Cache:
			l.cache = lg
		case evidence.Exporter:
		default:
			l.cache = evidence.NewCache(lg)
			g.Ledger = l.cache
		}
	}
	interceptors := guard.Default(&g)
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
// says how the run ended. A nil ctx is refused with [ErrNilContext]
// before anything runs (Resume and ResumeRun do the same).
func (l *Loop) Run(ctx context.Context, node Node, userInput string) (_ Result, err error) {
	if ctx == nil {
		return Result{}, fmt.Errorf("%w (Run)", ErrNilContext)
	}
	id := l.newID()
	if id == "" {
		return Result{}, errors.New("react: Config.NewRunID returned an empty id")
	}
	r, err := l.newRun(id, node)
	if err != nil {
		return Result{}, err
	}
	if l.cache != nil {
		l.cache.Release(id)
		defer l.cache.Release(id)
	}
	ctx = r.beginRun(ctx, false, nil)
	defer r.endRun(ctx, &err)
	r.observer.OnNodeStarted(ctx, NodeEvent{Run: r.id, Node: r.node.Name})
	userInput = validText(userInput)
	r.appendMsg(Message{Role: RoleUser, Content: userInput})
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
// [Answer] for a follow-up, [Continue] for an interrupted run. The node is
// the one in the snapshot; its catalog tools must be in this loop's
// catalog.
//
// Resume first opens the snapshot: one that is not this package's, was
// sealed under a key this loop does not hold, was changed after it was
// sealed, is too old, or does not fit the loop's catalog is refused with an
// error wrapping [ErrSnapshot]; a decision that does not fit, with
// [ErrDecision]. It then claims the snapshot in Config.Claims: a snapshot
// resumed before, in any loop sharing the claims, is refused with
// [ErrAlreadyResumed]. None of these refusals executes anything or
// changes any store.
//
// A snapshot whose resume died (its process was killed) after it applied
// the decision and before the run stopped again is not refused when the
// claim store can prove the holder dead (the durable stores can; see
// [runstore.Claims.Claim]): this resume takes the claim over and applies
// the same decision again. An approval delivered twice grants nothing
// more, so the approved write runs at most once: if the dead resume had
// started it, the write ledger has it running or uncertain
// (WRITE_PENDING_VERIFY, or its result reused through the tool's Verify);
// if not, the approval it left unused lets it run once.
//
// An approval is granted only to the call the run's Approvals store
// recorded as gated, with the same fingerprint ([guard.Approvals.Approve]);
// otherwise Resume returns an error wrapping [guard.ErrNotPending] and
// executes nothing. When applying the decision fails (that, or a store
// error), the claim is released and the error is returned with a Suspended
// result holding the same snapshot, so the same decision can be given
// again. Later failures interrupt the run as in [Loop.Run], with a new
// snapshot. Once the decision applied, Resume settles the claim before it
// returns, whatever the result (finished, failed, suspended again,
// interrupted), with a context that is not cancelled with ctx; a settled
// snapshot is never resumed again, and an error settling it is joined into
// the returned error (the result is intact). With claims that hold under
// a lease ([runstore.LeasedClaims]: stores/postgres) the resume runs under
// the claim's lease and stops when it is lost; if another process took the
// claim over meanwhile, nothing this resume did counts and it returns an
// error wrapping [runstore.ErrLeaseLost] with the snapshot it resumed and
// that snapshot's status (resuming it again answers [ErrAlreadyResumed]
// while the other resume holds it). Resuming needs the stores the
// run used (approvals, write ledger; the evidence of an in-process ledger
// travels in the snapshot).
func (l *Loop) Resume(ctx context.Context, snapshot []byte, d Decision) (_ Result, err error) {
	if ctx == nil {
		return Result{}, fmt.Errorf("%w (Resume)", ErrNilContext)
	}
	s, err := l.open(snapshot)
	if err != nil {
		return Result{}, err
	}
	r, err := l.restore(s)
	if err != nil {
		return Result{}, err
	}
	if err := s.fits(d); err != nil {
		return Result{}, err
	}
	claimed, applied, err := l.claim(ctx, s, d)
	var refused error // the decision, refused in the claim's operation: nothing was claimed
	if errors.Is(err, guard.ErrNotPending) {
		refused, claimed, err = err, true, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("react: resume claim: %w", err)
	}
	if !claimed {
		return Result{}, fmt.Errorf("%w: snapshot %s of run %s", ErrAlreadyResumed, s.ID, s.Run)
	}
	var caller, lease context.Context // with a leased claim: ctx as given, and under the lease
	if h, ok := l.claims.(runstore.LeasedClaims); ok && refused == nil {
		// The resume runs under the claim's lease: it stops when the lease
		// is lost, before another process may take the claim over.
		var release context.CancelFunc
		caller = ctx
		ctx, release = h.Hold(ctx, s.Run, s.ID)
		lease = ctx
		defer release()
	}
	if l.cache != nil {
		// This resume drives the run now: whatever an earlier driver (in
		// this process or another) left cached is dropped, and so is what
		// this one reads, once it stops.
		l.cache.Release(s.Run)
		defer l.cache.Release(s.Run)
	}
	ctx = r.beginRun(ctx, true, s.Carry)
	defer r.endRun(ctx, &err)
	// Until the decision is applied nothing has changed, so a failure
	// gives the claim back and returns the same snapshot.
	unchanged := func(err error) (Result, error) {
		if refused != nil {
			// Nothing was claimed: nothing to release.
		} else if rerr := l.claims.Release(context.WithoutCancel(ctx), s.Run, s.ID); rerr != nil {
			err = errors.Join(err, fmt.Errorf("react: release resume claim: %w", rerr))
		}
		res := r.result()
		res.Status, res.Snapshot = s.Status, append([]byte(nil), snapshot...)
		return res, err
	}
	if refused != nil {
		return unchanged(fmt.Errorf("react: approvals: %w", refused))
	}
	if err := l.importEvidence(ctx, s); err != nil {
		return unchanged(err)
	}
	if s.Status == Suspended {
		if err := r.decide(ctx, d, applied); err != nil {
			return unchanged(err)
		}
	}
	// The decision applied: whatever the run does now, it stops with a new
	// snapshot or ends, and this snapshot is spent. The claim is settled
	// after the result was kept in Config.Runs, so that a process killed in
	// between leaves the claim taken (a durable store lets the next resume
	// take it over), never settled with the run's latest state lost.
	res, err := r.loop(ctx)
	if err != nil && lease != nil && lease.Err() != nil && caller.Err() == nil {
		err = fmt.Errorf("%w: %w", context.Cause(lease), err) // stopped by the lease, not the caller
	}
	if serr := l.claims.Settle(context.WithoutCancel(ctx), s.Run, s.ID); serr != nil {
		err = errors.Join(err, fmt.Errorf("react: settle resume claim: %w", serr))
		if errors.Is(serr, runstore.ErrLeaseLost) {
			// The claim was taken over after this resume lost its lease:
			// what it did since is not the run's (its records were
			// refused), so it answers with the snapshot it resumed.
			if again, rerr := l.restore(s); rerr == nil {
				res = again.result()
			}
			res.Status, res.Snapshot = s.Status, append([]byte(nil), snapshot...)
		}
	}
	return res, err
}

// Errors of [Loop.ResumeRun].
var (
	// ErrNoRunStore: the loop has no Config.Runs.
	ErrNoRunStore = errors.New("react: Config.Runs is not set")
	// ErrRunNotFound: Config.Runs holds no stopped run with that id (it
	// ended, expired, was deleted, or never stopped).
	ErrRunNotFound = errors.New("react: no stopped run with that id")
)

// ResumeRun resumes the stopped run id from the snapshot Config.Runs holds
// for it, with the user's decision, as [Loop.Resume] does; it returns
// [ErrNoRunStore] without a run store and an error wrapping
// [ErrRunNotFound] when the store holds no such run.
func (l *Loop) ResumeRun(ctx context.Context, id string, d Decision) (Result, error) {
	if ctx == nil {
		return Result{}, fmt.Errorf("%w (ResumeRun)", ErrNilContext)
	}
	if l.runs == nil {
		return Result{}, ErrNoRunStore
	}
	rec, ok, err := l.runs.Get(ctx, id)
	if err != nil {
		return Result{}, fmt.Errorf("react: run store: get run %s: %w", id, err)
	}
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrRunNotFound, id)
	}
	return l.Resume(ctx, rec.Snapshot, d)
}

// isNil reports whether v is nil or holds a nil pointer, map, slice,
// channel, func or interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() { //nolint:exhaustive // other kinds cannot be nil
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
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
		resp, err := r.generate(ctx, Request{Messages: r.msgs, Tools: r.specs})
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
	if len(r.required) == 0 {
		if p := r.l.sys.Load(); p != nil && p.instructions == r.node.Instructions {
			r.sys, r.sysFor = p.text, len(r.outputs)+1
			return r.sys
		}
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
	if len(r.required) == 0 {
		r.l.sys.Store(&sysPrompt{instructions: r.node.Instructions, text: r.sys})
	}
	return r.sys
}

// sysPrompt is the system prompt of a node without required outputs,
// which depends only on the node's instructions (and the loop's language).
type sysPrompt struct{ instructions, text string }

func (r *run) written(key string) bool {
	_, ok := r.outputs[key]
	return ok
}

// noToolCalls applies the rule for a turn without a tool call: one stall,
// and a user message saying so.
func (r *run) noToolCalls(ctx context.Context) {
	r.observer.OnNoToolCalls(ctx, r.roundEvent())
	r.appendMsg(Message{Role: RoleUser, Content: r.cat.Message(r.cat.Text(prompt.ReasonNoToolCalls), r.cat.Text(prompt.NextCallTool))})
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
	r.keepSizes()
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
	return res, r.keep(ctx, res)
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
	return res, errors.Join(err, r.keep(ctx, res))
}

// keep records the run's result in Config.Runs: the snapshot of a stopped
// run, or the removal of a run that ended for good. It uses a context that
// is not cancelled with ctx, so an interrupted run is still kept.
func (r *run) keep(ctx context.Context, res Result) error {
	runs := r.l.runs
	if runs == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	switch res.Status {
	case Finished, Failed:
		if err := runs.Delete(ctx, r.id); err != nil {
			return fmt.Errorf("react: run store: delete run %s: %w", r.id, err)
		}
		return nil
	default: // Suspended, Interrupted
	}
	rec := runstore.Run{ID: r.id, Node: r.node.Name, Kind: runstore.Interrupted, Snapshot: res.Snapshot, Stopped: r.l.now()}
	if s := res.Suspension; s != nil {
		switch s.Kind {
		case SuspendApproval:
			rec.Kind, rec.Reason = runstore.Approval, s.Reason
			if p := s.Approval; p != nil {
				rec.Tool, rec.Args = p.Tool, p.Args
			}
		case SuspendFollowUp:
			rec.Kind, rec.Question = runstore.FollowUp, s.Question
		}
	}
	if err := runs.Save(ctx, rec); err != nil {
		return fmt.Errorf("react: run store: save run %s: %w", r.id, err)
	}
	return nil
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
	if len(r.calls) == 0 {
		res.Calls = nil // as before any call, whatever room the run started with
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
