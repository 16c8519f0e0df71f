package react

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/pending"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
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
	// NewRunID returns the id of a new run, given the context of the Run
	// that starts it (a host may derive the id from the request it
	// serves); nil means a random UUID. It must return an id that is
	// unique among the runs sharing the stores: Run refuses an id that is
	// empty, not valid UTF-8, or longer than [MaxRunID] bytes
	// ([ErrInvalidRunID]).
	NewRunID func(ctx context.Context) string
	// Now is the clock of durations in events; nil means time.Now. It must
	// be safe for concurrent use when nodes run reads in parallel. The
	// guards have their own (Guards.Now: evidence fetch times, result
	// ages), so that a run that is not observed reads no clock per call.
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
	// to the clock's resolution ([ErrSnapshotExpired]); 0 means no limit,
	// and New refuses a negative value. A host whose claim store prunes
	// old claims sets it to at most that retention.
	SnapshotMaxAge time.Duration
	// MaxSnapshotBytes refuses a snapshot larger than this many bytes
	// before reading any of it ([ErrSnapshotTooLarge]), so that a forged
	// or bloated snapshot costs no authentication or decoding work; 0
	// means [DefaultMaxSnapshotBytes], a negative value no bound. The loop
	// never seals a snapshot larger than the bound: a run whose state
	// outgrows it is interrupted with ErrSnapshotTooLarge instead.
	MaxSnapshotBytes int
	// Claims records which snapshots were resumed, so that each is resumed
	// once ([ErrAlreadyResumed]), and settles each claim when its resume
	// stops. Nil means one in-memory claim store shared by every Loop of
	// the process, which protects snapshots within the process; replicas
	// and restarts need a shared durable store (stores/postgres,
	// stores/sqlite), which also gives the claim of a resume whose process
	// died before it settled to the next resume of that snapshot.
	Claims runstore.Claims
	// Runs, when set, keeps the latest snapshot of every stopped run, for an
	// approvals inbox ([Loop.ListPending], [Loop.Pending]) and for
	// [Loop.ResumeRun]: before Run or Resume returns a Suspended or
	// Interrupted result, the loop saves its snapshot with the columns an
	// inbox selects by (owner, node, kind, the stop time from Now); when a
	// run finishes or fails, it deletes the run's record. A store failure
	// is returned as the error, with the result and its snapshot intact; a
	// failed delete is also remembered and tried again at this Loop's next
	// call (see [Loop.Pending] for how a run that ended is told apart in
	// the meantime). Nil keeps nothing: the host stores Result.Snapshot
	// itself.
	Runs runstore.Store
	// Audit records every decision a person makes on a suspension (who
	// approved, declined or answered what, when), before the loop applies
	// it, and answers a decision delivered twice ([DecidedError]). Nil
	// means one in-memory audit shared by every Loop of the process (like
	// the default Claims); replicas and restarts need a durable store
	// (stores/postgres, stores/sqlite), whose audit also survives the
	// process. Read it with [Loop.History].
	Audit runstore.Audit
	// KeepRunState keeps a run's evidence and approvals in the stores after
	// the run finished or failed. By default the loop calls Forget(run) on
	// every store of Guards that has such a method (the in-memory stores
	// do) once a run has ended for good, so a long-running service does not
	// keep every run's state; a suspended or interrupted run is never
	// forgotten, since it will be resumed. The write ledger is never
	// forgotten: it is what keeps a write from running twice.
	KeepRunState bool
	// Threads keeps conversations: the turns of every thread a run
	// answers a message of ([InThread]), which run holds each thread, and
	// the evidence of the threads' earlier turns, which the guards of the
	// default chain and builtin_output_set read when a run's own evidence
	// does not hold a value (a custom Handler's guards see the run's own
	// evidence only). Nil refuses InThread ([ErrNoThreadStore]).
	// threadstore.NewMemory keeps them in the process; replicas and
	// restarts need a durable store (stores/postgres, stores/sqlite) and
	// the same SnapshotKeys in every process: a thread's turns are sealed
	// as snapshots are.
	Threads threadstore.Store
	// History bounds what of a thread's earlier turns is sent to the
	// model with each message (see [HistoryPolicy]); the zero value sends
	// the last [DefaultHistoryTurns] turns.
	History HistoryPolicy
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
	wants     EventSet  // the kinds observer receives
	carrier   Carrier   // observer, when it carries strings in snapshots
	info      ModelInfo // what the model says about itself
	maxResult int
	newID     func(context.Context) string
	now       func() time.Time
	logOnly   *LogObserver // the observer, when it is a LogObserver alone
	keepState bool
	keys      []sealKey // keys[0] seals
	maxAge    time.Duration
	maxSnap   int // 0: no bound
	claims    runstore.Claims
	runs      runstore.Store
	audit     runstore.Audit
	keptUpTo  int // payloads up to this many bytes are kept in full by the evidence guard; -1: all, 0: unknown
	// releases and deletes are the claim releases and run deletions whose
	// store call failed, tried again at the start of this Loop's next
	// call (see retryPending).
	releases pending.Map[[2]string, struct{}]
	deletes  pending.Map[string, struct{}]
	streamer StreamModel               // the model, when it streams
	cache    *evidence.Cache           // nil unless the default chain reads a ledger kept outside the process
	schemas  sync.Map                  // *tool.Tool → schemaEntry
	plan     atomic.Pointer[plan]      // the plan of the last node run
	sys      atomic.Pointer[sysPrompt] // the system prompt of the last node run without required outputs
	// builtinSpecs are the built-in tools' specs, without and with
	// builtin_output_set, rendered once in the loop's language.
	builtinSpecs [2][]ToolSpec
	// lookup is the evidence builtin_output_set checks sources against:
	// ledger, and the thread's earlier turns for a run in a thread.
	lookup     evidence.Ledger
	threads    threadstore.Store
	history    HistoryPolicy
	threadOps  pending.Map[string, *threadCommit] // turns whose commit failed, by thread
	outSchemas sync.Map                           // *jsonschema.Schema of an output → *jsonschema.Resolved
	opened     turnCache                          // the threads' turns this Loop opened
}

// processClaims and processAudit are the claims and the audit of loops
// configured without them.
var (
	processClaims = runstore.NewMemoryClaims()
	processAudit  = runstore.NewMemoryAudit()
)

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
		threads:   cfg.Threads,
		history:   cfg.History,
	}
	if l.catalog == nil {
		l.catalog = &tool.Catalog{}
	}
	l.builtinSpecs = [2][]ToolSpec{builtinSpecs(l.cat, false), builtinSpecs(l.cat, true)}
	if l.observer == nil {
		l.observer = NewLogObserver(cfg.Logger)
	}
	l.wants, l.info = wantsOf(l.observer), describe(cfg.Model)
	l.streamer, _ = cfg.Model.(StreamModel)
	l.carrier, _ = l.observer.(Carrier)
	if lo, ok := l.observer.(*LogObserver); ok {
		l.logOnly = lo
	}
	if l.maxResult == 0 {
		l.maxResult = DefaultMaxResultBytes
	}
	if l.newID == nil {
		l.newID = func(context.Context) string { return uuid.NewString() }
	}
	if l.now == nil {
		l.now = time.Now
	}
	keys, err := sealKeys(cfg.SnapshotKeys)
	if err != nil {
		return nil, err
	}
	if cfg.SnapshotMaxAge < 0 {
		return nil, fmt.Errorf("react: Config.SnapshotMaxAge is %v; use 0 for no limit", cfg.SnapshotMaxAge)
	}
	l.keys, l.maxAge, l.claims, l.runs, l.audit = keys, cfg.SnapshotMaxAge, cfg.Claims, cfg.Runs, cfg.Audit
	switch {
	case cfg.MaxSnapshotBytes == 0:
		l.maxSnap = DefaultMaxSnapshotBytes
	case cfg.MaxSnapshotBytes > 0:
		l.maxSnap = cfg.MaxSnapshotBytes
	}
	if l.claims == nil {
		l.claims = processClaims
	}
	if l.audit == nil {
		l.audit = processAudit
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
	if l.threads != nil && l.handler == nil {
		// The guards also read the evidence of a thread's earlier turns.
		if g.Ledger == nil {
			g.Ledger = evidence.NewMemory()
		}
		g.Ledger = &layered{Ledger: g.Ledger}
	}
	interceptors := guard.Default(&g)
	l.approvals, l.ledger, l.lookup = g.Approvals, g.Ledger, g.Ledger
	if lay, ok := g.Ledger.(*layered); ok {
		l.ledger = lay.Ledger
	} else if l.threads != nil {
		l.lookup = &layered{Ledger: g.Ledger}
	}
	if l.handler == nil {
		switch {
		case g.Offload != nil || g.MaxPayload < 0:
			l.keptUpTo = -1
		case g.MaxPayload == 0:
			l.keptUpTo = guard.DefaultMaxPayload
		default:
			l.keptUpTo = g.MaxPayload
		}
	}
	l.builtins = invoker.New(&invoker.Options{Catalog: l.cat, Logger: cfg.Logger})
	if l.handler == nil {
		l.handler = invoker.Chain(l.builtins, interceptors...)
	}
	return l, nil
}

// MaxRunID bounds the length in bytes of a run id (see
// [Config].NewRunID).
const MaxRunID = 256

// ErrInvalidRunID is wrapped by the error of [Loop.Run] when
// Config.NewRunID returned an id that is empty, not valid UTF-8 or longer
// than [MaxRunID] bytes: such an id could not be stored, resumed or
// approved everywhere. Nothing runs.
var ErrInvalidRunID = errors.New("react: invalid run id")

// checkRunID reports whether id can be a run's id.
func checkRunID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidRunID)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w %q: not valid UTF-8", ErrInvalidRunID, id)
	case len(id) > MaxRunID:
		return fmt.Errorf("%w: %d bytes; at most %d", ErrInvalidRunID, len(id), MaxRunID)
	}
	return nil
}

// Run starts a run of node with the user's words userInput and drives it
// until it finishes, fails, suspends, or is interrupted. The run belongs
// to the owner named with [WithOwner] (the zero Owner without it). An
// invalid node is an error wrapping [ErrInvalidNode], an invalid run id
// one wrapping [ErrInvalidRunID], with an empty result. An interruption
// (ctx cancelled, the model or a store failed) returns the error together
// with an [Interrupted] result whose Snapshot resumes the run with
// [Continue]. Otherwise the error is nil and the result's Status says how
// the run ended. A nil ctx is refused with [ErrNilContext] before
// anything runs (Resume and ResumeRun do the same).
func (l *Loop) Run(ctx context.Context, node Node, userInput string, opts ...RunOption) (Result, error) {
	return l.run(ctx, node, userInput, applyOptions(opts), nil)
}

// run drives a run for Run and RunStream; s is the stream's sink, nil for
// Run.
func (l *Loop) run(ctx context.Context, node Node, userInput string, o runOptions, s *sink) (res Result, err error) {
	if ctx == nil {
		return Result{}, fmt.Errorf("%w (Run)", ErrNilContext)
	}
	if err := o.owner.Check(); err != nil {
		return Result{}, fmt.Errorf("react: WithOwner: %w", err)
	}
	l.retryPending(ctx)
	id := l.newID(ctx)
	if err := checkRunID(id); err != nil {
		return Result{}, fmt.Errorf("%w (from Config.NewRunID)", err)
	}
	r, err := l.newRun(id, node)
	if err != nil {
		return Result{}, err
	}
	r.owner, r.sink, r.verifier = o.owner, s, o.verifier
	if r.host, err = o.host(); err != nil {
		return Result{}, err
	}
	if err := o.checkInputs(); err != nil {
		return Result{}, err
	}
	if o.inThread {
		if err := l.enterThread(ctx, r, o.thread); err != nil {
			return Result{}, err
		}
		defer r.leaveThread(ctx, false)
		ctx = r.scope(ctx)
	}
	if l.cache != nil {
		l.cache.Release(id)
		defer l.cache.Release(id)
	}
	ctx = r.beginRun(ctx, nil, nil)
	defer r.endRun(ctx, &res, &err)
	userInput = validText(userInput)
	r.appendMsg(Message{Role: RoleUser, Content: userInput})
	r.userTexts = append(r.userTexts, userInput)
	if err := l.ledger.AddUserText(ctx, r.id, userInput); err != nil {
		return r.interrupt(ctx, fmt.Errorf("react: evidence: %w", err))
	}
	if err := r.startInputs(ctx, o.inputs); err != nil {
		return r.interrupt(ctx, err)
	}
	return r.loop(ctx)
}

// ErrDecision is wrapped by the error [Loop.Resume] returns when the
// decision does not fit what the snapshot waits for (an answer for an
// approval, an empty answer, a zero Decision, anything but Continue for an
// interrupted run, a decider that is not valid UTF-8 or too long).
var ErrDecision = errors.New("react: decision does not fit the snapshot")

// Resume continues a run from its snapshot (see [Result].Snapshot) with a
// person's decision: [Approve] or [Decline] for an approval suspension,
// [Answer] for a follow-up, each carrying the ticket of the suspension it
// answers ([Suspension].Ticket), or [Continue] for an interrupted run. The
// caller acts as the owner named with [WithOwner], which must cover the
// run's ([ErrNotOwner]). The node is the one in the snapshot; its catalog
// tools must be in this loop's catalog.
//
// Resume first opens the snapshot: one larger than Config.MaxSnapshotBytes,
// not this package's, sealed under a key this loop does not hold, changed
// after it was sealed, too old, or that does not fit the loop's catalog is
// refused with an error wrapping [ErrSnapshot]. It then checks the owner,
// the ticket and the decision: a ticket of another run, or of a
// suspension of this run that is not the one it waits for and was never
// decided, is refused with [ErrTicket]; a ticket of a suspension that was
// decided before gets a [DecidedError] (wrapping [ErrAlreadyResumed]); a
// decision that does not fit, [ErrDecision]. It then claims the snapshot
// in Config.Claims: a snapshot resumed before, in any loop sharing the
// claims, is refused with an error wrapping [ErrAlreadyResumed] (a
// [DecidedError] once the audit holds the decision). None of these
// refusals executes anything or changes any store.
//
// So a decision delivered twice — a double click, a retried request, a
// duplicate on another replica — always gets [ErrAlreadyResumed], whether
// it arrives while the first is running, after the run stopped again
// (even for another write: the old ticket names the old suspension), or
// after the run ended, through Resume or ResumeRun; it never applies to
// anything the person was not shown.
//
// With the claim taken, Resume records the decision in Config.Audit
// (run, suspension, call, fingerprint, kind, who from
// [Decision.DecidedBy], when, the reason) before it applies it. When a
// decision on the same suspension was recorded before (by a resume that
// died, or one that could not apply it), the same kind of decision is
// applied again and another kind is refused with [DecidedError]: the
// first recorded decision is the suspension's.
//
// A snapshot whose resume died (its process was killed) after it applied
// the decision and before the run stopped again is not refused when the
// claim store can prove the holder dead (the durable stores can; see
// [runstore.Claims.Claim]): this resume takes the claim over and applies
// the same decision again. An approval delivered twice grants nothing
// more, so the approved write runs at most once: if the dead resume had
// started it, the write ledger has it running or uncertain
// (WRITE_PENDING_VERIFY, or its result reused through the tool's Verify);
// if not, the approval it left unused lets it run once. A resume that
// panics (the model, a host interceptor or observer) gives its claim back
// before the panic leaves Resume, so that the next resume, in this
// process too, applies the decision again; a claim release or a run
// deletion whose store call failed is remembered and tried again at this
// Loop's next call, so no approval waits for a process to exit.
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
func (l *Loop) Resume(ctx context.Context, snapshot []byte, d Decision, opts ...RunOption) (Result, error) {
	return l.resumeBytes(ctx, snapshot, d, applyOptions(opts), nil)
}

// resumeBytes opens snapshot and resumes it, for Resume and ResumeStream;
// sk is the stream's sink, nil without a stream.
func (l *Loop) resumeBytes(ctx context.Context, snapshot []byte, d Decision, o runOptions, sk *sink) (Result, error) {
	if ctx == nil {
		return Result{}, fmt.Errorf("%w (Resume)", ErrNilContext)
	}
	s, err := l.open(snapshot)
	if err != nil {
		return Result{}, err
	}
	return l.resume(ctx, snapshot, s, d, o, sk)
}

// resume resumes the opened snapshot s (whose bytes are snapshot).
// sk is the stream's sink, nil without a stream.
func (l *Loop) resume(ctx context.Context, snapshot []byte, s *snapState, d Decision, o runOptions, sk *sink) (res Result, err error) {
	if !o.owner.Covers(s.Owner) {
		return Result{}, fmt.Errorf("%w: run %s is %s's, the caller acts as %s", ErrNotOwner, s.Run, s.Owner, o.owner)
	}
	if err := checkDecider(d); err != nil {
		return Result{}, err
	}
	if err := checkHost(s, o); err != nil {
		return Result{}, err
	}
	r, err := l.restore(s)
	if err != nil {
		return Result{}, err
	}
	r.sink, r.verifier = sk, o.verifier
	if d.kind.audited() != 0 {
		if err := l.checkTicket(ctx, s, d); err != nil {
			return Result{}, err
		}
	}
	if err := s.fits(d); err != nil {
		return Result{}, err
	}
	l.retryPending(ctx)
	var rec *runstore.Decision // a person's decision, as the audit records it
	if s.Status == Suspended {
		rec = l.decisionRecord(s, d)
	}
	claimed, applied, err := l.claim(ctx, s, d, rec)
	var refused error // the decision, refused in the claim's operation: nothing was claimed
	switch {
	case errors.Is(err, guard.ErrNotPending):
		refused, claimed, err = err, true, nil
	case errors.Is(err, runstore.ErrDecidedOtherwise):
		// Another kind of decision was recorded on this suspension first:
		// nothing was claimed or applied.
		return Result{}, l.alreadyResumed(ctx, s.Run, s.ID)
	}
	if err != nil {
		return Result{}, fmt.Errorf("react: resume claim: %w", err)
	}
	if !claimed {
		return Result{}, l.alreadyResumed(ctx, s.Run, s.ID)
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
	if r.thread != nil && refused == nil {
		// The run goes on in its thread: it takes the thread again (a
		// thread that went on without it refuses it) before anything
		// changes, and parks it again if the decision does not apply. A
		// decision refused in the claim's operation leaves the thread
		// parked as it was.
		if err := l.reenterThread(ctx, r); err != nil {
			r.leaveThread(ctx, true)
			if rerr := l.release(context.WithoutCancel(ctx), s.Run, s.ID); rerr != nil {
				err = errors.Join(err, fmt.Errorf("react: release resume claim: %w", rerr))
			}
			return Result{}, err
		}
		defer r.leaveThread(ctx, true)
		ctx = r.scope(ctx)
	}
	r.roundOpen = r.wave != nil
	ctx = r.beginRun(ctx, &d, s.Carry)
	defer r.endRun(ctx, &res, &err)
	held := true // the claim is taken and neither released nor settled
	defer func() {
		// A panic (the model, a host interceptor or observer) must not
		// leave the claim taken for as long as this process lives: it is
		// given back, so that the next resume applies the same decision
		// again (the stores answer it without a second grant).
		if held {
			if p := recover(); p != nil {
				_ = l.release(context.WithoutCancel(ctx), s.Run, s.ID) // a failure is remembered and retried
				panic(p)
			}
		}
	}()
	// Until the decision is applied nothing has changed, so a failure
	// gives the claim back and returns the same snapshot.
	unchanged := func(err error) (Result, error) {
		held = false
		r.leaveThread(ctx, true) // the thread waits again, before the snapshot may be claimed again
		if refused != nil {
			// Nothing was claimed: nothing to release.
		} else if rerr := l.release(context.WithoutCancel(ctx), s.Run, s.ID); rerr != nil {
			err = errors.Join(err, fmt.Errorf("react: release resume claim: %w", rerr))
		}
		res := r.result()
		res.Status, res.Snapshot = s.Status, append([]byte(nil), snapshot...)
		if res.Suspension != nil {
			res.Suspension.Ticket = s.key.ticket(s)
		}
		return res, err
	}
	if refused != nil {
		return unchanged(fmt.Errorf("react: approvals: %w", refused))
	}
	if err := ctx.Err(); err != nil && !applied { // cancelled, or the stream's host stopped reading
		return unchanged(err)
	}
	if err := l.importEvidence(ctx, s); err != nil {
		return unchanged(err)
	}
	if s.Status == Suspended {
		if !applied { // a ClaimDecider recorded it with the claim
			if err := l.recordDecision(ctx, rec); err != nil {
				return unchanged(err)
			}
		}
		if err := r.decide(ctx, d, applied); err != nil {
			return unchanged(err)
		}
	}
	// The decision applied: whatever the run does now, it stops with a new
	// snapshot or ends, and this snapshot is spent. The claim is settled
	// after the result was kept in Config.Runs, so that a process killed in
	// between leaves the claim taken (a durable store lets the next resume
	// take it over), never settled with the run's latest state lost.
	res, err = r.loop(ctx)
	held = false
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

// checkDecider refuses a decider id that no store could keep.
func checkDecider(d Decision) error {
	switch {
	case d.kind == 0:
		return fmt.Errorf("%w: the zero Decision; build one with Approve, Decline, Answer or Continue", ErrDecision)
	case !utf8.ValidString(d.by):
		return fmt.Errorf("%w: DecidedBy is not valid UTF-8", ErrDecision)
	case len(d.by) > MaxDecider:
		return fmt.Errorf("%w: DecidedBy has %d bytes; at most %d", ErrDecision, len(d.by), MaxDecider)
	}
	return nil
}

// checkTicket reports whether d's ticket names the suspension s waits
// for; see [ErrTicket] and [DecidedError].
func (l *Loop) checkTicket(ctx context.Context, s *snapState, d Decision) error {
	id, mac, ok := ticketSnapshot(d.ticket)
	if !ok {
		if d.ticket == "" {
			return fmt.Errorf("%w: the decision has no ticket; pass Suspension.Ticket of the suspension the person decided on", ErrTicket)
		}
		return fmt.Errorf("%w: the decision's ticket is not one (%d bytes)", ErrTicket, len(d.ticket))
	}
	if id == s.ID {
		if s.Suspension == nil || !hmac.Equal(mac, s.key.ticketMAC(s)) {
			return fmt.Errorf("%w: it does not match suspension %s of run %s", ErrTicket, s.ID, s.Run)
		}
		return nil
	}
	rec, decided, err := l.audit.Decided(ctx, s.Run, id)
	if err != nil {
		return fmt.Errorf("react: audit: %w", err)
	}
	if decided {
		return &DecidedError{Decided: rec}
	}
	return fmt.Errorf("%w: it names suspension %s, which run %s does not wait on (it waits on %s)", ErrTicket, id, s.Run, s.ID)
}

// alreadyResumed is the error for a snapshot whose claim is taken or
// settled: a DecidedError when the audit holds the decision.
func (l *Loop) alreadyResumed(ctx context.Context, run, id string) error {
	if rec, ok, err := l.audit.Decided(ctx, run, id); err == nil && ok {
		return &DecidedError{Decided: rec}
	}
	return fmt.Errorf("%w: snapshot %s of run %s", ErrAlreadyResumed, id, run)
}

// decisionRecord is the audit record of a person's decision d on the
// suspension s waits for; nil for Continue.
func (l *Loop) decisionRecord(s *snapState, d Decision) *runstore.Decision {
	if d.kind.audited() == 0 || s.Suspension == nil {
		return nil
	}
	rec := &runstore.Decision{
		Run: s.Run, Suspension: s.ID, Kind: d.kind.audited(), CallID: s.Suspension.CallID,
		Owner: s.Owner, By: d.by, At: l.now(), Reason: validText(strings.TrimSpace(d.text)),
	}
	if p := s.Suspension.Approval; p != nil {
		rec.CallID, rec.Tool, rec.Fingerprint = p.CallID, p.Tool, p.Fingerprint
	}
	return rec
}

// recordDecision records a person's decision before it is applied; a
// different decision recorded before wins.
func (l *Loop) recordDecision(ctx context.Context, rec *runstore.Decision) error {
	if rec == nil {
		return nil
	}
	kept, appended, err := l.audit.Record(ctx, *rec)
	if err != nil {
		return fmt.Errorf("react: audit: %w", err)
	}
	if !appended && kept.Kind != rec.Kind {
		return &DecidedError{Decided: kept}
	}
	return nil
}

// release gives a claim back; a failed release is remembered and tried
// again at this Loop's next call.
func (l *Loop) release(ctx context.Context, run, id string) error {
	if err := l.claims.Release(ctx, run, id); err != nil {
		l.releases.Put([2]string{run, id}, struct{}{})
		return err
	}
	return nil
}

// retryPending tries again the claim releases, run deletions and turn
// commits that failed, with a context that is not cancelled with ctx.
func (l *Loop) retryPending(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	l.releases.Retry(func(k [2]string, _ struct{}) error { return l.claims.Release(ctx, k[0], k[1]) })
	if l.runs != nil {
		l.deletes.Retry(func(id string, _ struct{}) error { return l.runs.Delete(ctx, id) })
	}
	if l.threads != nil {
		l.threadOps.Retry(func(_ string, c *threadCommit) error { return l.commit(ctx, c) })
	}
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
// for it, with the person's decision, as [Loop.Resume] does. It returns
// [ErrNoRunStore] without a run store; an error wrapping [ErrSnapshotRun]
// when the store holds, under id, a snapshot of another run (nothing is
// resumed); and, when the store holds no such run, a [DecidedError] if the
// decision's ticket names a suspension of run id that was decided (the run
// went on and ended: a decision delivered twice) and an error wrapping
// [ErrRunNotFound] otherwise.
func (l *Loop) ResumeRun(ctx context.Context, id string, d Decision, opts ...RunOption) (Result, error) {
	return l.resumeRun(ctx, id, d, applyOptions(opts), nil)
}

// resumeRun drives ResumeRun and ResumeRunStream; sk is the stream's sink,
// nil without a stream.
func (l *Loop) resumeRun(ctx context.Context, id string, d Decision, o runOptions, sk *sink) (Result, error) {
	if ctx == nil {
		return Result{}, fmt.Errorf("%w (ResumeRun)", ErrNilContext)
	}
	if l.runs == nil {
		return Result{}, ErrNoRunStore
	}
	l.retryPending(ctx)
	rec, ok, err := l.runs.Get(ctx, id)
	if err != nil {
		return Result{}, fmt.Errorf("react: run store: get run %s: %w", id, err)
	}
	if !ok {
		if snap, _, isTicket := ticketSnapshot(d.ticket); isTicket {
			if dec, decided, err := l.audit.Decided(ctx, id, snap); err == nil && decided && o.owner.Covers(dec.Owner) {
				return Result{}, &DecidedError{Decided: dec}
			}
		}
		return Result{}, fmt.Errorf("%w: %q", ErrRunNotFound, id)
	}
	s, err := l.open(rec.Snapshot)
	if err != nil {
		return Result{}, err
	}
	if s.Run != id {
		return Result{}, fmt.Errorf("%w: the run store holds a snapshot of run %q under %q", ErrSnapshotRun, s.Run, id)
	}
	return l.resume(ctx, rec.Snapshot, s, d, o, sk)
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
		r.endRound(ctx)
		if err := ctx.Err(); err != nil {
			return r.interrupt(ctx, err)
		}
		if r.round >= r.node.maxRounds() {
			r.fail(FailedRoundLimit, "round limit "+strconv.Itoa(r.node.maxRounds())+" reached")
			return r.end(ctx)
		}
		r.msgs[0] = Message{Role: RoleSystem, Content: r.systemPrompt()}
		resp, err := r.generate(ctx, Request{Messages: r.prompt(), Tools: r.specs})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return r.interrupt(ctx, cerr)
			}
			return r.interrupt(ctx, fmt.Errorf("react: model: %w", err))
		}
		if r.thread != nil {
			r.thread.observeUsage(resp.Usage)
		}
		r.round++
		r.appendAssistant(resp)
		if r.wave == nil {
			r.noToolCalls(ctx, resp.Text, CutOff(resp.FinishReason))
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
	cacheable := len(r.required) == 0 && len(r.typed) == 0 && r.inputs == nil
	if cacheable {
		if p := r.l.sys.Load(); p != nil && p.instructions == r.node.Instructions && p.textAnswers == r.node.TextAnswers {
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
	if r.node.TextAnswers {
		b.WriteString("\n")
		b.WriteString(r.cat.Text(prompt.SystemTextAnswers))
	}
	if len(r.typed) > 0 {
		b.WriteString("\n\n")
		b.WriteString(r.cat.Text(prompt.OutputsDeclared, "outputs", r.outputList()))
	}
	if in := r.inputsPrompt(); in != "" {
		b.WriteString("\n\n")
		b.WriteString(in)
	}
	if hint := r.cat.PhaseHint(r.required, r.written); hint != "" {
		b.WriteString("\n\n")
		b.WriteString(hint)
	}
	r.sys, r.sysFor = b.String(), len(r.outputs)+1
	if cacheable {
		r.l.sys.Store(&sysPrompt{instructions: r.node.Instructions, textAnswers: r.node.TextAnswers, text: r.sys})
	}
	return r.sys
}

// sysPrompt is the system prompt of a node without required or typed
// outputs, which depends only on the node's instructions and whether it
// takes text answers (and the loop's language).
type sysPrompt struct {
	instructions string
	textAnswers  bool
	text         string
}

func (r *run) written(key string) bool {
	_, ok := r.outputs[key]
	return ok
}

// noToolCalls applies the rule for a turn without a tool call: one stall,
// and a user message saying so. With Node.TextAnswers, a turn of text
// alone ends the run as finished, the text its answer, once every required
// output is set; before that, the message names the outputs still missing.
// A text cut off at the model's output limit (cut, see [CutOff]) never
// ends the run: a truncated answer is not the answer, and the model is
// told to answer again, shorter.
func (r *run) noToolCalls(ctx context.Context, text string, cut bool) {
	text = strings.TrimSpace(validText(text))
	next := r.cat.Text(prompt.NextCallTool)
	if r.node.TextAnswers && text != "" {
		missing := r.missing()
		switch {
		case len(missing) > 0:
			next = r.cat.Text(prompt.NextTextAnswerOutputs, "keys", r.cat.List(missing))
		case cut:
			next = r.cat.Text(prompt.NextTextAnswerCutOff)
		default:
			r.status, r.summary = Finished, text
			return
		}
	}
	r.emit(ctx, Event{Kind: EventNoToolCalls, RoundEvent: r.roundEvent()})
	r.appendMsg(Message{Role: RoleUser, Content: r.cat.Message(r.cat.Text(prompt.ReasonNoToolCalls), next)})
	r.noCalls++
	r.stall(ctx, "no_tool_calls", "")
}

// missing returns the required outputs not yet set, in declaration order.
func (r *run) missing() []string {
	var keys []string
	for _, k := range r.required {
		if _, ok := r.outputs[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// stall counts one no-progress and fails the node past the limit.
func (r *run) stall(ctx context.Context, reason, callID string) {
	r.stalls++
	limit := r.node.noProgressLimit()
	if r.hears(EventStall) {
		re := r.roundEvent()
		r.emit(ctx, Event{Kind: EventStall, RoundEvent: re, Stall: &StallEvent{RoundEvent: re, Count: r.stalls, Limit: limit, Reason: reason, CallID: callID}})
	}
	if r.stalls > limit {
		r.failNoProgress(limit)
	}
}

// failNoProgress fails the run past the no-progress limit, saying how many
// of the stalls were rounds without a tool call and, when there were
// some, what the host can do about it.
func (r *run) failNoProgress(limit int) {
	reason := fmt.Sprintf("%d consecutive rounds without progress (limit %d)", r.stalls, limit)
	if r.noCalls == 0 {
		r.fail(FailedNoProgress, reason)
		return
	}
	reason += fmt.Sprintf(", %d of them without a tool call (the model answered in text only, which is not progress under the specification's rule)", r.noCalls)
	remedy := "the model must end its turn by calling " + ToolFinish + " (its summary is the answer to the user); " +
		"to let a reply in text alone end the turn as the answer, set Node.TextAnswers"
	if r.node.TextAnswers {
		if missing := r.missing(); len(missing) > 0 {
			remedy = "with Node.TextAnswers a reply in text ends the turn only once every required output is set (" +
				strings.Join(missing, ", ") + " missing): the model must set them with " + ToolOutputSet + " first"
		} else {
			remedy = "with Node.TextAnswers a reply in text ends the turn unless it was cut off at the model's output limit " +
				"(the finish reason said so): raise the model's output limit, or instruct it to answer shorter"
		}
	}
	r.fail(FailedNoProgress, reason)
	r.failure.Remedy, r.failure.NoToolCalls = remedy, r.noCalls
}

func (r *run) resetStalls(ctx context.Context, callID string) {
	if r.stalls == 0 {
		return
	}
	r.stalls, r.noCalls = 0, 0
	if r.hears(EventStallReset) {
		re := r.roundEvent()
		r.emit(ctx, Event{Kind: EventStallReset, RoundEvent: re, Stall: &StallEvent{RoundEvent: re, Limit: r.node.noProgressLimit(), CallID: callID}})
	}
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
	if r.wave == nil {
		r.endRound(ctx)
	}
	r.keepSizes()
	res := r.result()
	var terr error // the thread's commit
	switch r.status {
	case Finished:
		r.emitEnd(ctx, EventFinished, res.Goal)
		terr = r.threadEnd(ctx, res)
		r.l.forget(r.id)
	case Failed:
		r.emitEnd(ctx, EventFailed, res.Goal)
		terr = r.threadEnd(ctx, res)
		r.l.forget(r.id)
	case Suspended:
		snap, err := r.snapshot(ctx)
		if err != nil {
			// Nothing resumable can be handed out (the state outgrew
			// Config.MaxSnapshotBytes, or the evidence could not be
			// exported): the run stops interrupted, without a snapshot.
			r.status, res.Status, res.Suspension = Interrupted, Interrupted, nil
			return res, errors.Join(err, r.threadEnd(ctx, res))
		}
		res.Snapshot = snap
		res.Suspension.Ticket = r.ticket
		if r.hears(EventSuspended) {
			// After the seal, so that what the person must decide carries
			// its ticket.
			re := r.roundEvent()
			r.emit(ctx, Event{Kind: EventSuspended, RoundEvent: re, Suspend: &SuspendEvent{RoundEvent: re, Suspension: *res.Suspension}})
		}
	case Interrupted:
	}
	kerr := r.keep(ctx, res)
	if r.status == Suspended {
		terr = r.threadEnd(ctx, res)
	}
	return res, errors.Join(terr, kerr)
}

// endRound reports the end of the round whose turn was received, once
// every call of the turn was answered.
func (r *run) endRound(ctx context.Context) {
	if r.roundOpen {
		r.roundOpen = false
		r.emit(ctx, Event{Kind: EventRoundEnd, RoundEvent: r.roundEvent()})
	}
}

// emitEnd reports a run that finished or failed.
func (r *run) emitEnd(ctx context.Context, kind EventKind, goal GoalStatus) {
	if !r.hears(kind) {
		return
	}
	re := r.roundEvent()
	e := &EndEvent{RoundEvent: re, Outputs: len(r.outputs), Goal: goal}
	if kind == EventFailed {
		e.Failure = r.failure
	}
	r.emit(ctx, Event{Kind: kind, RoundEvent: re, End: e})
}

// interrupt stops the run on err with a snapshot that resumes it.
func (r *run) interrupt(ctx context.Context, err error) (Result, error) {
	r.status = Interrupted
	res := r.result()
	// The snapshot is taken even when ctx is done: exporting the evidence
	// of an in-process ledger does not block.
	snap, serr := r.snapshot(context.WithoutCancel(ctx))
	if serr != nil {
		return res, errors.Join(err, serr, r.threadEnd(ctx, res))
	}
	res.Snapshot = snap
	kerr := r.keep(ctx, res)
	return res, errors.Join(err, kerr, r.threadEnd(ctx, res))
}

// keep records the run's result in Config.Runs: the snapshot of a stopped
// run, or the removal of a run that ended for good. It uses a context that
// is not cancelled with ctx, so an interrupted run is still kept. A failed
// removal is remembered and tried again at the Loop's next call.
func (r *run) keep(ctx context.Context, res Result) error {
	runs := r.l.runs
	if runs == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	switch res.Status {
	case Finished, Failed:
		if err := runs.Delete(ctx, r.id); err != nil {
			r.l.deletes.Put(r.id, struct{}{})
			return fmt.Errorf("react: run store: delete run %s: %w", r.id, err)
		}
		return nil
	default: // Suspended, Interrupted
	}
	r.l.deletes.Delete(r.id) // the run goes on: an earlier failed removal is moot
	rec := runstore.Run{ID: r.id, Owner: r.owner, Node: r.node.Name, Kind: runstore.Interrupted, Snapshot: res.Snapshot, Stopped: r.l.now()}
	if s := res.Suspension; s != nil {
		switch s.Kind {
		case SuspendApproval:
			rec.Kind = runstore.Approval
		case SuspendFollowUp:
			rec.Kind = runstore.FollowUp
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
	if t := r.thread; t != nil {
		res.Thread, res.Turn = t.id, t.turn
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
	res.Step = r.stepReport()
	if r.host != nil {
		res.HostState = append([]byte(nil), r.host.State...)
	}
	return res
}
