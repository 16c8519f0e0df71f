package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
)

// WriteLedger is the [guard.WriteLedger] of a [Store]. Begin claims a key
// with one INSERT … ON CONFLICT DO UPDATE … WHERE (the claim is taken only
// from no record, WriteNone or WriteFailed), atomic under the row's lock.
//
// A running write names its owner: the advisory lock that this process's
// Store holds on its owner session. A running record whose owner lock is
// free belongs to a process that died (or whose session the server ended)
// before it recorded the result: Begin and Get report it as
// [guard.WriteUncertain], and Begin stores it so, so the write gate
// verifies it before anything runs it again. A running record whose owner
// holds its lock is in flight, however long it runs.
type WriteLedger struct{ s *Store }

var _ guard.WriteLedger = (*WriteLedger)(nil)

// claim takes key from no record, WriteNone or WriteFailed.
const claim = `
INSERT INTO reactguard_writes (key, tool, state, owner, at) VALUES ($1, $2, 1, $3, $4)
ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = 1, result = NULL, code = 0, owner = EXCLUDED.owner, at = EXCLUDED.at
	WHERE reactguard_writes.state IN (0, 3)
RETURNING true`

// current returns key's record; a running record whose owner lock is free
// (the owner died) is stored and returned as uncertain. The owner's lock is
// tried only for another owner's record, and only for the length of the
// statement.
const current = `
WITH orphan AS (
	UPDATE reactguard_writes SET state = 4, owner = NULL, at = $3
	WHERE key = $1 AND state = 1 AND owner IS DISTINCT FROM $2 AND pg_try_advisory_xact_lock(owner)
	RETURNING key, tool, state, result, code
)
SELECT tool, state, result, code FROM orphan
UNION ALL
SELECT tool, state, result, code FROM reactguard_writes WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM orphan)`

// Begin implements [guard.WriteLedger.Begin]. While the store's owner
// session is lost it claims nothing and returns an error wrapping
// [ErrSessionLost]: a claim nobody can see as owned would read as
// uncertain to every other process.
func (l *WriteLedger) Begin(ctx context.Context, key, tool string) (guard.WriteRecord, bool, error) {
	if err := l.s.sessionErr(); err != nil {
		return guard.WriteRecord{}, false, err
	}
	for range 3 {
		var ok bool
		err := l.s.pool.QueryRow(ctx, claim, []byte(key), []byte(tool), l.s.owner, l.s.ts()).Scan(&ok)
		if err == nil {
			return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning}, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
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
	return guard.WriteRecord{}, false, fmt.Errorf("postgres: begin %q: the record changed under three claims in a row", key)
}

func (l *WriteLedger) current(ctx context.Context, key string) (guard.WriteRecord, bool, error) {
	var tool, result []byte
	var state int16
	var code int32
	err := l.s.pool.QueryRow(ctx, current, []byte(key), l.s.owner, l.s.ts()).Scan(&tool, &state, &result, &code)
	if errors.Is(err, pgx.ErrNoRows) {
		return guard.WriteRecord{}, false, nil
	}
	if err != nil {
		return guard.WriteRecord{}, false, schemaErr("write record", err)
	}
	return guard.WriteRecord{Key: key, Tool: string(tool), State: guard.WriteState(state), Result: result, Code: errcode.Code(code)}, true, nil
}

// Finish implements [guard.WriteLedger.Finish]: one upsert of the final
// record, which clears the owner.
func (l *WriteLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	_, err := l.s.pool.Exec(ctx, `
INSERT INTO reactguard_writes (key, tool, state, result, code, owner, at) VALUES ($1, $2, $3, $4, $5, NULL, $6)
ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = EXCLUDED.state, result = EXCLUDED.result,
	code = EXCLUDED.code, owner = NULL, at = EXCLUDED.at`,
		[]byte(rec.Key), []byte(rec.Tool), int16(rec.State), nullBytes(rec.Result), int32(rec.Code), l.s.ts())
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
