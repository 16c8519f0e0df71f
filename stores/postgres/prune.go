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
	// released) before the bound. Running and uncertain writes are kept
	// whatever their age: deleting one would let its write run again
	// unverified.
	Writes int
	// Runs are stopped runs that stopped before the bound ([Runs.Expire]).
	Runs int
	// Claims are resume claims taken before the bound.
	Claims int
	// Approvals are waiting calls, decisions and grants last changed
	// before the bound.
	Approvals int
	// Evidence are the runs whose evidence was last written before the
	// bound; all of their records, facts and user texts are deleted. A
	// thread's evidence is not a run's: it goes with its thread.
	Evidence int
	// Threads are conversations last changed (a message begun, a turn
	// committed) before the bound; each is deleted with its turns and its
	// evidence.
	Threads int
}

// Prune deletes the state older than before, in one transaction: settled
// write-ledger keys, stopped runs, resume claims, approval state, the
// evidence of runs not written since (thread keys, which start with the
// byte 0xFF that no run id holds, excepted), and the conversations nobody
// wrote to since, with their turns and evidence. Call it periodically (a daily job of
// one replica is enough), with before = now − retention, where the
// retention is longer than any run lives.
//
// Pruning claims is safe only when no snapshot older than the retention can
// be resumed: set react.Config.SnapshotMaxAge to at most the retention in
// every loop that shares the store, or a snapshot whose claim was pruned
// could be resumed a second time. Pruning approval state and evidence
// means that a run resumed after the retention finds neither its approval
// nor its evidence; SnapshotMaxAge refuses such runs too.
func (s *Store) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	before = micro(before)
	var p Pruned
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		count := func(dst *int, q string) error {
			tag, err := tx.Exec(ctx, q, before)
			*dst += int(tag.RowsAffected())
			return err
		}
		for _, step := range []struct {
			dst *int
			q   string
		}{
			{&p.Writes, `DELETE FROM reactguard_writes WHERE at < $1 AND state IN (0, 2, 3)`},
			{&p.Runs, `DELETE FROM reactguard_runs WHERE stopped < $1`},
			{&p.Claims, `DELETE FROM reactguard_claims WHERE at < $1`},
			{&p.Approvals, `DELETE FROM reactguard_gated WHERE at < $1`},
			{&p.Approvals, `DELETE FROM reactguard_decisions WHERE at < $1`},
			{&p.Approvals, `DELETE FROM reactguard_grants WHERE at < $1`},
			{&p.Evidence, `
WITH old AS (DELETE FROM reactguard_evidence_runs WHERE at < $1 AND run < '\xff'::bytea RETURNING run),
r AS (DELETE FROM reactguard_records WHERE run IN (SELECT run FROM old)),
f AS (DELETE FROM reactguard_facts WHERE run IN (SELECT run FROM old)),
c AS (DELETE FROM reactguard_print_calls WHERE run IN (SELECT run FROM old)),
p AS (DELETE FROM reactguard_prints WHERE run IN (SELECT run FROM old)),
u AS (DELETE FROM reactguard_user_texts WHERE run IN (SELECT run FROM old))
SELECT count(*) FROM old`},
			{&p.Threads, fmt.Sprintf(deleteThreads, `SELECT id FROM reactguard_threads WHERE updated < $1`)},
		} {
			if step.dst == &p.Evidence || step.dst == &p.Threads {
				if err := tx.QueryRow(ctx, step.q, before).Scan(step.dst); err != nil {
					return err
				}
				continue
			}
			if err := count(step.dst, step.q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Pruned{}, schemaErr(ctx, "prune", err)
	}
	return p, nil
}
