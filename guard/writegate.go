package guard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// UncertainFunc reports whether a write that FAILED with code may still
// have taken effect, so that it must be verified before it runs again.
type UncertainFunc func(code errcode.Code) bool

// UncertainWrite is the default [UncertainFunc]: true for TOOL_TIMEOUT,
// TOOL_UNREACHABLE, TOOL_IO_ERROR and MCP_RPC_ERROR, the failures after
// which nobody knows whether the backend applied the write. Every other
// failure is taken as definitive: the write did not take effect.
func UncertainWrite(code errcode.Code) bool {
	switch code { //nolint:exhaustive // every other code is a definitive failure
	case errcode.ToolTimeout, errcode.ToolUnreachable, errcode.ToolIOError, errcode.MCPRPCError:
		return true
	}
	return false
}

// WriteGateOptions configures [WriteGate]. The zero value is usable, but a
// host that approves writes must share its Approvals store with the loop
// (see [Options], which does).
type WriteGateOptions struct {
	// Approvals holds the gated call and the approvals of each run. Nil
	// means a new [MemoryApprovals] private to this guard, which nobody
	// else can approve through: leave it nil only with a RequireApproval
	// that lets writes through.
	Approvals Approvals
	// WriteLedger records writes by idempotency key. Nil means a new
	// [MemoryWriteLedger].
	WriteLedger WriteLedger
	// Catalog renders reasons and next steps; nil means English.
	Catalog *prompt.Catalog
	// RequireApproval reports whether a write call needs the user's
	// approval; nil means every write does. Return false for writes the
	// host pre-approves; they still pass the ledger.
	RequireApproval func(call invoker.Call) bool
	// Uncertain decides which failures leave a write uncertain; nil means
	// [UncertainWrite].
	Uncertain UncertainFunc
	// Ledger, when set, receives a SUCCESS record for every call answered
	// by reusing an earlier successful write (§4 counts the reuse as a
	// success), so the model can cite that call like any executed one
	// (builtin_output_set's sourceRef, result provenance). [Default] passes
	// the chain's evidence ledger. The record carries the call's
	// fingerprint, so a reuse counts towards the fingerprint guard's limit
	// like an execution: a model that calls an applied write again and
	// again is stopped with FINGERPRINT_TRIP instead of being answered
	// SUCCESS (reused) until the round limit. Nil records nothing.
	Ledger evidence.Ledger
}

// WriteGate returns the write gate (see the package documentation for its
// place in the chain). It acts on calls whose tool is a write
// (tool.Effect.IsWrite: Write or Unspecified); read tools and calls without
// a tool pass through untouched.
//
// The call's idempotency key is call.IdempotencyKey, or, when empty, one
// derived from the run and the call's fingerprint ([IdempotencyKey]); it is
// set on the call passed down, so the tool and the retry guard see it. The
// gate then claims the key in the write ledger ([WriteLedger.Begin]):
//
//   - already succeeded: SUCCESS with the stored result (RESULT_WRITE_REUSED),
//     no second execution (noted in call.Execution as a reuse);
//   - running: DEFERRED WRITE_IN_FLIGHT (NEXT_WRITE_IN_FLIGHT);
//   - uncertain: the tool's Verify is asked. Applied: the result is stored
//     and reused as above. Not applied: the claim is released and taken
//     again, so the write may run (after a new approval). Unknown, an
//     error, or no verifier: DEFERRED WRITE_PENDING_VERIFY
//     (NEXT_WRITE_PENDING_VERIFY). An uncertain write never runs again
//     before its key is verified.
//
// With the claim held, the gate consumes an approval of this exact call
// ([Approvals.Consume] with the fingerprint: tool plus canonical
// arguments; a call with other arguments needs its own) unless
// RequireApproval says none is needed. Without one it releases the claim,
// records the call as gated ([Approvals.Gate]) and answers DEFERRED
// APPROVAL_REQUIRED, whose next step (NEXT_APPROVAL) names
// builtin_node_approval and the gated tool. When WriteLedger is an
// [ApprovingWriteLedger] that consumes the approvals of Approvals
// (ConsumesFrom), a write that needs approval is claimed and its approval
// consumed in one operation ([ApprovingWriteLedger.BeginApproved]), and
// without an approval nothing is claimed (so nothing is released): the
// answers are the same, with one store operation where there were two.
// RequireApproval is then asked before the claim rather than after it.
//
// After next returns, the ledger gets the outcome: SUCCESS stores the
// result's JSON (WriteSucceeded); FAILED is WriteUncertain when Uncertain
// says so, else WriteFailed; REJECTED or DEFERRED from inside (the write did
// not run) releases the claim. When an approved write FAILED, its next step
// becomes NEXT_APPROVED_FAILED: tell the user via builtin_node_follow_up,
// builtin_node_fail if they stop, never remedy it with another write. A Go
// error from next, or a panic, records the write as uncertain; the error is
// returned and the panic goes on.
//
// The claim's fencing token ([WriteRecord].Token) is set on the call
// passed down (invoker.Call.FencingToken, which the default invoker hands
// to the tool as tool.Request.FencingToken), and every record the gate
// stores for the claim names it, so that a holder whose claim was taken
// over records nothing: [WriteLedger.Finish] answers [ErrFenced], which the
// gate returns as an error. With a [LeasedWriteLedger] the write runs
// under the context of [LeasedWriteLedger.Hold]: a holder that loses its
// lease cancels its in-flight write, records it uncertain, and returns an
// error naming the lost lease (see docs/architecture.md, "Failover").
//
// Arguments of a write that are not JSON are REJECTED ARG_JSON_INVALID
// here, so that no write runs ungated. Store errors are returned as Go
// errors with the zero observation; ledger updates after the execution use
// a context that is not cancelled with ctx, so a cancelled caller still
// leaves a truthful ledger. The interceptor is safe for concurrent use:
// concurrent calls of one write execute it at most once.
func WriteGate(opts WriteGateOptions) invoker.Interceptor {
	g := &writeGate{
		approvals: opts.Approvals,
		ledger:    opts.WriteLedger,
		cat:       opts.Catalog,
		require:   opts.RequireApproval,
		uncertain: opts.Uncertain,
		evidence:  opts.Ledger,
	}
	if g.approvals == nil {
		g.approvals = NewMemoryApprovals()
	}
	if g.ledger == nil {
		g.ledger = NewMemoryWriteLedger()
	}
	if g.uncertain == nil {
		g.uncertain = UncertainWrite
	}
	if al, ok := g.ledger.(ApprovingWriteLedger); ok && al.ConsumesFrom(g.approvals) {
		g.approving = al
		g.gating, _ = al.(GatingWriteLedger)
	}
	if rl, ok := g.ledger.(RecordingWriteLedger); ok && g.evidence != nil && rl.RecordsTo(g.evidence) {
		g.recording = rl
	}
	return g.intercept
}

type writeGate struct {
	approvals Approvals
	ledger    WriteLedger
	approving ApprovingWriteLedger // ledger, when it consumes the approvals of approvals; else nil
	gating    GatingWriteLedger    // approving, when it also gates; else nil
	recording RecordingWriteLedger // ledger, when it appends to evidence; else nil
	cat       *prompt.Catalog
	require   func(invoker.Call) bool
	uncertain UncertainFunc
	evidence  evidence.Ledger
}

// IdempotencyKey returns the idempotency key the write gate derives for a
// call of run with fingerprint fp when the call carries none: a hex
// SHA-256 of both, so the same write in the same run always gets the same
// key and different runs never share one.
func IdempotencyKey(run, fp string) string {
	var buf [80]byte
	b := binary.AppendUvarint(buf[:0], uint64(len(run)))
	b = append(b, run...)
	b = append(b, fp...)
	sum := sha256.Sum256(b)
	var key [3 + 32]byte
	copy(key[:], "rg-")
	hex.Encode(key[3:], sum[:16])
	return string(key[:]) // the one allocation
}

// syntaxDetail describes for the model why arguments are not JSON: the
// canonicaliser's offset and message, without its package prefix.
func syntaxDetail(err error) string {
	var se *fingerprint.SyntaxError
	if errors.As(err, &se) {
		return tool.ClipDetail("at byte " + strconv.Itoa(se.Offset) + ": " + se.Msg)
	}
	return "not valid JSON"
}

// maxClaims bounds how often one call tries to claim its key after a
// verification released it; past it, someone else holds the key.
const maxClaims = 3

func (g *writeGate) intercept(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
	t := call.Tool
	if t == nil || !t.Effect.IsWrite() {
		return next(ctx, call)
	}
	fp, err := callFingerprint(&call)
	if err != nil {
		return observation.Rejected(errcode.ArgJSONInvalid,
			g.cat.Reason(errcode.ArgJSONInvalid, "tool", call.Name, "detail", syntaxDetail(err)),
			g.cat.Text(prompt.NextFixJSON, "tool", call.Name)).WithCause(err), nil
	}
	if call.IdempotencyKey == "" {
		call.IdempotencyKey = IdempotencyKey(call.Run, fp)
	}
	key := call.IdempotencyKey

	// A ledger that consumes the gate's approvals claims the key and the
	// approval of a write that needs one together (one operation).
	together := g.approving != nil && (g.require == nil || g.require(call))
	claimed := false
	var claim WriteRecord
	for range maxClaims {
		var rec WriteRecord
		var ok bool
		var err error
		switch {
		case together && g.gating != nil:
			var gated bool
			gc := GatedCall{CallID: call.ID, Tool: call.Name, Args: call.Args, Fingerprint: fp, Round: call.Round}
			rec, ok, gated, err = g.gating.BeginApprovedOrGate(ctx, key, call.Name, call.Run, gc)
			if err == nil && !ok && gated {
				return g.approvalRequired(call), nil
			}
		case together:
			rec, ok, err = g.approving.BeginApproved(ctx, key, call.Name, call.Run, fp)
		default:
			rec, ok, err = g.ledger.Begin(ctx, key, call.Name)
		}
		if err != nil {
			return observation.Observation{}, fmt.Errorf("guard: write gate: claim %q: %w", key, err)
		}
		if ok {
			claimed, claim = true, rec
			break
		}
		switch rec.State {
		case WriteSucceeded:
			return g.reused(ctx, call, rec.Result)
		case WriteRunning:
			return g.inFlight(call), nil
		case WriteUncertain:
			obs, again, err := g.verify(ctx, call, t, rec)
			if err != nil || !again {
				return obs, err
			}
			// Verified not applied and released: claim it again.
		case WriteNone, WriteFailed:
			if together { // free, but no approval: nothing was claimed
				return g.gate(ctx, call, fp)
			}
			return observation.Observation{}, fmt.Errorf("guard: write gate: ledger refused a claim of %q in state %d", key, rec.State)
		default:
			return observation.Observation{}, fmt.Errorf("guard: write gate: ledger refused a claim of %q in state %d", key, rec.State)
		}
	}
	if !claimed {
		return g.inFlight(call), nil
	}
	call.FencingToken = claim.Token
	if together { // the approval was consumed with the claim
		return g.execute(ctx, call, claim, true, next)
	}

	approved := false
	if g.require == nil || g.require(call) {
		ok, err := g.approvals.Consume(ctx, call.Run, fp)
		if err != nil {
			return observation.Observation{}, errors.Join(
				fmt.Errorf("guard: write gate: consume approval: %w", err), g.release(ctx, call, claim))
		}
		if !ok {
			if err := g.release(ctx, call, claim); err != nil {
				return observation.Observation{}, err
			}
			return g.gate(ctx, call, fp)
		}
		approved = true
	}
	return g.execute(ctx, call, claim, approved, next)
}

// gate records call as waiting for approval and answers APPROVAL_REQUIRED.
func (g *writeGate) gate(ctx context.Context, call invoker.Call, fp string) (observation.Observation, error) {
	gc := GatedCall{CallID: call.ID, Tool: call.Name, Args: call.Args, Fingerprint: fp, Round: call.Round}
	if err := g.approvals.Gate(ctx, call.Run, gc); err != nil {
		return observation.Observation{}, fmt.Errorf("guard: write gate: gate call: %w", err)
	}
	return g.approvalRequired(call), nil
}

// approvalRequired is the answer to a call that waits for approval.
func (g *writeGate) approvalRequired(call invoker.Call) observation.Observation {
	return observation.Deferred(errcode.ApprovalRequired,
		g.cat.Reason(errcode.ApprovalRequired, "tool", call.Name),
		g.cat.Text(prompt.NextApproval, "tool", call.Name))
}

// uncertainKey is the context key under which the write gate hands its
// UncertainFunc to the guards inside it (the retry guard).
type uncertainKey struct{}

// uncertainOf returns the UncertainFunc of the write gate that ctx passed
// through, or UncertainWrite.
func uncertainOf(ctx context.Context) UncertainFunc {
	if u, ok := ctx.Value(uncertainKey{}).(UncertainFunc); ok {
		return u
	}
	return UncertainWrite
}

// execute runs the write claimed by claim and records its outcome. With a
// LeasedWriteLedger the write runs under the claim's lease: it is
// cancelled when the lease is lost.
func (g *writeGate) execute(ctx context.Context, call invoker.Call, claim WriteRecord, approved bool, next invoker.Handler) (obs observation.Observation, err error) {
	settle := context.WithoutCancel(ctx)
	key := claim.Key
	run := ctx
	if lw, ok := g.ledger.(LeasedWriteLedger); ok {
		var stop context.CancelFunc
		run, stop = lw.Hold(ctx, claim)
		defer stop()
	}
	run = context.WithValue(run, uncertainKey{}, g.uncertain)
	var sink *evidenceSink
	if g.recording != nil {
		// The evidence guard inside hands its record here, to be stored
		// with the write's record in one operation.
		sink = &evidenceSink{ledger: g.evidence, run: call.Run}
		run = context.WithValue(run, sinkKey{}, sink)
	}
	done := false
	defer func() {
		if !done { // next panicked: nobody knows whether the write applied
			_ = g.flush(settle, sink)
			_ = g.ledger.Finish(settle, WriteRecord{Key: key, Tool: call.Name, State: WriteUncertain, Token: claim.Token})
		}
	}()
	obs, err = next(run, call)
	done = true
	if err != nil {
		if ctx.Err() == nil && run.Err() != nil {
			// The lease ended, not the caller's context: say so.
			err = fmt.Errorf("guard: write gate: %q stopped: %w", key, context.Cause(run))
		}
		ferr := g.flush(settle, sink)
		if ferr == nil {
			ferr = g.ledger.Finish(settle, WriteRecord{Key: key, Tool: call.Name, State: WriteUncertain, Token: claim.Token})
		}
		if ferr != nil {
			return observation.Observation{}, errors.Join(err, fmt.Errorf("guard: write gate: recording the write as uncertain: %w", ferr))
		}
		return observation.Observation{}, err
	}
	rec := WriteRecord{Key: key, Tool: call.Name, Token: claim.Token}
	switch obs.Outcome() {
	case outcome.Success:
		rec.State = WriteSucceeded
		rec.Result = resultJSON(obs)
	case outcome.Failed:
		rec.State, rec.Code = WriteFailed, obs.Code()
		if g.uncertain(obs.Code()) {
			rec.State = WriteUncertain
		}
		if approved {
			obs = obs.WithNext(g.cat.Text(prompt.NextApprovedFailed, "tool", call.Name))
		}
	case outcome.Rejected, outcome.Deferred:
		rec.State = WriteNone // stopped inside before it ran
	default: // a zero observation: the handler broke its contract
		rec.State = WriteUncertain
	}
	if err := g.finish(settle, rec, sink); err != nil {
		return observation.Observation{}, fmt.Errorf("guard: write gate: record %q: %w", key, err)
	}
	return obs, nil
}

// finish stores rec, with the evidence record the sink holds when it holds
// one (one operation of the RecordingWriteLedger).
func (g *writeGate) finish(ctx context.Context, rec WriteRecord, sink *evidenceSink) error {
	if sink == nil || !sink.held {
		return g.ledger.Finish(ctx, rec)
	}
	if err := g.recording.FinishRecorded(ctx, rec, sink.run, sink.rec); err != nil {
		return err
	}
	sink.held = false
	if c, ok := g.evidence.(*evidence.Cache); ok {
		return c.Appended(ctx, sink.run, sink.rec)
	}
	return nil
}

// flush appends the evidence record the sink holds, if any, on its own.
func (g *writeGate) flush(ctx context.Context, sink *evidenceSink) error {
	if sink == nil || !sink.held {
		return nil
	}
	if err := g.evidence.Append(ctx, sink.run, sink.rec); err != nil {
		return fmt.Errorf("guard: evidence: record call %q attempt %d: %w", sink.rec.CallID, sink.rec.Attempt, err)
	}
	sink.held = false
	return nil
}

// evidenceSink receives, from the evidence guard inside a write gate whose
// ledger is a RecordingWriteLedger, the record of the write's execution,
// which the gate stores together with the write's record.
type evidenceSink struct {
	ledger evidence.Ledger // the evidence guard's ledger must be this one
	run    string
	held   bool
	rec    evidence.Record
}

// sinkKey is the context key of the evidenceSink.
type sinkKey struct{}

// sinkFor returns the sink of ctx that takes the records a guard writing
// to l would append for run, or nil.
func sinkFor(ctx context.Context, l evidence.Ledger, run string) *evidenceSink {
	s, ok := ctx.Value(sinkKey{}).(*evidenceSink)
	if !ok || s.run != run || !sameLedger(s.ledger, l) {
		return nil
	}
	return s
}

// sameLedger reports whether a and b are the same ledger value, without
// comparing values whose type is not comparable.
func sameLedger(a, b evidence.Ledger) bool {
	if a == nil || b == nil {
		return false
	}
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// verify asks the tool whether the uncertain write rec applied. It returns
// the observation to answer with, or again=true when the write verified as
// not applied and its claim was released. What it records closes rec's
// claim (its Token): if another process claimed the key meanwhile, nothing
// is recorded and the error wraps ErrFenced.
func (g *writeGate) verify(ctx context.Context, call invoker.Call, t *tool.Tool, rec WriteRecord) (observation.Observation, bool, error) {
	if t.Verify == nil {
		return g.pendingVerify(call), false, nil
	}
	key := rec.Key
	status, result, err := safeVerify(ctx, t.Verify, key)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return observation.Observation{}, false, cerr
		}
		return g.pendingVerify(call), false, nil
	}
	switch status {
	case tool.WriteApplied:
		raw := encodePayload(result)
		if err := g.ledger.Finish(context.WithoutCancel(ctx), WriteRecord{Key: key, Tool: call.Name, State: WriteSucceeded, Result: raw, Token: rec.Token}); err != nil {
			return observation.Observation{}, false, fmt.Errorf("guard: write gate: record verified %q: %w", key, err)
		}
		obs, err := g.reused(ctx, call, raw)
		return obs, false, err
	case tool.WriteNotApplied:
		if err := g.release(ctx, call, rec); err != nil {
			return observation.Observation{}, false, err
		}
		return observation.Observation{}, true, nil
	case tool.WriteUnknown:
	}
	return g.pendingVerify(call), false, nil
}

// safeVerify calls v, turning a panic into an error: a verifier is tool
// code, and a broken one leaves the write unverified, not the host down.
func safeVerify(ctx context.Context, v tool.VerifyFunc, key string) (st tool.WriteStatus, res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			st, res, err = tool.WriteUnknown, nil, fmt.Errorf("verify panicked: %v", p)
		}
	}()
	return v(ctx, key)
}

// release gives up the claim of rec, which did not execute.
func (g *writeGate) release(ctx context.Context, call invoker.Call, rec WriteRecord) error {
	if err := g.ledger.Finish(context.WithoutCancel(ctx), WriteRecord{Key: rec.Key, Tool: call.Name, State: WriteNone, Token: rec.Token}); err != nil {
		return fmt.Errorf("guard: write gate: release %q: %w", rec.Key, err)
	}
	return nil
}

func (g *writeGate) reused(ctx context.Context, call invoker.Call, result json.RawMessage) (observation.Observation, error) {
	var data any
	if len(result) > 0 {
		data = result
	}
	if g.evidence != nil {
		// With the fingerprint: a reuse is not an execution, but it counts
		// as a repeat of the call (the fingerprint guard's limit).
		fp, _ := callFingerprint(&call)
		r := evidence.Record{CallID: call.ID, Tool: call.Name, Fingerprint: fp,
			Outcome: outcome.Success, Payload: encodePayload(data), Attempt: max(call.Attempt, 1), Round: call.Round}
		if err := g.evidence.Append(ctx, call.Run, r); err != nil {
			return observation.Observation{}, fmt.Errorf("guard: write gate: record reused write of call %q: %w", call.ID, err)
		}
	}
	call.Execution.MarkReused()
	return observation.Success(g.cat.Text(prompt.ResultWriteReused, "tool", call.Name), data), nil
}

func (g *writeGate) inFlight(call invoker.Call) observation.Observation {
	return observation.Deferred(errcode.WriteInFlight,
		g.cat.Reason(errcode.WriteInFlight, "tool", call.Name),
		g.cat.Text(prompt.NextWriteInFlight, "tool", call.Name))
}

func (g *writeGate) pendingVerify(call invoker.Call) observation.Observation {
	return observation.Deferred(errcode.WritePendingVerify,
		g.cat.Reason(errcode.WritePendingVerify, "tool", call.Name),
		g.cat.Text(prompt.NextWritePendingVerify, "tool", call.Name))
}
