package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Pruned counts what [Store.Prune] deleted.
type Pruned struct {
	// Writes are write-ledger records that settled (succeeded, failed or
	// released) before the bound, of runs whose state was pruned (or of
	// writes claimed without an approval, which name no run). Running and
	// uncertain writes are kept whatever their age: deleting one would let
	// its write run again unverified.
	Writes int
	// Runs are stopped runs that stopped before the bound ([Runs.Expire]).
	Runs int
	// Claims are the resume claims of runs whose state was pruned.
	Claims int
	// Approvals are the waiting calls, decisions and grants of runs whose
	// state was pruned.
	Approvals int
	// Evidence are the runs whose evidence was pruned; all of their
	// records, facts and user texts are deleted. A thread's evidence is
	// not a run's: it goes with its thread.
	Evidence int
	// Leases are leases that expired before the bound.
	Leases int
	// Threads are conversations last changed (a message begun, a turn
	// committed) before the bound; each is deleted with its turns and its
	// evidence.
	Threads int
}

// kept selects the runs whose state Prune keeps: a run stopped at or after
// the bound ($1) in the run store, or any of whose state (a waiting call,
// a decision, a grant, a resume claim, evidence, an approved write) was
// written at or after it.
const kept = `
	SELECT id FROM reactguard_runs WHERE stopped >= $1
	UNION SELECT run FROM reactguard_gated WHERE at >= $1
	UNION SELECT run FROM reactguard_decisions WHERE at >= $1
	UNION SELECT run FROM reactguard_claims WHERE at >= $1
	UNION SELECT run FROM reactguard_evidence_runs WHERE at >= $1
	UNION SELECT run FROM reactguard_writes WHERE at >= $1 AND run IS NOT NULL`

// Prune deletes, in one transaction, the state that no snapshot still
// within the retention can need. Call it periodically (a daily job of one
// replica is enough) with before = now − retention, and set
// react.Config.SnapshotMaxAge to at most the retention in every loop that
// shares the store.
//
// A run's state — its waiting call, decisions and grants, its resume
// claims, its evidence, the ledger records of its approved writes — is
// kept as a whole as long as the run store holds a stop of the run at or
// after the bound, or any of that state was written at or after it; else
// it is deleted as a whole. A snapshot within SnapshotMaxAge was saved in
// the run store (Runs.Save, at its stop time) after the bound, so nothing
// it depends on is pruned, however long before its stop its write was
// gated or its approval granted. Stopped runs that stopped before the
// bound are deleted ([Runs.Expire]): their snapshots have expired. Settled
// write-ledger keys of writes claimed without an approval (they name no
// run) are deleted once they settled before the bound; running and
// uncertain keys never. Leases that expired before the bound are deleted.
// Conversations nobody wrote to since the bound (no message begun, no turn
// committed) are deleted with their turns and evidence ([Threads.Delete]
// deletes one); the evidence of a thread is not pruned as a run's (its
// keys start with the byte 0xFF, which no run id holds).
//
// A host that keeps snapshots outside the run store must leave a margin: a
// snapshot's run is kept while some of its state is newer than the bound,
// and a run may stop some time after it last wrote (a model's turn), so set
// SnapshotMaxAge to at most the retention minus the longest such time.
func (s *Store) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	before = micro(before)
	// Its next append of a run whose evidence this deletes must write the
	// run's last write time again (see touchMemo): forget, before and after.
	s.touches.forget()
	defer s.touches.forget()
	var p Pruned
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		p = Pruned{}
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE reactguard_kept ON COMMIT DROP AS `+kept, before); err != nil {
			return err
		}
		// A key's row is a write's record (its state) and the grants of
		// the run's approvals on that key: each counts where it belongs.
		if err := tx.QueryRow(ctx, `
WITH d AS (DELETE FROM reactguard_writes WHERE at < $1 AND state IN (0, 2, 3)
	AND (run IS NULL OR run NOT IN (SELECT id FROM reactguard_kept)) RETURNING state, grants)
SELECT count(*) FILTER (WHERE state <> 0 OR grants = 0), count(*) FILTER (WHERE grants > 0) FROM d`, before).Scan(&p.Writes, &p.Approvals); err != nil {
			return err
		}
		for _, step := range []struct {
			dst *int
			q   string
		}{
			{&p.Runs, `DELETE FROM reactguard_runs WHERE stopped < $1`},
			{&p.Claims, `DELETE FROM reactguard_claims WHERE at < $1 AND run NOT IN (SELECT id FROM reactguard_kept)`},
			{&p.Approvals, `DELETE FROM reactguard_gated WHERE at < $1 AND run NOT IN (SELECT id FROM reactguard_kept)`},
			{&p.Approvals, `DELETE FROM reactguard_decisions WHERE at < $1 AND run NOT IN (SELECT id FROM reactguard_kept)`},
			{&p.Leases, `DELETE FROM reactguard_leases WHERE expires < $1`},
		} {
			tag, err := tx.Exec(ctx, step.q, before)
			if err != nil {
				return err
			}
			*step.dst += int(tag.RowsAffected())
		}
		if err := tx.QueryRow(ctx, fmt.Sprintf(deleteThreads, `SELECT id FROM reactguard_threads WHERE updated < $1`), before).Scan(&p.Threads); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `
WITH old AS (DELETE FROM reactguard_evidence_runs WHERE at < $1 AND run < '\xff'::bytea AND run NOT IN (SELECT id FROM reactguard_kept) RETURNING run),
r AS (DELETE FROM reactguard_records WHERE run IN (SELECT run FROM old)),
f AS (DELETE FROM reactguard_facts WHERE run IN (SELECT run FROM old)),
u AS (DELETE FROM reactguard_user_texts WHERE run IN (SELECT run FROM old))
SELECT count(*) FROM old`, before).Scan(&p.Evidence)
	})
	if err != nil {
		return Pruned{}, schemaErr(ctx, "prune", err)
	}
	return p, nil
}
