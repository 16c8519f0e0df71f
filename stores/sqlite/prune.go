package sqlite

import (
	"context"
	"database/sql"
	"time"
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
// evidence of runs not written since, and the conversations nobody wrote
// to since (with their turns and evidence). Call it periodically with before =
// now − retention, where the retention is longer than any run lives.
//
// Pruning claims is safe only when no snapshot older than the retention can
// be resumed: set react.Config.SnapshotMaxAge to at most the retention in
// every loop that shares the store, or a snapshot whose claim was pruned
// could be resumed a second time. Pruning approval state and evidence
// means that a run resumed after the retention finds neither its approval
// nor its evidence; SnapshotMaxAge refuses such runs too.
func (s *Store) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	b := before.UnixMicro()
	var p Pruned
	err := s.tx(ctx, func(tx *sql.Tx) error {
		p = Pruned{}
		var old [][]byte
		// Thread keys start with 0xFF, which no run id (valid UTF-8) holds:
		// every run's key is below x'ff', every thread's at or above it.
		rows, err := tx.QueryContext(ctx, `SELECT run FROM reactguard_evidence_runs WHERE at < ? AND run < x'ff'`, b)
		if err != nil {
			return err
		}
		for rows.Next() {
			var run []byte
			if err := rows.Scan(&run); err != nil {
				_ = rows.Close()
				return err
			}
			old = append(old, run)
		}
		_ = rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, step := range []struct {
			dst *int
			q   string
		}{
			{&p.Writes, `DELETE FROM reactguard_writes WHERE at < ? AND state IN (0, 2, 3)`},
			{&p.Runs, `DELETE FROM reactguard_runs WHERE stopped < ?`},
			{&p.Claims, `DELETE FROM reactguard_claims WHERE at < ?`},
			{&p.Approvals, `DELETE FROM reactguard_gated WHERE at < ?`},
			{&p.Approvals, `DELETE FROM reactguard_decisions WHERE at < ?`},
			{&p.Approvals, `DELETE FROM reactguard_grants WHERE at < ?`},
			{&p.Evidence, `DELETE FROM reactguard_evidence_runs WHERE at < ? AND run < x'ff'`},
		} {
			res, err := tx.ExecContext(ctx, step.q, b)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			*step.dst += int(n)
		}
		for _, run := range old {
			for _, table := range []string{"reactguard_records", "reactguard_facts", "reactguard_print_calls", "reactguard_prints", "reactguard_user_texts"} {
				if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run = ?`, run); err != nil {
					return err
				}
			}
		}
		threads, err := ids(ctx, tx, `SELECT id FROM reactguard_threads WHERE updated < ?`, b)
		if err != nil {
			return err
		}
		p.Threads = len(threads)
		return deleteThreads(ctx, tx, threads)
	})
	if err != nil {
		return Pruned{}, schemaErr(ctx, "prune", err)
	}
	return p, nil
}

// ids returns the single BLOB column of the rows of q.
func ids(ctx context.Context, tx *sql.Tx, q string, args ...any) ([][]byte, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out [][]byte
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
