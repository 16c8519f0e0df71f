package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
)

// WriteLedger is the [guard.WriteLedger] of a [Store]. Begin claims a key
// with one INSERT … ON CONFLICT DO UPDATE … WHERE (the claim is taken only
// from no record, WriteNone or WriteFailed, and only while this Store's
// lease is live in the database, checked in the same statement), atomic
// under the row's lock, and returns the key's record in the same
// statement when it claims nothing.
//
// A running write names its owner, the lease of the Store that claimed it,
// and carries the claim's fencing token, drawn from one sequence of the
// database ([guard.WriteRecord].Token). A running record whose owner's
// lease has expired belongs to a process that died, or lost touch with the
// database for longer than its lease, before it recorded the result: Begin
// and Get report it as [guard.WriteUncertain], and store it so, so the
// write gate verifies it before anything runs it again. A running record
// whose owner's lease is live is in flight, however long it runs. Finish
// stores a record only while the claim it names (its Token) is the key's
// current one ([guard.ErrFenced] otherwise).
//
// It is a [guard.ApprovingWriteLedger] and a [guard.GatingWriteLedger] for
// the same Store's [Approvals] (a write claimed with its approval consumed,
// or gated, in one statement), a [guard.RecordingWriteLedger] for the same
// Store's [Evidence] (a write's record and its evidence in one statement)
// and a [guard.LeasedWriteLedger] ([WriteLedger.Hold]).
type WriteLedger struct{ s *Store }

var (
	_ guard.GatingWriteLedger    = (*WriteLedger)(nil)
	_ guard.RecordingWriteLedger = (*WriteLedger)(nil)
	_ guard.LeasedWriteLedger    = (*WriteLedger)(nil)
)

// currentColumns read the key's record as it was before the statement (w,
// left-joined), and whether it is running under an expired lease.
const currentColumns = `w.key IS NOT NULL, coalesce(w.tool, ''::bytea), coalesce(w.state, 0::smallint), w.result,
	coalesce(w.code, 0), w.owner, coalesce(w.token, 0), coalesce(w.state = 1 AND NOT ` + `EXISTS (SELECT 1 FROM reactguard_leases l WHERE l.owner = w.owner AND l.expires > now())` + `, false)
FROM (SELECT 1) AS one LEFT JOIN reactguard_writes w ON w.key = $1`

// claimSQL takes key from no record, WriteNone or WriteFailed, under this
// Store's live lease ($3). Parameters: key, tool, owner, at.
const claimSQL = `
WITH me AS (
	SELECT 1 FROM reactguard_leases WHERE owner = $3 AND expires > now()
), c AS (
	INSERT INTO reactguard_writes (key, tool, state, owner, token, at)
	SELECT $1, $2, 1, $3, nextval('reactguard_fence'), $4 FROM me
	ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = 1, result = NULL, code = 0,
		owner = EXCLUDED.owner, token = EXCLUDED.token, at = EXCLUDED.at
		WHERE reactguard_writes.state IN (0, 3)
	RETURNING token
)
SELECT EXISTS (SELECT 1 FROM me), (SELECT token FROM c), false, 0::bigint, false, ` + currentColumns

// claimApprovedSQL takes key from no record, WriteNone or WriteFailed and
// consumes one approval of (run, fingerprint), only both together, when
// key is not the key the approval was granted on ($12, see grantKey: the
// write called with an explicit idempotency key): the grant's row is locked
// first (FOR UPDATE: a concurrent claim of the same approval waits, then
// sees it spent), the key is claimed only when the grant exists, and the
// grant is decremented only when the key was claimed. With $10 set and no
// approval held for a key that is free, it records the call as gated
// instead (Approvals.Gate in the same statement). Parameters: key, tool,
// owner, at, run, fingerprint, call id, args, round, gate, gated tool,
// grant key.
const claimApprovedSQL = `
WITH me AS (
	SELECT 1 FROM reactguard_leases WHERE owner = $3 AND expires > now()
), g AS (
	SELECT 1 FROM reactguard_writes WHERE key = $12 AND grants > 0 AND EXISTS (SELECT 1 FROM me) FOR UPDATE
), c AS (
	INSERT INTO reactguard_writes (key, tool, state, owner, token, run, at)
	SELECT $1, $2, 1, $3, nextval('reactguard_fence'), $5, $4 FROM g
	ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = 1, result = NULL, code = 0,
		owner = EXCLUDED.owner, token = EXCLUDED.token, run = EXCLUDED.run, at = EXCLUDED.at
		WHERE reactguard_writes.state IN (0, 3)
	RETURNING token
), d AS (
	UPDATE reactguard_writes SET grants = grants - 1
	WHERE key = $12 AND grants > 0 AND EXISTS (SELECT 1 FROM c)
	RETURNING 1
), ` + gateCTEs + `
SELECT EXISTS (SELECT 1 FROM me), (SELECT token FROM c), EXISTS (SELECT 1 FROM g), (SELECT count(*) FROM d),
	EXISTS (SELECT 1 FROM gate), ` + currentColumns

// claimGrantedHere claims a key on whose row the approval was granted
// (the key the write gate derives for the call, its default): one update
// of that row, in place, takes the key and consumes the approval
// together, under the row's lock, only from WriteNone or WriteFailed and
// only while this Store's lease is live. Alone, it is the statement a
// Store makes first for a key on whose row it granted an approval itself
// (Approvals.Approve, Claims.ClaimDecided), as a resume does before the
// approved write; it is also claimGrantedSQL's claim, so it claims exactly
// when that statement would. Parameters: key, tool, owner, at, run.
const claimGrantedHere = `
UPDATE reactguard_writes SET tool = $2, state = 1, result = NULL, code = 0, owner = $3,
	token = nextval('reactguard_fence'), run = $5, at = $4, grants = grants - 1
WHERE key = $1 AND state IN (0, 3) AND grants > 0
	AND EXISTS (SELECT 1 FROM reactguard_leases WHERE owner = $3 AND expires > now())
RETURNING token`

// claimGrantedSQL is claimApprovedSQL for a key that is the one the
// approval was granted on: its claim is claimGrantedHere, with the parts
// that answer when it claims nothing (the key's record; the call gated
// when no approval is held). Parameters: those of claimApprovedSQL but
// the last.
const claimGrantedSQL = `
WITH me AS (
	SELECT 1 FROM reactguard_leases WHERE owner = $3 AND expires > now()
), g AS (
	SELECT 1 FROM reactguard_writes WHERE key = $1 AND grants > 0 AND EXISTS (SELECT 1 FROM me)
), c AS (` + claimGrantedHere + `), ` + gateCTEs + `
SELECT EXISTS (SELECT 1 FROM me), (SELECT token FROM c), EXISTS (SELECT 1 FROM g), (SELECT count(*) FROM c),
	EXISTS (SELECT 1 FROM gate), ` + currentColumns

// gateCTEs record the call as waiting for approval (CTE gate) when $10 is
// set, this Store's lease is live (me), no approval is held (g) and the
// key is free; an earlier decision on the same call id is dropped.
const gateCTEs = `free AS (
	SELECT 1 FROM me WHERE $10 AND NOT EXISTS (SELECT 1 FROM g)
		AND NOT EXISTS (SELECT 1 FROM reactguard_writes WHERE key = $1 AND state NOT IN (0, 3))
), forget AS (
	DELETE FROM reactguard_decisions WHERE run = $5 AND call_id = $7 AND EXISTS (SELECT 1 FROM free)
), gate AS (
	INSERT INTO reactguard_gated (run, call_id, tool, args, fingerprint, round, at)
	SELECT $5, $7, $11, $8, $6, $9, $4 FROM free
	ON CONFLICT (run) DO UPDATE SET call_id = EXCLUDED.call_id, tool = EXCLUDED.tool, args = EXCLUDED.args,
		fingerprint = EXCLUDED.fingerprint, round = EXCLUDED.round, at = EXCLUDED.at
	RETURNING 1
)`

// current returns key's record; a running record whose owner's lease has
// expired is stored and returned as uncertain (its token kept: the record
// of the claim it names may still land, and is the truth).
const current = `
WITH orphan AS (
	UPDATE reactguard_writes SET state = 4, owner = NULL, at = $2
	WHERE key = $1 AND state = 1
		AND NOT EXISTS (SELECT 1 FROM reactguard_leases l WHERE l.owner = reactguard_writes.owner AND l.expires > now())
	RETURNING key, tool, state, result, code, owner, token
)
SELECT tool, state, result, code, owner, token FROM orphan
UNION ALL
SELECT tool, state, result, code, owner, token FROM reactguard_writes WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM orphan)`

// Begin implements [guard.WriteLedger.Begin]. While the Store holds no
// lease (it lost it, and cannot start a new one) it claims nothing and
// returns an error wrapping runstore.ErrLeaseLost.
//
// A claim statement that fails may still have been applied by the server
// (the connection dropped after it was sent). Such a claim names this
// Store's lease but nothing in it executes the write; the next Begin of
// the key in this process recognises it (running, owned by the current
// lease, held by no Begin of this process) and takes it over, so the write
// is not stuck in flight.
func (l *WriteLedger) Begin(ctx context.Context, key, tool string) (guard.WriteRecord, bool, error) {
	rec, ok, _, err := l.claimKey(ctx, key, tool, nil)
	return rec, ok, err
}

// approval names the approval a claim consumes, and the call it gates
// when none is held (gate false: gate nothing).
type approval struct {
	run, fingerprint string
	gate             bool
	call             guard.GatedCall
}

// ConsumesFrom implements [guard.ApprovingWriteLedger.ConsumesFrom]: true
// for the Approvals of this ledger's Store.
func (l *WriteLedger) ConsumesFrom(a guard.Approvals) bool {
	ap, ok := a.(*Approvals)
	return ok && ap != nil && ap.s == l.s
}

// BeginApproved implements [guard.ApprovingWriteLedger.BeginApproved]: one
// statement claims the key and consumes the approval together, or
// neither, and returns the key's record. It shares Begin's handling of a
// lost lease and of a claim statement that failed after the server applied
// it (taken over as claimed: that statement consumed the approval with the
// claim).
func (l *WriteLedger) BeginApproved(ctx context.Context, key, tool, run, fingerprint string) (guard.WriteRecord, bool, error) {
	rec, ok, _, err := l.claimKey(ctx, key, tool, &approval{run: run, fingerprint: fingerprint})
	return rec, ok, err
}

// BeginApprovedOrGate implements [guard.GatingWriteLedger]: BeginApproved,
// and when the key is free and no approval is held, c recorded as the
// call waiting for approval, in the same statement.
func (l *WriteLedger) BeginApprovedOrGate(ctx context.Context, key, tool, run string, c guard.GatedCall) (guard.WriteRecord, bool, bool, error) {
	return l.claimKey(ctx, key, tool, &approval{run: run, fingerprint: c.Fingerprint, gate: true, call: c})
}

// claimKey is Begin (a nil), BeginApproved and BeginApprovedOrGate.
func (l *WriteLedger) claimKey(ctx context.Context, key, tool string, a *approval) (guard.WriteRecord, bool, bool, error) {
	ep, err := l.s.leaseNow(ctx)
	if err != nil {
		return guard.WriteRecord{}, false, false, err
	}
	if err := l.flush(ctx, key); err != nil {
		return guard.WriteRecord{}, false, false, err
	}
	k := l.s.keys.acquire(key)
	defer l.s.keys.release(key, k)
	k.mu.Lock() // one Begin of key at a time in this process
	defer k.mu.Unlock()
	rec, ok, gated, err := l.begin(ctx, ep, key, tool, k.held, a)
	if ok {
		k.held, k.ep, k.token = true, ep, rec.Token
	}
	if gated {
		l.s.gated.put(a.run, cloneGated(a.call))
	}
	return rec, ok, gated, err
}

// claimed is what a claim statement answers.
type claimed struct {
	leaseOK  bool
	token    *int64 // the claim's token; nil when nothing was claimed
	granted  bool
	consumed int64
	gated    bool
	found    bool
	rec      guard.WriteRecord
	owner    *int64
	orphan   bool // running under an expired lease
}

func (l *WriteLedger) claimStatement(ctx context.Context, ep *epoch, key, tool string, a *approval) (claimed, error) {
	var c claimed
	var rtool, result []byte
	var state int16
	var code int32
	var token int64
	var row pgx.Row
	if a == nil {
		row = l.s.pool.QueryRow(ctx, claimSQL, []byte(key), []byte(tool), ep.owner, l.s.ts())
	} else {
		args := []any{[]byte(key), []byte(tool), ep.owner, l.s.ts(),
			[]byte(a.run), []byte(a.fingerprint), []byte(a.call.CallID), nullBytes(a.call.Args), a.call.Round, a.gate, []byte(a.call.Tool)}
		q := claimGrantedSQL
		if gk := grantKey(a.run, a.fingerprint); string(gk) != key {
			q = claimApprovedSQL
			args = append(args, gk)
		} else if _, ok := l.s.granted.take(key); ok {
			if c, done, err := l.claimHere(ctx, key, tool, args[:5]); done || err != nil {
				return c, err
			}
		}
		row = l.s.pool.QueryRow(ctx, q, args...)
	}
	err := row.Scan(&c.leaseOK, &c.token, &c.granted, &c.consumed, &c.gated,
		&c.found, &rtool, &state, &result, &code, &c.owner, &token, &c.orphan)
	c.rec = guard.WriteRecord{Key: key, Tool: string(rtool), State: guard.WriteState(state), Result: result, Code: errcode.Code(code), Token: uint64(token)}
	return c, err
}

// claimHere makes claimGrantedHere alone (parameters args) and reports
// whether it claimed key; when it claimed nothing, the caller makes the
// full statement.
func (l *WriteLedger) claimHere(ctx context.Context, key, tool string, args []any) (claimed, bool, error) {
	var t int64
	err := l.s.pool.QueryRow(ctx, claimGrantedHere, args...).Scan(&t)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return claimed{}, false, nil
	case err != nil:
		return claimed{}, false, err
	}
	c := claimed{leaseOK: true, token: &t, granted: true, consumed: 1}
	c.rec = guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning, Token: uint64(t)}
	return c, true, nil
}

// begin claims key under the lease ep, with approval a when it is not nil;
// held says a Begin of this process holds it.
func (l *WriteLedger) begin(ctx context.Context, ep *epoch, key, tool string, held bool, a *approval) (guard.WriteRecord, bool, bool, error) {
	for range 3 {
		c, err := l.claimStatement(ctx, ep, key, tool, a)
		if err != nil {
			return guard.WriteRecord{}, false, false, schemaErr(ctx, "begin", err)
		}
		if !c.leaseOK {
			return guard.WriteRecord{}, false, false, l.s.leaseRefused(ep)
		}
		if a != nil && (c.token != nil) != (c.consumed == 1) {
			return guard.WriteRecord{}, false, false, fmt.Errorf("postgres: begin %q: claimed %v but consumed %d approvals", key, c.token != nil, c.consumed)
		}
		if c.token != nil {
			return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning, Token: uint64(*c.token)}, true, false, nil
		}
		if c.gated {
			return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteNone, Token: c.rec.Token}, false, true, nil
		}
		free := !c.found || c.rec.State == guard.WriteNone || c.rec.State == guard.WriteFailed
		switch {
		case c.found && c.rec.State == guard.WriteRunning && c.orphan:
			// Its owner's lease expired: uncertain (stored so by current).
			rec, found, _, err := l.current(ctx, key)
			if err != nil {
				return guard.WriteRecord{}, false, false, err
			}
			if found && rec.State != guard.WriteNone && rec.State != guard.WriteFailed {
				return rec, false, false, nil
			}
			continue
		case c.found && c.rec.State == guard.WriteRunning && c.owner != nil && *c.owner == ep.owner && !held:
			// Running under this Store's lease, and no Begin here holds
			// it: the remains of a claim whose statement failed. Take it.
			var token int64
			err := l.s.pool.QueryRow(ctx, `UPDATE reactguard_writes SET tool = $2, at = $4 WHERE key = $1 AND state = 1 AND owner = $3 RETURNING token`,
				[]byte(key), []byte(tool), ep.owner, l.s.ts()).Scan(&token)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return guard.WriteRecord{}, false, false, schemaErr(ctx, "begin", err)
			}
			return guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteRunning, Token: uint64(token)}, true, false, nil
		case !free:
			return c.rec, false, false, nil
		case a != nil && !c.granted: // free, and no approval: nothing claimed
			if !c.found {
				c.rec = guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteNone}
			}
			return c.rec, false, false, nil
		}
		// Free in the statement's snapshot but claimed or changed by a
		// concurrent statement: claim again.
	}
	return guard.WriteRecord{}, false, false, fmt.Errorf("postgres: begin %q: the record changed under three claims in a row", key)
}

// current returns key's record and whether this store's current lease
// owns it.
func (l *WriteLedger) current(ctx context.Context, key string) (guard.WriteRecord, bool, bool, error) {
	var tool, result []byte
	var state int16
	var code int32
	var owner *int64
	var token int64
	err := l.s.pool.QueryRow(ctx, current, []byte(key), l.s.ts()).Scan(&tool, &state, &result, &code, &owner, &token)
	if errors.Is(err, pgx.ErrNoRows) {
		return guard.WriteRecord{}, false, false, nil
	}
	if err != nil {
		return guard.WriteRecord{}, false, false, schemaErr(ctx, "write record", err)
	}
	rec := guard.WriteRecord{Key: key, Tool: string(tool), State: guard.WriteState(state), Result: result, Code: errcode.Code(code), Token: uint64(token)}
	ep := l.s.current()
	return rec, true, ep != nil && owner != nil && *owner == ep.owner, nil
}

// Hold implements [guard.LeasedWriteLedger.Hold]: the context ends when the
// lease under which this Store claimed rec is lost.
func (l *WriteLedger) Hold(ctx context.Context, rec guard.WriteRecord) (context.Context, context.CancelFunc) {
	return hold(ctx, l.s.keys.epochOf(rec.Key, rec.Token))
}

// Finish implements [guard.WriteLedger.Finish]: one statement. A record
// with a Token is stored only while that claim is the key's current one
// and the key is running or uncertain (an UPDATE … WHERE token = …);
// otherwise nothing is stored and the error wraps [guard.ErrFenced]. When
// the statement fails (the connection was lost), the record is kept in the
// process and stored before the key is next read or claimed here (Begin,
// Get), so a run resumed in this process once the database is back finds
// the truth, not its own running claim; the error is returned all the
// same. If the process ends first, the key reads as uncertain to the
// others once its lease has expired.
func (l *WriteLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	return l.finish(ctx, rec, "", nil)
}

// RecordsTo implements [guard.RecordingWriteLedger.RecordsTo]: true for
// the Evidence of this ledger's Store, and an evidence.Cache over it.
func (l *WriteLedger) RecordsTo(ev evidence.Ledger) bool {
	if c, ok := ev.(*evidence.Cache); ok {
		ev = c.Ledger()
	}
	e, ok := ev.(*Evidence)
	return ok && e != nil && e.s == l.s
}

// FinishRecorded implements [guard.RecordingWriteLedger.FinishRecorded]:
// Finish and the evidence record r of run in one statement, the evidence
// written only when the record is. When the statement fails, the write's
// record is kept in the process as Finish keeps it, and the evidence
// record is not (the write, claimed again, is reused from the ledger and
// its reuse recorded as evidence then).
func (l *WriteLedger) FinishRecorded(ctx context.Context, rec guard.WriteRecord, run string, r evidence.Record) error {
	if err := evidence.Check(r); err != nil {
		return err
	}
	return l.finish(ctx, rec, run, &r)
}

func (l *WriteLedger) finish(ctx context.Context, rec guard.WriteRecord, run string, r *evidence.Record) error {
	k := l.s.keys.acquire(rec.Key)
	defer l.s.keys.release(rec.Key, k)
	k.mu.Lock()
	k.held, k.ep = false, nil
	k.mu.Unlock()
	p := pendingFinish{tool: []byte(rec.Tool), result: nullBytes(rec.Result), state: int16(rec.State), code: int32(rec.Code), token: int64(rec.Token)}
	if r != nil {
		l.s.prefetched.Delete(run)
	}
	err := l.store(ctx, rec.Key, p, run, r)
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

// finishSQL stores the final record $1…: fenced by token ($7, when not 0)
// to a running or uncertain key, else an upsert. It returns whether it
// stored it.
const finishFenced = `UPDATE reactguard_writes SET tool = $2, state = $3, result = $4, code = $5, owner = NULL, at = $6
	WHERE key = $1 AND token = $7 AND state IN (1, 4)
	RETURNING 1`

const finishAny = `INSERT INTO reactguard_writes (key, tool, state, result, code, owner, at) VALUES ($1, $2, $3, $4, $5, NULL, $6)
	ON CONFLICT (key) DO UPDATE SET tool = EXCLUDED.tool, state = EXCLUDED.state, result = EXCLUDED.result,
		code = EXCLUDED.code, owner = NULL, at = EXCLUDED.at
	RETURNING 1`

// store stores p for key and, when r is not nil, the evidence record r of
// run, in one statement.
func (l *WriteLedger) store(ctx context.Context, key string, p pendingFinish, run string, r *evidence.Record) error {
	w := finishAny
	if p.token != 0 {
		w = finishFenced
	}
	args := []any{[]byte(key), p.tool, p.state, p.result, p.code, l.s.ts()}
	if p.token != 0 {
		args = append(args, p.token)
	}
	q := `WITH w AS (` + w + `) SELECT EXISTS (SELECT 1 FROM w), false`
	var at time.Time
	touch := false
	if r != nil {
		n := len(args)
		at = l.s.ts()
		touch = !l.s.touches.fresh(run, at)
		q = `WITH w AS (` + w + `), ` + appendCTEs(n, `EXISTS (SELECT 1 FROM w)`, touch) + ` SELECT EXISTS (SELECT 1 FROM w), ` + touchedColumn(touch)
		args = append(args, appendArgs(run, *r, at)...)
	}
	var stored, touched bool
	if err := l.s.pool.QueryRow(ctx, q, args...).Scan(&stored, &touched); err != nil {
		return schemaErr(ctx, "finish", err)
	}
	if touched {
		l.s.touches.moved(run, at)
	}
	if !stored {
		return fmt.Errorf("postgres: finish %q: %w: its claim %d is no longer the key's current one, or the key is not running or uncertain", key, guard.ErrFenced, p.token)
	}
	return nil
}

// flush stores the pending final record of key, if any. A record whose
// claim was taken over meanwhile is dropped.
func (l *WriteLedger) flush(ctx context.Context, key string) error {
	p, ok := l.s.pending.Get(key)
	if !ok {
		return nil
	}
	err := l.store(ctx, key, p, "", nil)
	if err != nil && !errors.Is(err, guard.ErrFenced) {
		return fmt.Errorf("postgres: storing the earlier result of %q: %w", key, err)
	}
	l.s.pending.DeleteIf(key, func(cur pendingFinish) bool {
		return cur.state == p.state && cur.token == p.token && string(cur.result) == string(p.result)
	})
	return nil
}

// Get implements [guard.WriteLedger.Get]; a running write whose owner's
// lease has expired reads (and is stored) as uncertain.
func (l *WriteLedger) Get(ctx context.Context, key string) (guard.WriteRecord, bool, error) {
	if err := l.flush(ctx, key); err != nil {
		return guard.WriteRecord{}, false, err
	}
	rec, found, _, err := l.current(ctx, key)
	return rec, found, err
}

// keys holds, per idempotency key in use in this process, a lock that
// serialises its Begin calls, and whether a Begin of this process holds
// the key (claimed it and has not finished it), under which lease and
// token.
type keys struct {
	mu sync.Mutex
	m  map[string]*keyState
}

type keyState struct {
	mu    sync.Mutex
	refs  int // guarded by keys.mu
	held  bool
	ep    *epoch
	token uint64
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

// epochOf returns the lease under which this process holds the claim of
// key with token, or nil.
func (ks *keys) epochOf(key string, token uint64) *epoch {
	ks.mu.Lock()
	k := ks.m[key]
	ks.mu.Unlock()
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.held || k.token != token {
		return nil
	}
	return k.ep
}

// touchEvery is how old a run's last write time may be before an append
// moves it (an append moves it only when it is older than this): it moves
// in steps of this much, so that the appends of a busy run do not all
// write its row.
const touchEvery = 10 * time.Second

// appendCTEs returns the CTEs that append one evidence record, only when
// cond holds: the record (one row and its primary key: no other index, see
// Evidence), and, when touch is set, the run's last write time, moved only
// when it is more than touchEvery old (a fresh one is not even locked; the
// CTE touched returns a row when it moved it). Its parameters are numbered
// from base+1 in the order of appendArgs (the record, the time, then its
// provenance).
func appendCTEs(base int, cond string, touch bool) string {
	p := func(i int) string { return fmt.Sprintf("$%d", base+i) }
	ctes := `rec AS (
	INSERT INTO reactguard_records (run, call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round,
		fetched_at, source, object_id, version, voucher, idempotency_key)
	SELECT ` + p(1) + `, ` + p(2) + `, ` + p(3) + `, ` + p(4) + `, ` + p(5) + `, ` + p(6) + `, ` + p(7) + `, ` + p(8) + `, ` + p(9) + `, ` + p(10) + `,
		` + p(12) + `::timestamptz, ` + p(13) + `::bytea, ` + p(14) + `::bytea, ` + p(15) + `::bytea, ` + p(16) + `::bytea, ` + p(17) + `::bytea
	WHERE ` + cond + `
	ON CONFLICT (run, call_id, attempt) DO NOTHING
)`
	if !touch {
		// The time parameter is still sent: give it its type.
		return ctes + `, untouched AS (SELECT ` + p(11) + `::timestamptz)`
	}
	return ctes + `, touched AS (
	INSERT INTO reactguard_evidence_runs (run, at) SELECT ` + p(1) + `, ` + p(11) + ` WHERE ` + cond + `
		AND NOT EXISTS (SELECT 1 FROM reactguard_evidence_runs WHERE run = ` + p(1) + ` AND at >= ` + p(11) + `::timestamptz - interval '` + fmt.Sprint(touchEvery.Seconds()) + ` seconds')
	ON CONFLICT (run) DO UPDATE SET at = EXCLUDED.at
	RETURNING 1
)`
}

// touchedColumn is the select-list column that says whether the CTEs of
// appendCTEs moved the run's last write time.
func touchedColumn(touch bool) string {
	if touch {
		return `EXISTS (SELECT 1 FROM touched)`
	}
	return `false`
}

// touchMemo remembers when this Store last moved the last write time of a
// run (reactguard_evidence_runs), so that its appends within touchEvery
// after that leave the row alone without asking the database: an append
// whose statement has no part that touches the row costs less than one
// whose part finds it fresh. Another process's touch is not remembered
// (its appends here ask the database, as before). The Store forgets it all
// when it prunes or deletes evidence, so that a run whose row it deleted
// gets it again at its next append.
type touchMemo struct{ memo[time.Time] }

// fresh reports whether this Store moved run's last write time at most
// touchEvery before at, and not after it.
func (t *touchMemo) fresh(run string, at time.Time) bool {
	last, ok := t.get(run)
	return ok && at.Sub(last) <= touchEvery && !at.Before(last)
}

// moved records that this Store moved run's last write time to at.
func (t *touchMemo) moved(run string, at time.Time) { t.put(run, at) }

// forget empties the memo.
func (t *touchMemo) forget() { t.clear() }

// appendArgs are the parameters of appendCTEs for record r of run.
func appendArgs(run string, r evidence.Record, at any) []any {
	pv := r.Provenance.Clean()
	var fetched *time.Time
	if !pv.FetchedAt.IsZero() {
		fetched = &pv.FetchedAt
	}
	return []any{[]byte(run), []byte(r.CallID), r.Attempt, []byte(r.Tool), []byte(r.Fingerprint), int16(r.Outcome), int32(r.Code),
		nullBytes(r.Payload), []byte(r.PayloadRef), r.Round, at,
		fetched, nullText(pv.Source), nullText(pv.ObjectID), nullText(pv.Version), nullText(pv.Voucher), nullText(pv.IdempotencyKey)}
}

// salted returns the fact hash h of run as the records of schema versions
// 4 to 6 kept it in their facts column: salted with the run.
func salted(run string, h []byte) []byte {
	d := sha256.New()
	var n [binary.MaxVarintLen64]byte
	d.Write(n[:binary.PutUvarint(n[:], uint64(len(run)))])
	d.Write([]byte(run))
	d.Write(h)
	return d.Sum(nil)[:16]
}

// cloneGated returns c with its own copy of the arguments.
func cloneGated(c guard.GatedCall) guard.GatedCall {
	c.Args = append([]byte(nil), c.Args...)
	return c
}
