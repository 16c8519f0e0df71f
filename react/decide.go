package react

import (
	"context"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/runstore"
)

// ClaimDecider is a claim store (Config.Claims) that keeps its claims in
// the same database as an approvals store, so that the loop claims a
// suspended run's snapshot and applies the user's approval or refusal of
// the gated call in one atomic operation: one round trip where Claim and
// then Approve or Decline take two, and no moment at which the snapshot is
// claimed and the decision not applied. stores/postgres implements it.
// The loop uses it, for approval suspensions resumed with [Approve] or
// [Decline], only when DecidesFor reports the loop's own approvals store
// (Config.Guards.Approvals); its answers are those of Claim followed by
// Approve or Decline, and a decision the approvals store refuses leaves
// nothing claimed (as Claim followed by Release does).
type ClaimDecider interface {
	runstore.Claims
	// DecidesFor reports whether ClaimDecided applies decisions to a:
	// whether a is the approvals store of this store's own database (an
	// identity check, never a guess; false for any other store).
	DecidesFor(a guard.Approvals) bool
	// ClaimDecided claims snapshot id of run, as Claim does, and in the
	// same operation, only when it claimed, applies the decision on the
	// call callID waiting for approval in run: Approve with fingerprint
	// when approve is true, else Decline. A decision the approvals store
	// would refuse claims nothing, changes nothing and returns its error
	// (wrapping guard.ErrNotPending); a snapshot that is taken or settled
	// returns false with a nil error, and nothing is decided.
	ClaimDecided(ctx context.Context, run, id, callID, fingerprint string, approve bool) (claimed bool, err error)
}

// claim claims snapshot s for a resume with decision d; applied reports
// that the decision was applied with the claim (a ClaimDecider).
func (l *Loop) claim(ctx context.Context, s *snapState, d Decision) (claimed, applied bool, err error) {
	cd, ok := l.claims.(ClaimDecider)
	p := s.Suspension
	if !ok || s.Status != Suspended || p == nil || p.Kind != SuspendApproval || p.Approval == nil ||
		(d.kind != decideApprove && d.kind != decideDecline) || !cd.DecidesFor(l.approvals) {
		claimed, err = l.claims.Claim(ctx, s.Run, s.ID)
		return claimed, false, err
	}
	claimed, err = cd.ClaimDecided(ctx, s.Run, s.ID, p.Approval.CallID, p.Approval.Fingerprint, d.kind == decideApprove)
	return claimed, claimed, err
}
