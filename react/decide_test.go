package react_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// claimDecider is a mortalClaims that decides in its claim, over a memory
// approvals store, under one lock, as one database would. It counts the
// decisions applied outside its claims (through the store itself).
type claimDecider struct {
	*mortalClaims
	mu        sync.Mutex
	mu2       *sync.Mutex // the mortalClaims' lock
	approvals *countingDecisions
	audit     *runstore.MemoryAudit
	decided   atomic.Int32 // decisions applied with a claim
}

var _ react.ClaimDecider = (*claimDecider)(nil)

// countingDecisions counts Approve and Decline calls made on it.
type countingDecisions struct {
	*guard.MemoryApprovals
	calls atomic.Int32
}

func (c *countingDecisions) Approve(ctx context.Context, run, callID, fp string) error {
	c.calls.Add(1)
	return c.MemoryApprovals.Approve(ctx, run, callID, fp)
}

func (c *countingDecisions) Decline(ctx context.Context, run, callID string) error {
	c.calls.Add(1)
	return c.MemoryApprovals.Decline(ctx, run, callID)
}

func (d *claimDecider) DecidesFor(a guard.Approvals, au runstore.Audit) bool {
	return a == guard.Approvals(d.approvals) && au == runstore.Audit(d.audit)
}

func (d *claimDecider) ClaimDecided(ctx context.Context, rec runstore.Decision) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	run, id := rec.Run, rec.Suspension
	if prior, ok, err := d.audit.Decided(ctx, run, id); err != nil || (ok && prior.Kind != rec.Kind) {
		if err == nil {
			err = runstore.ErrDecidedOtherwise
		}
		return false, err
	}
	ok, err := d.Claim(ctx, run, id)
	if err != nil || !ok {
		return false, err
	}
	if rec.Kind == runstore.Approved {
		err = d.approvals.MemoryApprovals.Approve(ctx, run, rec.CallID, rec.Fingerprint)
	} else {
		err = d.approvals.MemoryApprovals.Decline(ctx, run, rec.CallID)
	}
	if err == nil {
		_, _, err = d.audit.Record(ctx, rec)
	}
	if err != nil { // as if neither happened: one operation
		d.mu2.Lock()
		delete(d.state, [2]string{run, id})
		d.log = d.log[:len(d.log)-1]
		d.mu2.Unlock()
		return false, err
	}
	d.decided.Add(1)
	return true, nil
}

// A claim store that decides in its claim answers exactly as Claim and
// then Approve or Decline do, and the loop asks the approvals store for
// no decision of its own.
func TestResume_ClaimDecider(t *testing.T) {
	setup := func(t *testing.T) (*env, *claimDecider, *fake, []byte) {
		list, _, create := sitesTools()
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		ap := &countingDecisions{MemoryApprovals: guard.NewMemoryApprovals()}
		e.guards.Approvals = ap
		e.cfg.Guards = e.guards
		l, err := react.New(e.cfg)
		require.NoError(t, err)
		res, err := l.Run(context.Background(), approvalNode, "create a site called blog")
		require.NoError(t, err)
		require.Equal(t, react.Suspended, res.Status)
		mc := newMortalClaims()
		cd := &claimDecider{mortalClaims: mc, mu2: &mc.mu, approvals: ap, audit: runstore.NewMemoryAudit()}
		e.cfg.Claims, e.cfg.Audit = cd, cd.audit
		return e, cd, create, res.Snapshot
	}
	t.Run("approve", func(t *testing.T) {
		e, cd, create, snap := setup(t)
		got, err := e.again(approvalAfter()).Resume(context.Background(), snap, react.Approve(ticketOf(t, e.loop, snap)))
		require.NoError(t, err)
		assert.Equal(t, react.Finished, got.Status)
		assert.Equal(t, 1, create.executions())
		assert.EqualValues(t, 1, cd.decided.Load(), "the approval was applied with the claim")
		assert.Zero(t, cd.approvals.calls.Load(), "and not asked of the approvals store again")
		_, err = e.again(approvalAfter()).Resume(context.Background(), snap, react.Approve(ticketOf(t, e.loop, snap)))
		require.ErrorIs(t, err, react.ErrAlreadyResumed)
		assert.EqualValues(t, 1, cd.decided.Load(), "a snapshot already resumed decides nothing")
	})
	t.Run("decline", func(t *testing.T) {
		e, cd, create, snap := setup(t)
		m := newScript(turn(call("x", react.ToolFail, `{"reason":"the user declined"}`)))
		got, err := e.again(m).Resume(context.Background(), snap, react.Decline(ticketOf(t, e.loop, snap), "not now"))
		require.NoError(t, err)
		assert.Equal(t, react.Failed, got.Status)
		assert.Zero(t, create.executions())
		assert.EqualValues(t, 1, cd.decided.Load())
		assert.Zero(t, cd.approvals.calls.Load())
	})
	t.Run("refused decision claims nothing", func(t *testing.T) {
		e, cd, create, snap := setup(t)
		// Another decision on the call already applied: the approval is refused.
		gc, ok, err := cd.approvals.Gated(context.Background(), "run-1")
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, cd.approvals.MemoryApprovals.Decline(context.Background(), "run-1", gc.CallID))
		got, err := e.again(approvalAfter()).Resume(context.Background(), snap, react.Approve(ticketOf(t, e.loop, snap)))
		require.ErrorIs(t, err, guard.ErrNotPending)
		assert.Contains(t, err.Error(), "react: approvals")
		assert.Equal(t, react.Suspended, got.Status)
		assert.Equal(t, snap, got.Snapshot, "the same snapshot, to decide again")
		assert.Equal(t, "", cd.calls(), "nothing claimed, nothing released")
		assert.Zero(t, create.executions())
		got, err = e.again(newScript(turn(call("x", react.ToolFail, `{"reason":"declined"}`)))).Resume(context.Background(), snap, react.Decline(ticketOf(t, e.loop, snap), ""))
		require.NoError(t, err, "the refused resume left the snapshot free")
		assert.Equal(t, react.Failed, got.Status)
		assert.Equal(t, "claim settle", cd.calls())
	})
	t.Run("another recorded decision claims nothing", func(t *testing.T) {
		e, cd, create, snap := setup(t)
		p, err := e.loop.Inspect(context.Background(), snap)
		require.NoError(t, err)
		susp, _, _ := strings.Cut(strings.TrimPrefix(p.Suspension.Ticket, "rgt1."), ".")
		_, _, err = cd.audit.Record(context.Background(), runstore.Decision{Run: "run-1", Suspension: susp,
			Kind: runstore.Declined, By: "carol", At: time.Unix(1, 0)})
		require.NoError(t, err)
		_, err = e.again(approvalAfter()).Resume(context.Background(), snap, react.Approve(p.Suspension.Ticket).DecidedBy("bob"))
		var decided *react.DecidedError
		require.ErrorAs(t, err, &decided, "carol's decline was recorded first")
		assert.Equal(t, "carol", decided.Decided.By)
		assert.Equal(t, "", cd.calls(), "nothing claimed")
		assert.Zero(t, cd.decided.Load())
		assert.Zero(t, create.executions())
	})
	t.Run("the decision is recorded with the claim", func(t *testing.T) {
		e, cd, _, snap := setup(t)
		_, err := e.again(approvalAfter()).Resume(context.Background(), snap, react.Approve(ticketOf(t, e.loop, snap)).DecidedBy("alice"))
		require.NoError(t, err)
		h, err := cd.audit.History(context.Background(), "run-1")
		require.NoError(t, err)
		require.Len(t, h, 1)
		assert.Equal(t, "alice", h[0].By)
		assert.Equal(t, runstore.Approved, h[0].Kind)
	})
}

// A DecidedError says who decided, and a decision recorded without a name
// as made by an unnamed person (never "by " and nothing): the host shows
// it to the person whose decision came second.
func TestDecidedError_Message(t *testing.T) {
	at := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		by, want string
	}{
		{"carol", "suspension s1 of run run-1 was declined by carol at 2026-12-02T04:00:00.000000Z"},
		{"", "suspension s1 of run run-1 was declined by an unnamed person at 2026-12-02T04:00:00.000000Z"},
	} {
		err := &react.DecidedError{Decided: runstore.Decision{Run: "run-1", Suspension: "s1", Kind: runstore.Declined, By: c.by, At: at}}
		assert.Contains(t, err.Error(), c.want, "decided by %q", c.by)
		assert.ErrorIs(t, err, react.ErrAlreadyResumed)
	}
}
