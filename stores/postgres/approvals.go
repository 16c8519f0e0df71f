package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/guard"
)

// Approvals is the [guard.Approvals] of a [Store]. Each method is one
// statement, atomic in the database: Approve and Decline delete the waiting
// call, record the decision and grant the execution in one statement, so
// of any number of concurrent decisions on one call exactly one applies;
// Consume decrements a grant under its row lock.
type Approvals struct{ s *Store }

var _ guard.Approvals = (*Approvals)(nil)

// Gate implements [guard.Approvals.Gate]: it replaces the run's waiting
// call and drops an earlier decision on the same call id.
func (a *Approvals) Gate(ctx context.Context, run string, c guard.GatedCall) error {
	a.s.gated.Delete(run)
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
	a.s.gated.Put(run, cloneGated(c))
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
	if c, ok := a.s.gated.Get(run); ok {
		a.s.gated.Delete(run)
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
// granted. When nothing was waiting, the earlier decision on callID, if
// any, tells a repeat (nil) from a conflict (ErrNotPending).
const decide = `
WITH taken AS (
	DELETE FROM reactguard_gated WHERE run = $1 AND call_id = $2 AND (NOT $4 OR fingerprint = $3)
	RETURNING fingerprint
), decided AS (
	INSERT INTO reactguard_decisions (run, call_id, fingerprint, approved, at)
	SELECT $1, $2, fingerprint, $4, $5 FROM taken
	ON CONFLICT (run, call_id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, approved = EXCLUDED.approved, at = EXCLUDED.at
	RETURNING fingerprint
), granted AS (
	INSERT INTO reactguard_grants (run, fingerprint, n, at)
	SELECT $1, fingerprint, 1, $5 FROM decided WHERE $4
	ON CONFLICT (run, fingerprint) DO UPDATE SET n = reactguard_grants.n + 1, at = EXCLUDED.at
)
SELECT EXISTS (SELECT 1 FROM taken)`

func (a *Approvals) decide(ctx context.Context, run, callID, fp string, approve bool) error {
	a.s.gated.Delete(run)
	var took bool
	err := a.s.pool.QueryRow(ctx, decide, []byte(run), []byte(callID), []byte(fp), approve, a.s.ts()).Scan(&took)
	if err != nil {
		return schemaErr(ctx, "decide", err)
	}
	if took {
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
// decrement.
func (a *Approvals) Consume(ctx context.Context, run, fingerprint string) (bool, error) {
	a.s.gated.Delete(run)
	tag, err := a.s.pool.Exec(ctx, `UPDATE reactguard_grants SET n = n - 1, at = $3 WHERE run = $1 AND fingerprint = $2 AND n > 0`,
		[]byte(run), []byte(fingerprint), a.s.ts())
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

// maxGatedMemo bounds the calls a Store remembers having gated: past it,
// it forgets them all (each is read from the database again).
const maxGatedMemo = 4096

// gatedMemo is, per run, the call this Store gated last and nobody read
// since (see Approvals.Gated). It is safe for concurrent use.
type gatedMemo struct {
	mu sync.Mutex
	m  map[string]guard.GatedCall
}

// Put remembers c as the call this Store gated in run.
func (g *gatedMemo) Put(run string, c guard.GatedCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil || len(g.m) >= maxGatedMemo {
		g.m = make(map[string]guard.GatedCall)
	}
	g.m[run] = c
}

// Get returns the call this Store gated in run, if it remembers one.
func (g *gatedMemo) Get(run string) (guard.GatedCall, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.m[run]
	return c, ok
}

// Delete forgets the call of run.
func (g *gatedMemo) Delete(run string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.m, run)
}
