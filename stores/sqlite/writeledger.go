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
type WriteLedger struct{ s *Store }

var _ guard.WriteLedger = (*WriteLedger)(nil)

// Begin implements [guard.WriteLedger.Begin].
func (l *WriteLedger) Begin(ctx context.Context, key, tool string) (guard.WriteRecord, bool, error) {
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
			return guard.WriteRecord{}, false, schemaErr("begin", err)
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
		var tool, result []byte
		var owner sql.NullString
		var state, code int64
		err := tx.QueryRowContext(ctx, `SELECT tool, state, result, code, owner FROM reactguard_writes WHERE key = ?`, blob(key)).
			Scan(&tool, &state, &result, &code, &owner)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		rec = guard.WriteRecord{Key: key, Tool: string(tool), State: guard.WriteState(state), Result: result, Code: errcode.Code(code)}
		if rec.State == guard.WriteRunning && l.s.owner.dead(owner.String) {
			rec.State = guard.WriteUncertain
			_, err = tx.ExecContext(ctx, `UPDATE reactguard_writes SET state = 4, owner = NULL, at = ? WHERE key = ?`, l.s.ts(), blob(key))
		}
		return err
	})
	if err != nil {
		return guard.WriteRecord{}, false, schemaErr("write record", err)
	}
	return rec, found, nil
}

// Finish implements [guard.WriteLedger.Finish]: one upsert of the final
// record, which clears the owner.
func (l *WriteLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	_, err := l.s.db.ExecContext(ctx, `
INSERT INTO reactguard_writes (key, tool, state, result, code, owner, at) VALUES (?, ?, ?, ?, ?, NULL, ?)
ON CONFLICT (key) DO UPDATE SET tool = excluded.tool, state = excluded.state, result = excluded.result,
	code = excluded.code, owner = NULL, at = excluded.at`,
		blob(rec.Key), blob(rec.Tool), int(rec.State), nullBytes(rec.Result), int(rec.Code), l.s.ts())
	if err != nil {
		return schemaErr("finish", err)
	}
	return nil
}

// Get implements [guard.WriteLedger.Get]; a running write whose owner died
// reads (and is stored) as uncertain.
func (l *WriteLedger) Get(ctx context.Context, key string) (guard.WriteRecord, bool, error) {
	return l.current(ctx, key)
}
