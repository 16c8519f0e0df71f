package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/runstore"
)

// Claims is the [runstore.Claims] of a [Store]. A claim names its owner,
// the lease of the claiming Store (as a running write does, see
// [WriteLedger]), carries a fencing token from the same sequence as the
// writes' and says whether it is settled. Claim is one INSERT … ON
// CONFLICT DO UPDATE … WHERE: it takes a free id, or a taken one that was
// never settled and whose owner's lease has expired — the process that
// claimed it died, or lost touch with the database for longer than its
// lease, before its resume stopped — only while the claiming Store's own
// lease is live, all checked in the same statement; so of any number of
// concurrent claims of one snapshot, in any number of processes, exactly
// one succeeds, and a claim whose owner still holds its lease is never
// taken. The same statement reads the run's evidence for the resume (see
// [Evidence.Load]) and marks it written now, so that the resume's appends
// need not (retention ages a run's evidence by that mark).
//
// It is a [runstore.LeasedClaims]: the loop runs a resume under
// [Claims.Hold], which ends when the lease is lost. Records are fenced by
// the claim's token: Settle, and the save or delete of the claimed run by
// the same Store's [Runs] (which settles the claim in the same statement),
// succeed only while the claim is still this Store's; once another
// process took it over they fail with an error wrapping
// runstore.ErrLeaseLost and change nothing. Release deletes only this
// Store's own claim, and only while it is not settled. A claim is kept
// until it is released or pruned by [Store.Prune].
//
// While the Store holds no lease, Claim claims nothing and returns an error
// wrapping runstore.ErrLeaseLost.
type Claims struct{ s *Store }

var _ runstore.LeasedClaims = (*Claims)(nil)

// claimSnapshot takes a free claim, or a taken, unsettled one whose owner's
// lease has expired, under this Store's live lease, and reads the run's
// evidence when it claimed. Its first row (kind -1) carries the token
// (seq; 0 when nothing was claimed) and whether the lease is live
// (attempt). Parameters: run, id, owner, at.
const claimSnapshot = `
WITH me AS (
	SELECT 1 FROM reactguard_leases WHERE owner = $3 AND expires > now()
), c AS (
	INSERT INTO reactguard_claims (run, id, owner, token, at)
	SELECT $1, $2, $3, nextval('reactguard_fence'), $4 FROM me
	ON CONFLICT (run, id) DO UPDATE SET owner = EXCLUDED.owner, token = EXCLUDED.token, at = EXCLUDED.at
		WHERE NOT reactguard_claims.settled AND reactguard_claims.owner <> EXCLUDED.owner
			AND NOT EXISTS (SELECT 1 FROM reactguard_leases l WHERE l.owner = reactguard_claims.owner AND l.expires > now())
	RETURNING token
), touched AS (
	INSERT INTO reactguard_evidence_runs (run, at) SELECT $1, $4 FROM c
	ON CONFLICT (run) DO UPDATE SET at = EXCLUDED.at
)
SELECT -1::smallint AS kind, coalesce((SELECT token FROM c), 0) AS seq, NULL::bytea,
	CASE WHEN EXISTS (SELECT 1 FROM me) THEN 1 ELSE 0 END, NULL::bytea, NULL::bytea, 0::smallint, 0, NULL::bytea, NULL::bytea, 0,
	NULL::timestamptz, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea
UNION ALL
SELECT 0::smallint, seq, ` + recordColumns + ` FROM reactguard_records WHERE run = $1 AND EXISTS (SELECT 1 FROM c)
UNION ALL
SELECT 1::smallint, seq, NULL::bytea, 0, NULL::bytea, NULL::bytea, 0::smallint, 0, text, NULL::bytea, 0,
	NULL::timestamptz, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea
FROM reactguard_user_texts WHERE run = $1 AND EXISTS (SELECT 1 FROM c)
ORDER BY kind, seq`

// claimDecided is claimSnapshot that claims only when the decision on the
// gated call applies (decidable: the call waits, or the same decision was
// made), and applies it in the same statement: the waiting call deleted,
// the decision recorded, for an approval one execution granted. Its head
// row's attempt adds 2 when the decision applies and 4 when the claim was
// free to take. Parameters: run, id, owner, at, call id, fingerprint,
// approve, the audit record's kind, tool, tenant, user, decider, time and
// reason, and the key an approval is granted on (grantKey).
var claimDecided = `
WITH me AS (
	SELECT 1 FROM reactguard_leases WHERE owner = $3 AND expires > now()
), prior AS (
	SELECT kind FROM reactguard_audit WHERE run = $1 AND suspension = $2
), decidable AS (
	SELECT 1 FROM reactguard_gated WHERE run = $1 AND call_id = $5 AND (NOT $7 OR fingerprint = $6)
		AND NOT EXISTS (SELECT 1 FROM prior WHERE kind <> $8)
	UNION ALL
	SELECT 1 FROM reactguard_decisions WHERE run = $1 AND call_id = $5 AND approved = $7 AND (NOT $7 OR fingerprint = $6)
		AND NOT EXISTS (SELECT 1 FROM prior WHERE kind <> $8)
), claimable AS (
	SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM reactguard_claims k WHERE k.run = $1 AND k.id = $2
		AND (k.settled OR k.owner = $3 OR EXISTS (SELECT 1 FROM reactguard_leases l WHERE l.owner = k.owner AND l.expires > now())))
), c AS (
	INSERT INTO reactguard_claims (run, id, owner, token, at)
	SELECT $1, $2, $3, nextval('reactguard_fence'), $4 FROM me WHERE EXISTS (SELECT 1 FROM decidable)
	ON CONFLICT (run, id) DO UPDATE SET owner = EXCLUDED.owner, token = EXCLUDED.token, at = EXCLUDED.at
		WHERE NOT reactguard_claims.settled AND reactguard_claims.owner <> EXCLUDED.owner
			AND NOT EXISTS (SELECT 1 FROM reactguard_leases l WHERE l.owner = reactguard_claims.owner AND l.expires > now())
	RETURNING token
), taken AS (
	DELETE FROM reactguard_gated WHERE run = $1 AND call_id = $5 AND (NOT $7 OR fingerprint = $6) AND EXISTS (SELECT 1 FROM c)
	RETURNING fingerprint, tool
), decided AS (
	INSERT INTO reactguard_decisions (run, call_id, fingerprint, approved, at)
	SELECT $1, $5, fingerprint, $7, $4 FROM taken
	ON CONFLICT (run, call_id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, approved = EXCLUDED.approved, at = EXCLUDED.at
	RETURNING fingerprint
), ` + grantCTE("$1", "$7", "$4", "$15") + `, touched AS (
	INSERT INTO reactguard_evidence_runs (run, at) SELECT $1, $4 FROM c
	ON CONFLICT (run) DO UPDATE SET at = EXCLUDED.at
), recorded AS (
	INSERT INTO reactguard_audit (run, suspension, kind, call_id, tool, fingerprint, tenant, user_id, decided_by, at, reason)
	SELECT $1, $2, $8, $5, $9, $6, $10, $11, $12, $13, $14 FROM c
	ON CONFLICT (run, suspension) DO NOTHING
)
SELECT -1::smallint AS kind, coalesce((SELECT token FROM c), 0) AS seq, NULL::bytea,
	CASE WHEN EXISTS (SELECT 1 FROM me) THEN 1 ELSE 0 END + CASE WHEN EXISTS (SELECT 1 FROM decidable) THEN 2 ELSE 0 END
		+ CASE WHEN EXISTS (SELECT 1 FROM claimable) THEN 4 ELSE 0 END
		+ CASE WHEN EXISTS (SELECT 1 FROM prior WHERE kind <> $8) THEN 8 ELSE 0 END,
	NULL::bytea, NULL::bytea, 0::smallint, 0, NULL::bytea, NULL::bytea, 0,
	NULL::timestamptz, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea
UNION ALL
SELECT 0::smallint, seq, ` + recordColumns + ` FROM reactguard_records WHERE run = $1 AND EXISTS (SELECT 1 FROM c)
UNION ALL
SELECT 1::smallint, seq, NULL::bytea, 0, NULL::bytea, NULL::bytea, 0::smallint, 0, text, NULL::bytea, 0,
	NULL::timestamptz, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea
FROM reactguard_user_texts WHERE run = $1 AND EXISTS (SELECT 1 FROM c)
ORDER BY kind, seq`

// DecidesFor implements react.ClaimDecider: true for the Approvals and
// the Audit of this Claims' Store.
func (c *Claims) DecidesFor(a guard.Approvals, au runstore.Audit) bool {
	ap, ok := a.(*Approvals)
	ad, ok2 := au.(*Audit)
	return ok && ok2 && ap != nil && ad != nil && ap.s == c.s && ad.s == c.s
}

// ClaimDecided implements react.ClaimDecider: the snapshot claimed, the
// decision recorded in the audit and applied to the gated call in one
// statement, which also reads the run's evidence, as Claim does. A
// decision that does not apply (the call does not wait, or was decided
// otherwise) claims nothing and returns an error wrapping
// guard.ErrNotPending, and one whose suspension the audit holds another
// kind of decision on an error wrapping runstore.ErrDecidedOtherwise,
// unless the snapshot is taken or settled anyway (false, nil).
func (c *Claims) ClaimDecided(ctx context.Context, rec runstore.Decision) (bool, error) {
	if err := runstore.CheckDecision(rec); err != nil {
		return false, err
	}
	run, id, callID, fingerprint := rec.Run, rec.Suspension, rec.CallID, rec.Fingerprint
	approve := rec.Kind == runstore.Approved
	k := [2]string{run, id}
	if c.s.isUnsure(k) {
		// This Store's own claim statement failed before: claim as Claim
		// does (it may take its own claim), then record and decide.
		ok, err := c.Claim(ctx, run, id)
		if err != nil || !ok {
			return false, err
		}
		kept, _, err := (&Audit{s: c.s}).Record(ctx, rec)
		if err == nil && kept.Kind != rec.Kind {
			err = fmt.Errorf("%w: %s by %q", runstore.ErrDecidedOtherwise, kept.Kind, kept.By)
		}
		if err == nil {
			err = (&Approvals{s: c.s}).decide(ctx, run, callID, fingerprint, approve)
		}
		if err != nil {
			return false, errors.Join(err, c.Release(context.WithoutCancel(ctx), run, id))
		}
		return true, nil
	}
	ep, err := c.s.leaseNow(ctx)
	if err != nil {
		return false, err
	}
	if err := c.s.flushRun(ctx, run); err != nil {
		return false, err
	}
	c.s.settlePending(ctx)
	c.s.gated.del(run)
	var key []byte
	if approve {
		key = grantKey(run, fingerprint)
	}
	rows, err := c.s.pool.Query(ctx, claimDecided, []byte(run), []byte(id), ep.owner, c.s.ts(), []byte(callID), []byte(fingerprint), approve,
		int16(rec.Kind), []byte(rec.Tool), []byte(rec.Owner.Tenant), []byte(rec.Owner.User), []byte(rec.By), micro(rec.At), []byte(rec.Reason), key)
	if err != nil {
		c.s.setUnsure(k, true)
		return false, schemaErr(ctx, "claim", err)
	}
	snap, h, err := scanEvidenceHead(rows)
	if err != nil {
		c.s.setUnsure(k, true)
		return false, schemaErr(ctx, "claim", err)
	}
	switch leaseOK, decidable, claimable, otherwise := h.attempt&1 != 0, h.attempt&2 != 0, h.attempt&4 != 0, h.attempt&8 != 0; {
	case !leaseOK:
		return false, c.s.leaseRefused(ep)
	case h.seq != 0:
		c.s.held.put(run, &heldClaim{id: id, token: h.seq, ep: ep})
		c.s.prefetched.Put(run, prefetch{snap: snap})
		if approve {
			c.s.granted.put(string(key), struct{}{})
		}
		return true, nil
	case otherwise && claimable:
		return false, fmt.Errorf("%w: suspension %q of run %q", runstore.ErrDecidedOtherwise, id, run)
	case !decidable && claimable:
		return false, fmt.Errorf("%w: call %q of run %q", guard.ErrNotPending, callID, run)
	}
	return false, nil
}

// Claim implements [runstore.Claims.Claim]. A claim statement that fails
// may still have been applied by the server (the connection dropped after
// it was sent); the loop then gave up the resume without using the claim,
// so the next Claim of the same snapshot in this process recognises the
// claim as its own (the current lease's, unsettled) and takes it, instead
// of calling it resumed.
func (c *Claims) Claim(ctx context.Context, run, id string) (bool, error) {
	ep, err := c.s.leaseNow(ctx)
	if err != nil {
		return false, err
	}
	if err := c.s.flushRun(ctx, run); err != nil {
		return false, err
	}
	c.s.settlePending(ctx)
	k := [2]string{run, id}
	token, leaseOK, snap, err := c.claim(ctx, ep, run, id)
	if err != nil {
		c.s.setUnsure(k, true)
		return false, schemaErr(ctx, "claim", err)
	}
	if !leaseOK {
		return false, c.s.leaseRefused(ep)
	}
	if token != 0 {
		c.s.setUnsure(k, false)
		c.s.held.put(run, &heldClaim{id: id, token: token, ep: ep})
		c.s.prefetched.Put(run, prefetch{snap: snap})
		c.s.gated.del(run)
		return true, nil
	}
	if !c.s.isUnsure(k) {
		return false, nil
	}
	var owner int64
	var settled bool
	err = c.s.pool.QueryRow(ctx, `SELECT owner, settled, token FROM reactguard_claims WHERE run = $1 AND id = $2`,
		[]byte(run), []byte(id)).Scan(&owner, &settled, &token)
	if errors.Is(err, pgx.ErrNoRows) {
		return c.Claim(ctx, run, id) // released meanwhile
	}
	if err != nil {
		return false, schemaErr(ctx, "claim", err)
	}
	c.s.setUnsure(k, false)
	if owner != ep.owner || settled {
		return false, nil
	}
	c.s.held.put(run, &heldClaim{id: id, token: token, ep: ep})
	c.s.gated.del(run)
	return true, nil
}

// claim runs claimSnapshot.
func (c *Claims) claim(ctx context.Context, ep *epoch, run, id string) (token int64, leaseOK bool, snap evidence.Snapshot, err error) {
	rows, err := c.s.pool.Query(ctx, claimSnapshot, []byte(run), []byte(id), ep.owner, c.s.ts())
	if err != nil {
		return 0, false, evidence.Snapshot{}, err
	}
	snap, head, err := scanEvidenceHead(rows)
	return head.seq, head.attempt == 1, snap, err
}

// Hold implements [runstore.LeasedClaims.Hold]: the context ends when the
// lease under which this Store claimed id of run is lost.
func (c *Claims) Hold(ctx context.Context, run, id string) (context.Context, context.CancelFunc) {
	var ep *epoch
	if h := c.s.held.get(run); h != nil && h.id == id {
		ep = h.ep
	}
	return hold(ctx, ep)
}

// Release implements [runstore.Claims.Release]: it deletes the claim only
// when this Store holds it and it is not settled.
func (c *Claims) Release(ctx context.Context, run, id string) error {
	c.s.setUnsure([2]string{run, id}, false)
	c.s.prefetched.Delete(run)
	h := c.s.held.take(run, id)
	if h == nil {
		return nil
	}
	if _, err := c.s.pool.Exec(ctx, `DELETE FROM reactguard_claims WHERE run = $1 AND id = $2 AND token = $3 AND NOT settled`,
		[]byte(run), []byte(id), h.token); err != nil {
		return schemaErr(ctx, "release", err)
	}
	return nil
}

// Settle implements [runstore.Claims.Settle] with one statement, or none
// when the same Store's Runs settled the claim with the run's save or
// delete. A claim of this Store is settled only while it is still its own
// (its token): once another process took it over, Settle changes nothing
// and returns an error wrapping runstore.ErrLeaseLost. When the statement
// fails, the claim is kept in the process and settled before this Store's
// next Claim or Settle, and by [Store.Close]; the error is returned all
// the same. If the process ends first, the claim stays taken and
// unsettled, and the next resume of its snapshot takes it over once the
// process's lease has expired.
func (c *Claims) Settle(ctx context.Context, run, id string) error {
	if err := c.s.flushRun(ctx, run); err != nil {
		return err
	}
	c.s.settlePending(ctx)
	c.s.prefetched.Delete(run)
	k := [2]string{run, id}
	h := c.s.held.take(run, id)
	if h != nil && h.settled {
		return nil
	}
	var token int64
	if h != nil {
		token = h.token
	}
	err := c.s.settle(ctx, k, token)
	if err != nil && !errors.Is(err, runstore.ErrLeaseLost) {
		c.s.settles.Put(k, token)
	}
	return err
}

// settle settles claim k: the claim of token when it is not 0 (fenced),
// else whatever the claim holds (an upsert).
func (s *Store) settle(ctx context.Context, k [2]string, token int64) error {
	if token != 0 {
		tag, err := s.pool.Exec(ctx, `UPDATE reactguard_claims SET settled = true WHERE run = $1 AND id = $2 AND token = $3`,
			[]byte(k[0]), []byte(k[1]), token)
		if err != nil {
			return schemaErr(ctx, "settle", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("postgres: settle snapshot %s of run %s: %w: its claim was taken over by another process", k[1], k[0], runstore.ErrLeaseLost)
		}
		return nil
	}
	var owner int64
	if ep := s.current(); ep != nil {
		owner = ep.owner
	}
	_, err := s.pool.Exec(ctx, `
INSERT INTO reactguard_claims (run, id, owner, at, settled) VALUES ($1, $2, $3, $4, true)
ON CONFLICT (run, id) DO UPDATE SET settled = true`, []byte(k[0]), []byte(k[1]), owner, s.ts())
	if err != nil {
		return schemaErr(ctx, "settle", err)
	}
	return nil
}

// settlePending settles the claims whose Settle failed; those that fail
// again stay pending, those taken over meanwhile are dropped.
func (s *Store) settlePending(ctx context.Context) {
	s.settles.Retry(func(k [2]string, token int64) error {
		err := s.settle(ctx, k, token)
		if errors.Is(err, runstore.ErrLeaseLost) {
			return nil
		}
		return err
	})
}

func (s *Store) setUnsure(k [2]string, unsure bool) {
	if unsure {
		s.unsure.Put(k, struct{}{})
	} else {
		s.unsure.Delete(k)
	}
}

func (s *Store) isUnsure(k [2]string) bool {
	_, ok := s.unsure.Get(k)
	return ok
}

// heldClaims are the resume claims this Store holds, by run (a run is
// resumed from one snapshot at a time).
type heldClaims struct {
	mu sync.Mutex
	m  map[string]*heldClaim
}

// heldClaim is a resume claim this Store holds: its snapshot id, token and
// lease, and whether the save or delete of its run settled it.
type heldClaim struct {
	id      string
	token   int64
	ep      *epoch
	settled bool
}

func (h *heldClaims) put(run string, c *heldClaim) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]*heldClaim)
	}
	h.m[run] = c
}

// get returns a copy of the claim held on run, or nil.
func (h *heldClaims) get(run string) *heldClaim {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.m[run]; c != nil {
		cp := *c
		return &cp
	}
	return nil
}

// take removes and returns the claim held on run when it is of id.
func (h *heldClaims) take(run, id string) *heldClaim {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.m[run]
	if c == nil || c.id != id {
		return nil
	}
	delete(h.m, run)
	return c
}

// markSettled records that the claim held on run with token was settled
// with its run's save or delete.
func (h *heldClaims) markSettled(run string, token int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.m[run]; c != nil && c.token == token {
		c.settled = true
	}
}

// head is the first row of claimSnapshot.
type head struct{ seq, attempt int64 }

// scanEvidenceHead reads the rows of claimSnapshot: its head row, then the
// evidence as scanEvidence does.
func scanEvidenceHead(rows pgx.Rows) (evidence.Snapshot, head, error) {
	var h head
	s, err := scanRows(rows, func(seq int64, attempt int) { h = head{seq: seq, attempt: int64(attempt)} })
	return s, h, err
}
