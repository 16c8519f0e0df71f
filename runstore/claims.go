package runstore

import (
	"context"
	"errors"
	"sync"
)

// Claims records which snapshots have been taken for a resume, so that each
// snapshot is resumed at most once, and whether that resume got the run to
// its next stop. Implementations must be safe for concurrent use, across
// processes where they are shared, and Claim must be atomic: of any number
// of concurrent claims of one id, exactly one succeeds. Run the conformance
// tests of package runstoretest against an implementation.
//
// A claim is in one of three states: free (never claimed, or released),
// taken (claimed by a resume that is still going on, or that died before it
// settled) and settled (final). The loop (package react) claims a snapshot
// before it applies the user's decision, releases the claim when the resume
// failed before the decision applied, and settles it once the resume
// stopped after the decision applied, whatever the result.
type Claims interface {
	// Claim takes snapshot id of run for one resume. It returns true when
	// the id was free and is now claimed, false when it is taken or
	// settled. There is one exception: a store that can prove that the
	// resume holding a taken claim is dead (its process ended: see
	// stores/postgres and stores/sqlite) gives the claim to the caller and
	// returns true, so that a resume killed after it applied the decision
	// does not lose the approval for good; the new resume applies the same
	// decision again, which the approvals store answers without a second
	// grant. The claim of a live resume is never taken over, and a settled
	// claim never. A claim is kept until it is released; a store that
	// prunes claims (retention) must document it, and the loops that share
	// it must refuse snapshots older than that retention.
	Claim(ctx context.Context, run, id string) (bool, error)
	// Release frees a taken claim of id, so that the same snapshot can be
	// resumed again: the loop calls it only when the resume failed before
	// it changed anything. Releasing an id that is not claimed, or whose
	// claim is settled, is a no-op; a store that records owners releases
	// only the caller's own claim.
	Release(ctx context.Context, run, id string) error
	// Settle makes the claim of id final: the resume that holds it got the
	// run to its next stop (a new snapshot, or the end of the run), so the
	// snapshot must never be resumed again, not even by a takeover. It is
	// idempotent; settling an id that is not claimed records it as settled
	// all the same.
	Settle(ctx context.Context, run, id string) error
}

// ErrLeaseLost is the cause of the contexts a lease-holding store
// cancels, and is wrapped by the errors of its claims and records, when
// the lease under which this process claimed is lost: the process could
// not renew it in time, so another process may take its claims over once
// the lease has expired in the database. The work done under the lost
// lease must stop, and nothing it records counts (see [LeasedClaims] and
// guard.LeasedWriteLedger).
var ErrLeaseLost = errors.New("runstore: lease lost")

// LeasedClaims is a [Claims] whose claims hold under a lease the claiming
// process renews while it lives (stores/postgres): another process takes
// an unsettled claim over only once the database sees the holder's lease
// expired, and the holder, which counts its lease lost earlier on its own
// clock, must stop before then. The loop (package react) runs a resume
// under the context Hold returns, and a resume whose claim was taken over
// records nothing: its Settle (and the store's save of the run, when its
// Runs come from the same store) fails with an error wrapping
// [ErrLeaseLost], and the loop returns the snapshot it resumed.
type LeasedClaims interface {
	Claims
	// Hold returns a context derived from ctx that is cancelled, with a
	// cause wrapping [ErrLeaseLost], once the lease under which this store
	// claimed id of run is lost, and a function that releases it. A claim
	// this store does not hold yields a context that is already cancelled.
	Hold(ctx context.Context, run, id string) (context.Context, context.CancelFunc)
}

// MemoryClaims is the in-memory [Claims]. It is safe for concurrent use; its
// zero value is not usable, build it with [NewMemoryClaims]. Claims live as
// long as the process and are never pruned (about a hundred bytes a
// snapshot resumed), so only the process that holds them is protected: a
// service on several replicas, or one that restarts, uses a durable store.
// Every holder of a MemoryClaims claim is in its own process, so it never
// takes a claim over: a resume that panicked before it settled keeps its
// snapshot claimed for as long as the process lives.
type MemoryClaims struct {
	mu      sync.Mutex
	claimed map[claimKey]bool // true when settled
}

type claimKey struct{ run, id string }

// NewMemoryClaims returns an empty in-memory claim store.
func NewMemoryClaims() *MemoryClaims {
	return &MemoryClaims{claimed: make(map[claimKey]bool)}
}

var _ Claims = (*MemoryClaims)(nil)

// Claim implements [Claims.Claim].
func (m *MemoryClaims) Claim(_ context.Context, run, id string) (bool, error) {
	k := claimKey{run, id}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.claimed[k]; ok {
		return false, nil
	}
	m.claimed[k] = false
	return true, nil
}

// Release implements [Claims.Release].
func (m *MemoryClaims) Release(_ context.Context, run, id string) error {
	k := claimKey{run, id}
	m.mu.Lock()
	defer m.mu.Unlock()
	if settled, ok := m.claimed[k]; ok && !settled {
		delete(m.claimed, k)
	}
	return nil
}

// Settle implements [Claims.Settle].
func (m *MemoryClaims) Settle(_ context.Context, run, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claimed[claimKey{run, id}] = true
	return nil
}
