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

var _ guard.ApprovingWriteLedger = (*WriteLedger)(nil)

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
	if err := l.flush(ctx, key); err != nil {
		return guard.WriteRecord{}, false, err
	}
	rec := guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteNone}
	claimed := false
	err := l.s.tx(ctx, func(tx *sql.Tx) error {
		found, err := l.read(ctx, tx, key, &rec)
		if err != nil {
			return err
		}
		if found && rec.State != guard.WriteNone && rec.State != guard.WriteFailed {
			return nil
		}
		now := l.s.ts()
		res, err := tx.ExecContext(ctx, `UPDATE reactguard_grants SET n = n - 1, at = ? WHERE run = ? AND fingerprint = ? AND n > 0`,
			now, blob(run), blob(fingerprint))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // no approval: nothing claimed
		}
		if _, err := tx.ExecContext(ctx, `
INSERT INTO reactguard_writes (key, tool, state, owner, at) VALUES (?, ?, 1, ?, ?)
ON CONFLICT (key) DO UPDATE SET tool = excluded.tool, state = 1, result = NULL, code = 0, owner = excluded.owner, at = excluded.at`,
			blob(key), blob(tool), l.s.owner.id, now); err != nil {
			return err
		}
		claimed = true
		return nil
	})
	if err != nil {
		return guard.WriteRecord{}, false, schemaErr(ctx, "begin", err)
	}
	if claimed {
		return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning}, true, nil
	}
	return rec, false, nil
}

// Begin implements [guard.WriteLedger.Begin].
func (l *WriteLedger) Begin(ctx context.Context, key, tool string) (guard.WriteRecord, bool, error) {
	if err := l.flush(ctx, key); err != nil {
		return guard.WriteRecord{}, false, err
	}
	for range 3 {
		var ok bool
		err := l.s.db.QueryRowContext(ctx, `
INSERT INTO reactguard_writes (key, tool, state, owner, at) VALUES (?, ?, 1, ?, ?)
ON CONFLICT (key) DO UPDATE SET tool = excluded.tool, state = 1, result = NULL, code = 0, owner = excluded.owner, at = excluded.at
	WHERE reactguard_writes.state IN (0, 3)
RETURNING 1`, blob(key), blob(tool), l.s.owner.id, l.s.ts()).Scan(&ok)
		if err == nil {
			return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning}, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return guard.WriteRecord{}, false, schemaErr(ctx, "begin", err)
		}
		rec, found, err := l.current(ctx, key)
		if err != nil {
			return guard.WriteRecord{}, false, err
		}
		if found && rec.State != guard.WriteNone && rec.State != guard.WriteFailed {
			return rec, false, nil
		}
		// Released or deleted between the two statements: claim again.
	}
	return guard.WriteRecord{}, false, fmt.Errorf("sqlite: begin %q: the record changed under three claims in a row", key)
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
	var state, code int64
	err := tx.QueryRowContext(ctx, `SELECT tool, state, result, code, owner FROM reactguard_writes WHERE key = ?`, blob(key)).
		Scan(&tool, &state, &result, &code, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	*rec = guard.WriteRecord{Key: key, Tool: string(tool), State: guard.WriteState(state), Result: result, Code: errcode.Code(code)}
	if rec.State == guard.WriteRunning && l.s.owner.dead(owner.String) {
		rec.State = guard.WriteUncertain
		_, err = tx.ExecContext(ctx, `UPDATE reactguard_writes SET state = 4, owner = NULL, at = ? WHERE key = ?`, l.s.ts(), blob(key))
	}
	return true, err
}

// Finish implements [guard.WriteLedger.Finish]: one upsert of the final
// record, which clears the owner. When the statement fails (the disk is
// full, the file locked past the busy timeout), the record is kept in the
// process and stored before the key is next read or claimed here (Begin,
// Get), so a run resumed in this process finds the truth, not its own
// running claim; the error is returned all the same. If the process ends
// first, the key reads as uncertain to the others.
func (l *WriteLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	p := pendingFinish{tool: blob(rec.Tool), result: nullBytes(rec.Result), state: int(rec.State), code: int(rec.Code)}
	if err := l.store(ctx, rec.Key, p); err != nil {
		l.s.pending.Put(rec.Key, p)
		return err
	}
	l.s.pending.Delete(rec.Key)
	return nil
}

func (l *WriteLedger) store(ctx context.Context, key string, p pendingFinish) error {
	_, err := l.s.db.ExecContext(ctx, `
INSERT INTO reactguard_writes (key, tool, state, result, code, owner, at) VALUES (?, ?, ?, ?, ?, NULL, ?)
ON CONFLICT (key) DO UPDATE SET tool = excluded.tool, state = excluded.state, result = excluded.result,
	code = excluded.code, owner = NULL, at = excluded.at`,
		blob(key), p.tool, p.state, p.result, p.code, l.s.ts())
	if err != nil {
		return schemaErr(ctx, "finish", err)
	}
	return nil
}

// flush stores the pending final record of key, if any.
func (l *WriteLedger) flush(ctx context.Context, key string) error {
	p, ok := l.s.pending.Get(key)
	if !ok {
		return nil
	}
	if err := l.store(ctx, key, p); err != nil {
		return fmt.Errorf("sqlite: storing the earlier result of %q: %w", key, err)
	}
	l.s.pending.DeleteIf(key, func(cur pendingFinish) bool {
		return cur.state == p.state && string(cur.result) == string(p.result)
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
