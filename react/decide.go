package react

import (
	"context"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/runstore"
)

// ClaimDecider is a claim store (Config.Claims) that keeps its claims in
// the same database as an approvals store and an audit, so that the loop
// claims a suspended run's snapshot, records the person's approval or
// refusal of the gated call and applies it in one atomic operation: one
// round trip where Claim, Record and then Approve or Decline take three,
// and no moment at which the snapshot is claimed and the decision not
// recorded or not applied. stores/postgres implements it. The loop uses
// it, for approval suspensions resumed with [Approve] or [Decline], only
// when DecidesFor reports the loop's own approvals store
// (Config.Guards.Approvals) and audit (Config.Audit); its answers are those
// of Claim followed by Record and Approve or Decline, and a decision the
// approvals store refuses, or that the audit holds another kind of
// decision on, leaves nothing claimed (as Claim followed by Release does).
type ClaimDecider interface {
	runstore.Claims
	// DecidesFor reports whether ClaimDecided applies decisions to a and
	// records them in au: whether both are the stores of this store's own
	// database (an identity check, never a guess; false for any other).
	DecidesFor(a guard.Approvals, au runstore.Audit) bool
	// ClaimDecided claims snapshot id of run, as Claim does, and in the
	// same operation, only when it claimed, records rec (rec.Run is run,
	// rec.Suspension id, rec.CallID the gated call, rec.Fingerprint its
	// fingerprint; Approved or Declined) as [runstore.Audit.Record] does and
	// applies the decision on the gated call: Approve with the fingerprint
	// when rec.Kind is Approved, else Decline. A decision the approvals
	// store would refuse claims nothing, changes nothing and returns its
	// error (wrapping guard.ErrNotPending); so does a suspension on which
	// the audit holds a decision of another kind (wrapping
	// runstore.ErrDecidedOtherwise). A snapshot that is taken or settled
	// returns false with a nil error, and nothing is recorded or decided.
	ClaimDecided(ctx context.Context, rec runstore.Decision) (claimed bool, err error)
}

// claim claims snapshot s for a resume with decision d (audited as rec;
// nil for Continue); applied reports that the decision was recorded and
// applied with the claim (a ClaimDecider).
func (l *Loop) claim(ctx context.Context, s *snapState, d Decision, rec *runstore.Decision) (claimed, applied bool, err error) {
	cd, ok := l.claims.(ClaimDecider)
	p := s.Suspension
	if !ok || rec == nil || s.Status != Suspended || p == nil || p.Kind != SuspendApproval || p.Approval == nil ||
		(d.kind != decideApprove && d.kind != decideDecline) || !cd.DecidesFor(l.approvals, l.audit) {
		claimed, err = l.claims.Claim(ctx, s.Run, s.ID)
		return claimed, false, err
	}
	claimed, err = cd.ClaimDecided(ctx, *rec)
	return claimed, claimed, err
}
