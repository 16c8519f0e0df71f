package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/guard"
)

// Approvals is the [guard.Approvals] of a [Store]. Each method is one
// statement, atomic in the database: Approve and Decline delete the waiting
// call, record the decision and grant the execution in one statement, so
// of any number of concurrent decisions on one call exactly one applies;
// Consume decrements a grant under its row lock. An execution is granted on
// the write ledger's row of the key the write gate derives for the call
// ([guard.IdempotencyKey] of the run and the fingerprint), so the
// [WriteLedger] claims the approved write and consumes its approval by
// updating one row.
type Approvals struct{ s *Store }

var _ guard.Approvals = (*Approvals)(nil)

// Gate implements [guard.Approvals.Gate]: it replaces the run's waiting
// call and drops an earlier decision on the same call id.
func (a *Approvals) Gate(ctx context.Context, run string, c guard.GatedCall) error {
	a.s.gated.del(run)
	_, err := a.s.pool.Exec(ctx, `
WITH forget AS (DELETE FROM reactguard_decisions WHERE run = $1 AND call_id = $2)
INSERT INTO reactguard_gated (run, call_id, tool, args, fingerprint, round, at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (run) DO UPDATE SET call_id = EXCLUDED.call_id, tool = EXCLUDED.tool, args = EXCLUDED.args,
	fingerprint = EXCLUDED.fingerprint, round = EXCLUDED.round, at = EXCLUDED.at`,
		[]byte(run), []byte(c.CallID), []byte(c.Tool), nullBytes(c.Args), []byte(c.Fingerprint), c.Round, a.s.ts())
	if err != nil {
		return schemaErr(ctx, "gate", err)
	}
	a.s.gated.put(run, cloneGated(c))
	return nil
}

// Gated implements [guard.Approvals.Gated]. The first Gated of a run after
// this Store gated a call of it (Gate, or the write ledger's
// BeginApprovedOrGate) is answered with that call without a statement: the
// loop asks right after the write gate deferred the write, while this
// process drives the run and nobody else can change what it waits for.
// Any decision, claim, save or delete of the run through this Store
// forgets it.
func (a *Approvals) Gated(ctx context.Context, run string) (guard.GatedCall, bool, error) {
	if c, ok := a.s.gated.take(run); ok {
		return cloneGated(c), true, nil
	}
	var callID, tool, args, fp []byte
	var c guard.GatedCall
	err := a.s.pool.QueryRow(ctx, `SELECT call_id, tool, args, fingerprint, round FROM reactguard_gated WHERE run = $1`,
		[]byte(run)).Scan(&callID, &tool, &args, &fp, &c.Round)
	if errors.Is(err, pgx.ErrNoRows) {
		return guard.GatedCall{}, false, nil
	}
	if err != nil {
		return guard.GatedCall{}, false, schemaErr(ctx, "gated", err)
	}
	c.CallID, c.Tool, c.Args, c.Fingerprint = string(callID), string(tool), args, string(fp)
	return c, true, nil
}

// decide is Approve (approve true, fingerprint fp) and Decline in one
// statement: the waiting call is deleted when it is callID (with fp for an
// approval), the decision recorded and, for an approval, one execution
// granted on the write ledger's row of the call's derived key ($6, see
// grantKey). When nothing was waiting, the earlier decision on callID, if
// any, tells a repeat (nil) from a conflict (ErrNotPending).
var decide = `
WITH taken AS (
	DELETE FROM reactguard_gated WHERE run = $1 AND call_id = $2 AND (NOT $4 OR fingerprint = $3)
	RETURNING fingerprint, tool
), decided AS (
	INSERT INTO reactguard_decisions (run, call_id, fingerprint, approved, at)
	SELECT $1, $2, fingerprint, $4, $5 FROM taken
	ON CONFLICT (run, call_id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, approved = EXCLUDED.approved, at = EXCLUDED.at
	RETURNING 1
), ` + grantCTE("$1", "$4", "$5", "$6") + `
SELECT EXISTS (SELECT 1 FROM taken)`

// grantCTE returns the CTE granted, which grants one execution of the call
// taken from the waiting calls (CTE taken, returning its tool) when the
// decision (CTE decided) is an approval (parameter approve): one more grant
// on the row of the call's derived key (parameter key, see grantKey) of
// run (parameter run), made in state none when the key has no row. Its
// time (parameter at) is the grant's, by which retention keeps the run.
func grantCTE(run, approve, at, key string) string {
	return `granted AS (
	INSERT INTO reactguard_writes (key, tool, state, token, run, at, grants)
	SELECT ` + key + `, tool, 0, 0, ` + run + `, ` + at + `, 1 FROM taken WHERE ` + approve + ` AND EXISTS (SELECT 1 FROM decided)
	ON CONFLICT (key) DO UPDATE SET grants = reactguard_writes.grants + 1, run = EXCLUDED.run, at = EXCLUDED.at
)`
}

// grantKey is the write-ledger key on whose row an approval of the call
// with fingerprint fp in run is granted: the key the write gate derives
// for the call ([guard.IdempotencyKey]). The approved write, called with
// that key (the gate's default), is claimed and its approval consumed by
// one update of that row.
func grantKey(run, fp string) []byte {
	return []byte(guard.IdempotencyKey(run, fp))
}

func (a *Approvals) decide(ctx context.Context, run, callID, fp string, approve bool) error {
	a.s.gated.del(run)
	var took bool
	var key []byte
	if approve {
		key = grantKey(run, fp)
	}
	err := a.s.pool.QueryRow(ctx, decide, []byte(run), []byte(callID), []byte(fp), approve, a.s.ts(), key).Scan(&took)
	if err != nil {
		return schemaErr(ctx, "decide", err)
	}
	if took {
		if approve {
			a.s.granted.put(string(key), struct{}{})
		}
		return nil
	}
	// Nothing was waiting under that call: a repeat of the same decision
	// is answered as it was (the row lock of the statement above made any
	// concurrent decision commit first).
	var prevFP []byte
	var approved bool
	err = a.s.pool.QueryRow(ctx, `SELECT fingerprint, approved FROM reactguard_decisions WHERE run = $1 AND call_id = $2`,
		[]byte(run), []byte(callID)).Scan(&prevFP, &approved)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return schemaErr(ctx, "decide", err)
	case approved == approve && (!approve || string(prevFP) == fp):
		return nil
	}
	return fmt.Errorf("%w: call %q of run %q", guard.ErrNotPending, callID, run)
}

// Approve implements [guard.Approvals.Approve].
func (a *Approvals) Approve(ctx context.Context, run, callID, fingerprint string) error {
	return a.decide(ctx, run, callID, fingerprint, true)
}

// Decline implements [guard.Approvals.Decline].
func (a *Approvals) Decline(ctx context.Context, run, callID string) error {
	return a.decide(ctx, run, callID, "", false)
}

// Consume implements [guard.Approvals.Consume] with one conditional
// decrement of the grants on the row of the call's derived key.
func (a *Approvals) Consume(ctx context.Context, run, fingerprint string) (bool, error) {
	a.s.gated.del(run)
	tag, err := a.s.pool.Exec(ctx, `UPDATE reactguard_writes SET grants = grants - 1, at = $2 WHERE key = $1 AND grants > 0`,
		grantKey(run, fingerprint), a.s.ts())
	if err != nil {
		return false, schemaErr(ctx, "consume", err)
	}
	return tag.RowsAffected() == 1, nil
}

// nullBytes returns nil for an empty slice, so that no args store NULL.
func nullBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
