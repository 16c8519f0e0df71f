package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

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
//
// It is a [guard.ApprovingWriteLedger] for the same Store's [Approvals]:
// BeginApproved claims a write and consumes its approval in one statement.
type WriteLedger struct{ s *Store }

var _ guard.ApprovingWriteLedger = (*WriteLedger)(nil)

// claim takes key from no record, WriteNone or WriteFailed.
const claim = `
INSERT INTO reactguard_writes (key, tool, state, owner, at) VALUES ($1, $2, 1, $3, $4)
ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = 1, result = NULL, code = 0, owner = EXCLUDED.owner, at = EXCLUDED.at
	WHERE reactguard_writes.state IN (0, 3)
RETURNING true`

// claimApproved takes key from no record, WriteNone or WriteFailed and
// consumes one approval of (run, fingerprint), only both together: the
// grant's row is locked first (FOR UPDATE: a concurrent claim of the same
// approval waits, then sees it spent), the key is claimed only when the
// grant exists, and the grant is decremented only when the key was
// claimed. It returns whether the key was claimed and whether an approval
// was held.
const claimApproved = `
WITH g AS (
	SELECT 1 FROM reactguard_grants WHERE run = $5 AND fingerprint = $6 AND n > 0 FOR UPDATE
), c AS (
	INSERT INTO reactguard_writes (key, tool, state, owner, at) SELECT $1, $2, 1, $3, $4 FROM g
	ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = 1, result = NULL, code = 0, owner = EXCLUDED.owner, at = EXCLUDED.at
		WHERE reactguard_writes.state IN (0, 3)
	RETURNING 1
), d AS (
	UPDATE reactguard_grants SET n = n - 1, at = $4
	WHERE run = $5 AND fingerprint = $6 AND n > 0 AND EXISTS (SELECT 1 FROM c)
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM c), EXISTS (SELECT 1 FROM g), (SELECT count(*) FROM d)`

// current returns key's record; a running record whose owner lock is free
// (the owner died) is stored and returned as uncertain. The owner's lock is
// tried only for another owner's record, and only for the length of the
// statement.
const current = `
WITH orphan AS (
	UPDATE reactguard_writes SET state = 4, owner = NULL, at = $3
	WHERE key = $1 AND state = 1 AND owner IS DISTINCT FROM $2 AND pg_try_advisory_xact_lock(owner)
	RETURNING key, tool, state, result, code, owner
)
SELECT tool, state, result, code, owner FROM orphan
UNION ALL
SELECT tool, state, result, code, owner FROM reactguard_writes WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM orphan)`

// Begin implements [guard.WriteLedger.Begin]. While the store's owner
// session is lost it claims nothing and returns an error wrapping
// [ErrSessionLost]: a claim nobody can see as owned would read as
// uncertain to every other process.
//
// A claim statement that fails may still have been applied by the server
// (the connection dropped after it was sent). Such a claim names this
// process but nothing in it executes the write; the next Begin of the key
// in this process recognises it (running, owned here, held by no Begin of
// this process) and takes it over, so the write is not stuck in flight.
func (l *WriteLedger) Begin(ctx context.Context, key, tool string) (guard.WriteRecord, bool, error) {
	return l.claimKey(ctx, key, tool, nil)
}

// approval names the approval a claim consumes.
type approval struct{ run, fingerprint string }

// ConsumesFrom implements [guard.ApprovingWriteLedger.ConsumesFrom]: true
// for the Approvals of this ledger's Store.
func (l *WriteLedger) ConsumesFrom(a guard.Approvals) bool {
	ap, ok := a.(*Approvals)
	return ok && ap != nil && ap.s == l.s
}

// BeginApproved implements [guard.ApprovingWriteLedger.BeginApproved]: one
// statement claims the key and consumes the approval together, or
// neither; a second one reads the record when nothing was claimed. It
// shares Begin's handling of a lost owner session and of a claim statement
// that failed after the server applied it (taken over as claimed: that
// statement consumed the approval with the claim).
func (l *WriteLedger) BeginApproved(ctx context.Context, key, tool, run, fingerprint string) (guard.WriteRecord, bool, error) {
	return l.claimKey(ctx, key, tool, &approval{run, fingerprint})
}

// claimKey is Begin (a nil) and BeginApproved.
func (l *WriteLedger) claimKey(ctx context.Context, key, tool string, a *approval) (guard.WriteRecord, bool, error) {
	if err := l.s.sessionErr(ctx); err != nil {
		return guard.WriteRecord{}, false, err
	}
	if err := l.flush(ctx, key); err != nil {
		return guard.WriteRecord{}, false, err
	}
	k := l.s.keys.acquire(key)
	defer l.s.keys.release(key, k)
	k.mu.Lock() // one Begin of key at a time in this process
	defer k.mu.Unlock()
	rec, ok, err := l.begin(ctx, key, tool, k.held, a)
	if ok {
		k.held = true
	}
	return rec, ok, err
}

// begin claims key, with approval a when it is not nil; held says a Begin
// of this process holds it.
func (l *WriteLedger) begin(ctx context.Context, key, tool string, held bool, a *approval) (guard.WriteRecord, bool, error) {
	for range 3 {
		var ok, granted bool
		var err error
		if a == nil {
			err = l.s.pool.QueryRow(ctx, claim, []byte(key), []byte(tool), l.s.owner, l.s.ts()).Scan(&ok)
			if errors.Is(err, pgx.ErrNoRows) {
				err = nil
			}
		} else {
			var consumed int64
			err = l.s.pool.QueryRow(ctx, claimApproved, []byte(key), []byte(tool), l.s.owner, l.s.ts(),
				[]byte(a.run), []byte(a.fingerprint)).Scan(&ok, &granted, &consumed)
			if err == nil && ok != (consumed == 1) {
				return guard.WriteRecord{}, false, fmt.Errorf("postgres: begin %q: claimed %v but consumed %d approvals", key, ok, consumed)
			}
		}
		if err != nil {
			return guard.WriteRecord{}, false, schemaErr(ctx, "begin", err)
		}
		if ok {
			return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning}, true, nil
		}
		rec, found, mine, err := l.current(ctx, key)
		if err != nil {
			return guard.WriteRecord{}, false, err
		}
		if found && rec.State == guard.WriteRunning && mine && !held {
			// Running under this process, and no Begin here holds it:
			// the remains of a claim whose statement failed. Take it.
			tag, err := l.s.pool.Exec(ctx, `UPDATE reactguard_writes SET tool = $2, at = $4 WHERE key = $1 AND state = 1 AND owner = $3`,
				[]byte(key), []byte(tool), l.s.owner, l.s.ts())
			if err != nil {
				return guard.WriteRecord{}, false, schemaErr(ctx, "begin", err)
			}
			if tag.RowsAffected() == 1 {
				return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning}, true, nil
			}
			continue
		}
		if found && rec.State != guard.WriteNone && rec.State != guard.WriteFailed {
			return rec, false, nil
		}
		if a != nil && !granted { // free, and no approval: nothing claimed
			if !found {
				rec = guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteNone}
			}
			return rec, false, nil
		}
		// Released or deleted between the two statements: claim again.
	}
	return guard.WriteRecord{}, false, fmt.Errorf("postgres: begin %q: the record changed under three claims in a row", key)
}

// current returns key's record and whether this store owns it.
func (l *WriteLedger) current(ctx context.Context, key string) (guard.WriteRecord, bool, bool, error) {
	var tool, result []byte
	var state int16
	var code int32
	var owner *int64
	err := l.s.pool.QueryRow(ctx, current, []byte(key), l.s.owner, l.s.ts()).Scan(&tool, &state, &result, &code, &owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return guard.WriteRecord{}, false, false, nil
	}
	if err != nil {
		return guard.WriteRecord{}, false, false, schemaErr(ctx, "write record", err)
	}
	rec := guard.WriteRecord{Key: key, Tool: string(tool), State: guard.WriteState(state), Result: result, Code: errcode.Code(code)}
	return rec, true, owner != nil && *owner == l.s.owner, nil
}

// Finish implements [guard.WriteLedger.Finish]: one upsert of the final
// record, which clears the owner. When the statement fails (the
// connection was lost), the record is kept in the process and stored
// before the key is next read or claimed here (Begin, Get), so a run
// resumed in this process once the database is back finds the truth, not
// its own running claim; the error is returned all the same. If the
// process ends first, the key reads as uncertain to the others.
func (l *WriteLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	k := l.s.keys.acquire(rec.Key)
	defer l.s.keys.release(rec.Key, k)
	k.mu.Lock()
	k.held = false
	k.mu.Unlock()
	p := pendingFinish{tool: []byte(rec.Tool), result: nullBytes(rec.Result), state: int16(rec.State), code: int32(rec.Code)}
	if err := l.store(ctx, rec.Key, p); err != nil {
		l.s.pending.Put(rec.Key, p)
		return err
	}
	l.s.pending.Delete(rec.Key)
	return nil
}

func (l *WriteLedger) store(ctx context.Context, key string, p pendingFinish) error {
	_, err := l.s.pool.Exec(ctx, `
INSERT INTO reactguard_writes (key, tool, state, result, code, owner, at) VALUES ($1, $2, $3, $4, $5, NULL, $6)
ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = EXCLUDED.state, result = EXCLUDED.result,
	code = EXCLUDED.code, owner = NULL, at = EXCLUDED.at`,
		[]byte(key), p.tool, p.state, p.result, p.code, l.s.ts())
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
		return fmt.Errorf("postgres: storing the earlier result of %q: %w", key, err)
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
	rec, found, _, err := l.current(ctx, key)
	return rec, found, err
}

// keys holds, per idempotency key in use in this process, a lock that
// serialises its Begin calls and whether a Begin of this process holds the
// key (claimed it and has not finished it).
type keys struct {
	mu sync.Mutex
	m  map[string]*keyState
}

type keyState struct {
	mu   sync.Mutex
	refs int // guarded by keys.mu
	held bool
}

func (ks *keys) acquire(key string) *keyState {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.m == nil {
		ks.m = make(map[string]*keyState)
	}
	k := ks.m[key]
	if k == nil {
		k = &keyState{}
		ks.m[key] = k
	}
	k.refs++
	return k
}

func (ks *keys) release(key string, k *keyState) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	k.refs--
	if k.refs == 0 {
		k.mu.Lock()
		held := k.held
		k.mu.Unlock()
		if !held {
			delete(ks.m, key)
		}
	}
}
