package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
)

// WriteLedger is the [guard.WriteLedger] of a [Store]. Begin claims a key
// with one INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING (the claim is
// taken only from no record, WriteNone or WriteFailed), atomic under
// SQLite's write lock.
//
// A running write names its owner: the lock file that this process's Store
// holds locked beside the database (see [Store]). A running record whose
// owner's lock is free belongs to a process that died before it recorded
// the result: Begin and Get report it, and store it, as
// [guard.WriteUncertain], so the write gate verifies it before anything
// runs it again. A running record whose owner holds its lock is in flight,
// however long it runs.
//
// It is a [guard.ApprovingWriteLedger] for the same Store's [Approvals]:
// BeginApproved claims a write and consumes its approval in one immediate
// transaction.
type WriteLedger struct{ s *Store }

var (
	_ guard.ApprovingWriteLedger = (*WriteLedger)(nil)
	_ guard.LeasedWriteLedger    = (*WriteLedger)(nil)
)

// ConsumesFrom implements [guard.ApprovingWriteLedger.ConsumesFrom]: true
// for the Approvals of this ledger's Store.
func (l *WriteLedger) ConsumesFrom(a guard.Approvals) bool {
	ap, ok := a.(*Approvals)
	return ok && ap != nil && ap.s == l.s
}

// BeginApproved implements [guard.ApprovingWriteLedger.BeginApproved] in
// one immediate transaction (SQLite's write lock, across processes): the
// key's record is read (a running record whose owner died is stored as
// uncertain, as Begin does), and when the key is free and an approval is
// held, the approval is consumed and the key claimed together.
func (l *WriteLedger) BeginApproved(ctx context.Context, key, tool, run, fingerprint string) (guard.WriteRecord, bool, error) {
	return l.begin(ctx, key, tool, &approval{run, fingerprint})
}

// Begin implements [guard.WriteLedger.Begin] in one immediate transaction:
// the key's record is read (a running record whose owner died is stored as
// uncertain) and, when the key is free, claimed with a new fencing token.
func (l *WriteLedger) Begin(ctx context.Context, key, tool string) (guard.WriteRecord, bool, error) {
	return l.begin(ctx, key, tool, nil)
}

// approval names the approval a claim consumes.
type approval struct{ run, fingerprint string }

// begin is Begin (a nil) and BeginApproved.
func (l *WriteLedger) begin(ctx context.Context, key, tool string, a *approval) (guard.WriteRecord, bool, error) {
	o, err := l.s.owner()
	if err != nil {
		return guard.WriteRecord{}, false, err
	}
	if err := l.flush(ctx, key); err != nil {
		return guard.WriteRecord{}, false, err
	}
	rec := guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteNone}
	var token int64
	err = l.s.tx(ctx, func(tx *sql.Tx) error {
		found, err := l.read(ctx, tx, key, &rec)
		if err != nil {
			return err
		}
		if found && rec.State != guard.WriteNone && rec.State != guard.WriteFailed {
			return nil
		}
		now := l.s.ts()
		if a != nil {
			res, err := tx.ExecContext(ctx, `UPDATE reactguard_grants SET n = n - 1, at = ? WHERE run = ? AND fingerprint = ? AND n > 0`,
				now, blob(a.run), blob(a.fingerprint))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err // no approval: nothing claimed
			}
		}
		if token, err = nextToken(ctx, tx); err != nil {
			return err
		}
		var run []byte // the run of an approved write, for retention
		if a != nil {
			run = blob(a.run)
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO reactguard_writes (key, tool, state, owner, token, run, at) VALUES (?, ?, 1, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET tool = excluded.tool, state = 1, result = NULL, code = 0, owner = excluded.owner,
	token = excluded.token, run = excluded.run, at = excluded.at`,
			blob(key), blob(tool), o.id, token, run, now)
		return err
	})
	if err != nil {
		return guard.WriteRecord{}, false, schemaErr(ctx, "begin", err)
	}
	if token != 0 {
		l.s.writes.Put(key, heldWrite{token: token, own: o})
		return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning, Token: uint64(token)}, true, nil
	}
	return rec, false, nil
}

// nextToken draws the next fencing token of the database in tx.
func nextToken(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `UPDATE reactguard_fence SET n = n + 1 RETURNING n`).Scan(&n)
	return n, err
}

// Hold implements [guard.LeasedWriteLedger.Hold]: the context ends when
// the owner under which this Store claimed rec is lost (its lock file was
// removed or replaced while the process lives: to other processes it then
// reads as dead).
func (l *WriteLedger) Hold(ctx context.Context, rec guard.WriteRecord) (context.Context, context.CancelFunc) {
	if h, ok := l.s.writes.Get(rec.Key); ok && h.token == int64(rec.Token) {
		return hold(ctx, h.own)
	}
	return hold(ctx, nil)
}

// current returns key's record inside a transaction; a running record
// whose owner died is stored and returned as uncertain.
func (l *WriteLedger) current(ctx context.Context, key string) (guard.WriteRecord, bool, error) {
	var rec guard.WriteRecord
	found := false
	err := l.s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		found, err = l.read(ctx, tx, key, &rec)
		return err
	})
	if err != nil {
		return guard.WriteRecord{}, false, schemaErr(ctx, "write record", err)
	}
	return rec, found, nil
}

// read reads key's record into *rec in tx; a running record whose owner
// died is stored and returned as uncertain. *rec is unchanged when the key
// has no record.
func (l *WriteLedger) read(ctx context.Context, tx *sql.Tx, key string, rec *guard.WriteRecord) (bool, error) {
	var tool, result []byte
	var owner sql.NullString
	var state, code, token int64
	err := tx.QueryRowContext(ctx, `SELECT tool, state, result, code, owner, token FROM reactguard_writes WHERE key = ?`, blob(key)).
		Scan(&tool, &state, &result, &code, &owner, &token)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	*rec = guard.WriteRecord{Key: key, Tool: string(tool), State: guard.WriteState(state), Result: result, Code: errcode.Code(code), Token: uint64(token)}
	if rec.State == guard.WriteRunning && l.s.current().dead(owner.String) {
		rec.State = guard.WriteUncertain
		_, err = tx.ExecContext(ctx, `UPDATE reactguard_writes SET state = 4, owner = NULL, at = ? WHERE key = ?`, l.s.ts(), blob(key))
	}
	return true, err
}

// Finish implements [guard.WriteLedger.Finish]: one statement. A record
// with a Token is stored only while that claim is the key's current one
// and the key is running or uncertain; otherwise nothing is stored and the
// error wraps [guard.ErrFenced]. When the statement fails (the disk is
// full, the file locked past the busy timeout), the record is kept in the
// process and stored before the key is next read or claimed here (Begin,
// Get), so a run resumed in this process finds the truth, not its own
// running claim; the error is returned all the same. If the process ends
// first, the key reads as uncertain to the others.
func (l *WriteLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	l.s.writes.Delete(rec.Key)
	p := pendingFinish{tool: blob(rec.Tool), result: nullBytes(rec.Result), state: int(rec.State), code: int(rec.Code), token: int64(rec.Token)}
	err := l.store(ctx, rec.Key, p)
	switch {
	case errors.Is(err, guard.ErrFenced):
		l.s.pending.Delete(rec.Key)
		return err
	case err != nil:
		l.s.pending.Put(rec.Key, p)
		return err
	}
	l.s.pending.Delete(rec.Key)
	return nil
}

func (l *WriteLedger) store(ctx context.Context, key string, p pendingFinish) error {
	var res sql.Result
	var err error
	if p.token != 0 {
		res, err = l.s.db.ExecContext(ctx, `
UPDATE reactguard_writes SET tool = ?, state = ?, result = ?, code = ?, owner = NULL, at = ?
WHERE key = ? AND token = ? AND state IN (1, 4)`, p.tool, p.state, p.result, p.code, l.s.ts(), blob(key), p.token)
	} else {
		res, err = l.s.db.ExecContext(ctx, `
INSERT INTO reactguard_writes (key, tool, state, result, code, owner, at) VALUES (?, ?, ?, ?, ?, NULL, ?)
ON CONFLICT (key) DO UPDATE SET tool = excluded.tool, state = excluded.state, result = excluded.result,
	code = excluded.code, owner = NULL, at = excluded.at`,
			blob(key), p.tool, p.state, p.result, p.code, l.s.ts())
	}
	if err != nil {
		return schemaErr(ctx, "finish", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return schemaErr(ctx, "finish", err)
	} else if n == 0 {
		return fmt.Errorf("sqlite: finish %q: %w: its claim %d is no longer the key's current one, or the key is not running or uncertain", key, guard.ErrFenced, p.token)
	}
	return nil
}

// flush stores the pending final record of key, if any.
func (l *WriteLedger) flush(ctx context.Context, key string) error {
	p, ok := l.s.pending.Get(key)
	if !ok {
		return nil
	}
	if err := l.store(ctx, key, p); err != nil && !errors.Is(err, guard.ErrFenced) {
		return fmt.Errorf("sqlite: storing the earlier result of %q: %w", key, err)
	}
	l.s.pending.DeleteIf(key, func(cur pendingFinish) bool {
		return cur.state == p.state && cur.token == p.token && string(cur.result) == string(p.result)
	})
	return nil
}

// Get implements [guard.WriteLedger.Get]; a running write whose owner died
// reads (and is stored) as uncertain.
func (l *WriteLedger) Get(ctx context.Context, key string) (guard.WriteRecord, bool, error) {
	if err := l.flush(ctx, key); err != nil {
		return guard.WriteRecord{}, false, err
	}
	return l.current(ctx, key)
}
