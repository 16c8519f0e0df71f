package guard

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
)

// GatedCall is a write call the write gate deferred for approval.
type GatedCall struct {
	CallID      string          `json:"call_id"`
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args"`
	Fingerprint string          `json:"fingerprint"`
	Round       int             `json:"round"`
}

// ErrNotPending is wrapped by the errors of [Approvals.Approve] and
// [Approvals.Decline] when the call they name is not the call this run's
// store recorded as waiting for approval: no call waits, another call
// waits, the fingerprint differs, or the call was already decided the other
// way. Nothing is granted or cleared.
var ErrNotPending = errors.New("guard: the call does not wait for approval")

// Approvals holds, per run, the write call waiting for approval and the
// decisions on gated calls. It is the server-side truth an approval is
// checked against: an approval grants only the call the write gate
// recorded ([Approvals.Gate]), with the same fingerprint, and is consumed
// by the one execution it allows. Implementations must be safe for
// concurrent use; Approve, Decline and Consume must be atomic. Run the
// conformance tests of package guardtest against an implementation.
type Approvals interface {
	// Gate records c as the call waiting for approval in run, replacing any
	// earlier one. A call id gated again asks anew: an earlier decision on
	// it no longer answers Approve or Decline. The store keeps its own copy
	// of c.Args.
	Gate(ctx context.Context, run string, c GatedCall) error
	// Gated returns the call waiting for approval in run.
	Gated(ctx context.Context, run string) (GatedCall, bool, error)
	// Approve grants one execution of the call waiting for approval in run
	// when it is the call callID with fingerprint, and clears the waiting
	// call. Approving a call that was already approved grants nothing more
	// and returns nil, so that a decision delivered twice (a retried
	// request whose first reply was lost) allows at most one execution.
	// Anything else grants nothing and returns an error wrapping
	// [ErrNotPending].
	Approve(ctx context.Context, run, callID, fingerprint string) error
	// Decline clears the call callID waiting for approval in run without
	// granting anything. Declining a call already declined returns nil;
	// anything else returns an error wrapping [ErrNotPending].
	Decline(ctx context.Context, run, callID string) error
	// Consume reports whether run holds an approval for fingerprint that was
	// not consumed yet, and consumes it.
	Consume(ctx context.Context, run, fingerprint string) (bool, error)
}

// WriteState is the state of a write in the [WriteLedger].
type WriteState uint8

// The write states.
const (
	WriteNone      WriteState = 0 // never started, or released to run again
	WriteRunning   WriteState = 1 // executing now
	WriteSucceeded WriteState = 2 // succeeded; the result is reused
	WriteFailed    WriteState = 3 // failed definitively; it did not take effect
	WriteUncertain WriteState = 4 // outcome unknown (timeout, dropped connection); verify before running again
)

// WriteRecord is the ledger's entry for one idempotency key.
type WriteRecord struct {
	Key    string          `json:"key"`
	Tool   string          `json:"tool"`
	State  WriteState      `json:"state"`
	Result json.RawMessage `json:"result,omitempty"`
	Code   errcode.Code    `json:"code,omitempty"`
	// Token is the fencing token of the claim that holds the key, or that
	// held it last (0 when the ledger issues none): every claim of a key
	// gets a larger token than any earlier claim of the ledger. Begin
	// returns it with a claim, the write gate hands it to the tool
	// (tool.Request.FencingToken), and Finish names the claim it closes
	// with it.
	Token uint64 `json:"token,omitempty"`
}

// ErrFenced is wrapped by the error of [WriteLedger.Finish] when the
// record names (by its Token) a claim that is no longer the key's
// current one, or a key that is neither running nor uncertain: the claim
// was taken over by another holder after its lease was lost, or the
// record was already closed. Nothing is stored; the holder must not act
// as if its record counted.
var ErrFenced = errors.New("guard: the write's claim is no longer current")

// WriteLedger records writes by idempotency key so that a write executes at
// most once across retries, resumes and replicas. Implementations must be
// safe for concurrent use; Begin must be atomic.
//
// A ledger shared by processes must not leave the claim of a process that
// died (WriteRunning, never finished) in flight for ever: it reports such a
// record as WriteUncertain, so the write is verified before it runs again
// (stores/postgres ties a claim to its process's database session,
// stores/sqlite to a lock file its process holds). It must never report
// the claim of a process that is alive as uncertain: a verifier could then
// answer "not applied" while the write is still running.
type WriteLedger interface {
	// Begin claims key for execution: when the key has no record, or a
	// record in WriteNone or WriteFailed, it stores WriteRunning and returns
	// (that record, true). Otherwise it returns the current record and
	// false.
	Begin(ctx context.Context, key, tool string) (WriteRecord, bool, error)
	// Finish stores the final record of key (WriteSucceeded, WriteFailed,
	// WriteUncertain), or WriteNone to release a claim that did not execute.
	// A record with a Token closes the claim of that token (the one Begin
	// returned, or the uncertain record Begin reported): a ledger that
	// issues tokens stores it only while that claim is the key's current
	// one and the key is running or uncertain, and otherwise stores nothing
	// and returns an error wrapping [ErrFenced]. A record without a Token
	// is stored whatever the key holds (an operator's correction).
	Finish(ctx context.Context, rec WriteRecord) error
	// Get returns the record of key.
	Get(ctx context.Context, key string) (WriteRecord, bool, error)
}

// LeasedWriteLedger is a [WriteLedger] whose claims hold under a lease
// that the holding process renews while it lives: a ledger shared by
// processes whose owners can lose touch with the database while they keep
// running (stores/postgres). Another process takes a claim over (reads it
// as WriteUncertain) only once the database sees the holder's lease
// expired; the holder, which renews it, counts it lost earlier, on its own
// clock, and must stop acting under it before anyone can take it over.
//
// The write gate runs a claimed write under the context Hold returns, so
// that a holder that loses its lease cancels its in-flight call: a tool
// that honours its context stops, and the request it had already sent
// carries a fencing token that a backend can refuse (see
// [WriteRecord].Token).
type LeasedWriteLedger interface {
	WriteLedger
	// Hold returns a context derived from ctx that is cancelled once the
	// lease under which this ledger claimed rec is lost (its cause then
	// wraps runstore.ErrLeaseLost in stores/postgres), and a function that
	// releases its resources; call it when the write returned. A rec this
	// ledger does not hold yields a context that is already cancelled.
	Hold(ctx context.Context, rec WriteRecord) (context.Context, context.CancelFunc)
}

// ApprovingWriteLedger is a [WriteLedger] that keeps its records in the
// same database as an [Approvals] store, so that it can claim a write and
// consume the write's approval in one atomic operation: one round trip
// where Begin and Consume take two, and nothing to release when no
// approval is held. The write gate uses it, for writes that need approval,
// only when ConsumesFrom reports that it consumes the approvals of the
// gate's own Approvals store; the gate's answers are then the same as with
// Begin and Consume. stores/postgres and stores/sqlite implement it. Run
// the conformance tests of guardtest.RunApprovingWriteLedger against an
// implementation.
type ApprovingWriteLedger interface {
	WriteLedger
	// ConsumesFrom reports whether BeginApproved consumes the approvals
	// that a grants: whether a is this ledger's own database's Approvals
	// store (an identity check, never a guess; false for any other store).
	ConsumesFrom(a Approvals) bool
	// BeginApproved claims key for execution and consumes one approval of
	// fingerprint in run, atomically, when both are possible: the key has
	// no record, or one in WriteNone or WriteFailed, and run holds an
	// approval for fingerprint not consumed yet. It then stores WriteRunning
	// and returns (that record, true). When the key could be claimed but no
	// approval is held, it changes nothing and returns false with the key's
	// record (State WriteNone for a key without record). Otherwise it
	// consumes nothing and returns the current record and false, as Begin
	// does (WriteRunning, WriteSucceeded, WriteUncertain; a ledger shared by
	// processes reports the claim of a dead process as WriteUncertain).
	BeginApproved(ctx context.Context, key, tool, run, fingerprint string) (WriteRecord, bool, error)
}

// GatingWriteLedger is an [ApprovingWriteLedger] that also records a write
// as waiting for approval in the same operation when it claims nothing for
// want of an approval: the write gate's deferral of an unapproved write
// then costs one store operation where BeginApproved and Approvals.Gate
// take two. The gate uses it only when ConsumesFrom reports its own
// Approvals store; its answers are the same.
type GatingWriteLedger interface {
	ApprovingWriteLedger
	// BeginApprovedOrGate is BeginApproved, except that when the key could
	// be claimed but run holds no approval for c.Fingerprint, it also
	// records c as the call of run waiting for approval, exactly as the
	// ledger's Approvals store's Gate does, and returns gated true. When
	// it claims the key, or finds it running, succeeded or uncertain, it
	// gates nothing.
	BeginApprovedOrGate(ctx context.Context, key, tool, run string, c GatedCall) (rec WriteRecord, claimed, gated bool, err error)
}

// RecordingWriteLedger is a [WriteLedger] that keeps its records in the
// same database as an evidence ledger, so that it can store a write's
// final record and the evidence of its execution in one operation: one
// round trip where Finish and evidence.Ledger.Append take two. The write
// gate uses it when RecordsTo reports the gate's own evidence ledger: the
// evidence guard inside the gate then hands the record of the execution to
// the gate instead of appending it, and the gate stores both together.
type RecordingWriteLedger interface {
	WriteLedger
	// RecordsTo reports whether FinishRecorded appends to l: l is this
	// ledger's own database's evidence ledger, or an evidence.Cache over
	// it (an identity check, never a guess).
	RecordsTo(l evidence.Ledger) bool
	// FinishRecorded stores rec as Finish does and, in the same operation
	// and only when rec is stored, appends r to the evidence of run as
	// evidence.Ledger.Append does. When rec is fenced ([ErrFenced]) or the
	// operation fails, neither is stored.
	FinishRecorded(ctx context.Context, rec WriteRecord, run string, r evidence.Record) error
}
