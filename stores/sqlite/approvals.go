package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/guard"
)

// Approvals is the [guard.Approvals] of a [Store]. Approve and Decline run
// in one immediate transaction (SQLite's write lock): the waiting call is
// deleted, the decision recorded and the execution granted together, so of
// any number of concurrent decisions on one call, in any number of
// processes, exactly one applies. Consume is one conditional UPDATE.
type Approvals struct{ s *Store }

var _ guard.Approvals = (*Approvals)(nil)

// Gate implements [guard.Approvals.Gate]: it replaces the run's waiting
// call and drops an earlier decision on the same call id.
func (a *Approvals) Gate(ctx context.Context, run string, c guard.GatedCall) error {
	err := a.s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM reactguard_decisions WHERE run = ? AND call_id = ?`, blob(run), blob(c.CallID)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO reactguard_gated (run, call_id, tool, args, fingerprint, round, at) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run) DO UPDATE SET call_id = excluded.call_id, tool = excluded.tool, args = excluded.args,
	fingerprint = excluded.fingerprint, round = excluded.round, at = excluded.at`,
			blob(run), blob(c.CallID), blob(c.Tool), nullBytes(c.Args), blob(c.Fingerprint), c.Round, a.s.ts())
		return err
	})
	if err != nil {
		return schemaErr(ctx, "gate", err)
	}
	return nil
}

// Gated implements [guard.Approvals.Gated].
func (a *Approvals) Gated(ctx context.Context, run string) (guard.GatedCall, bool, error) {
	var callID, tool, args, fp []byte
	var c guard.GatedCall
	err := a.s.db.QueryRowContext(ctx, `SELECT call_id, tool, args, fingerprint, round FROM reactguard_gated WHERE run = ?`,
		blob(run)).Scan(&callID, &tool, &args, &fp, &c.Round)
	if errors.Is(err, sql.ErrNoRows) {
		return guard.GatedCall{}, false, nil
	}
	if err != nil {
		return guard.GatedCall{}, false, schemaErr(ctx, "gated", err)
	}
	c.CallID, c.Tool, c.Args, c.Fingerprint = string(callID), string(tool), args, string(fp)
	return c, true, nil
}

func (a *Approvals) decide(ctx context.Context, run, callID, fp string, approve bool) error {
	pending := false
	err := a.s.tx(ctx, func(tx *sql.Tx) error {
		var taken []byte
		err := tx.QueryRowContext(ctx, `DELETE FROM reactguard_gated WHERE run = ? AND call_id = ? AND (NOT ? OR fingerprint = ?) RETURNING fingerprint`,
			blob(run), blob(callID), approve, blob(fp)).Scan(&taken)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// Nothing waits under that call: a repeat of the same decision
			// is answered as it was.
			var prev []byte
			var approved bool
			err := tx.QueryRowContext(ctx, `SELECT fingerprint, approved FROM reactguard_decisions WHERE run = ? AND call_id = ?`,
				blob(run), blob(callID)).Scan(&prev, &approved)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				pending = true
			case err != nil:
				return err
			case approved != approve || (approve && string(prev) != fp):
				pending = true
			}
			return nil
		case err != nil:
			return err
		}
		now := a.s.ts()
		if _, err := tx.ExecContext(ctx, `
INSERT INTO reactguard_decisions (run, call_id, fingerprint, approved, at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (run, call_id) DO UPDATE SET fingerprint = excluded.fingerprint, approved = excluded.approved, at = excluded.at`,
			blob(run), blob(callID), taken, approve, now); err != nil {
			return err
		}
		if !approve {
			return nil
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO reactguard_grants (run, fingerprint, n, at) VALUES (?, ?, 1, ?)
ON CONFLICT (run, fingerprint) DO UPDATE SET n = n + 1, at = excluded.at`, blob(run), taken, now)
		return err
	})
	if err != nil {
		return schemaErr(ctx, "decide", err)
	}
	if pending {
		return fmt.Errorf("%w: call %q of run %q", guard.ErrNotPending, callID, run)
	}
	return nil
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
	res, err := a.s.db.ExecContext(ctx, `UPDATE reactguard_grants SET n = n - 1, at = ? WHERE run = ? AND fingerprint = ? AND n > 0`,
		a.s.ts(), blob(run), blob(fingerprint))
	if err != nil {
		return false, schemaErr(ctx, "consume", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, schemaErr(ctx, "consume", err)
	}
	return n == 1, nil
}

// blob returns s as bytes, never nil: an empty string is an empty BLOB,
// not NULL.
func blob(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

// nullBytes returns nil for an empty slice, so that no args store NULL.
func nullBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
