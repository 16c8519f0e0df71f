package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
)

// Threads is the [threadstore.Store] of a [Store]: the tables
// reactguard_threads and reactguard_thread_turns, and the store's evidence
// tables for the threads' evidence (under [threadstore.Key]). Each
// operation that must be atomic is one statement: Acquire is one INSERT …
// ON CONFLICT DO UPDATE … WHERE (a free thread, the thread parked on the
// same run, or one whose holder's lease has expired), so of any number of
// concurrent Acquires of one thread, in any number of processes, exactly
// one succeeds; Park and Release are conditional UPDATEs on the lease
// token; Commit updates the thread (on its token and its turn count) and
// inserts the turn in one statement. A thread's lease names its holder by
// the owner id of the holding Store's lease, as a running write does (see
// [WriteLedger]): a thread whose holder's lease expired by the database's
// clock — its process died, stalled, or closed its store — is given to
// the same run's resume, or dropped by Release without a token; another
// run is never given it. While the Store holds no lease, Acquire takes
// nothing and returns an error wrapping runstore.ErrLeaseLost.
type Threads struct{ s *Store }

var _ threadstore.Store = (*Threads)(nil)

// Threads returns the store's [threadstore.Store].
func (s *Store) Threads() *Threads { return &Threads{s: s} }

const threadColumns = `id, tenant, user_id, turns, run, holder, summary, summarized, created, updated`

func scanThread(row pgx.Row) (threadstore.Thread, error) {
	var id, tenant, user, run, summary []byte
	var holder int64
	var th threadstore.Thread
	var turns, summarized int32
	if err := row.Scan(&id, &tenant, &user, &turns, &run, &holder, &summary, &summarized, &th.Created, &th.Updated); err != nil {
		return threadstore.Thread{}, err
	}
	th.ID, th.Owner, th.Run = string(id), runstore.Owner{Tenant: string(tenant), User: string(user)}, string(run)
	th.Turns, th.Summarized, th.Held, th.Summary = int(turns), int(summarized), holder != 0, summary
	th.Created, th.Updated = th.Created.UTC(), th.Updated.UTC()
	return th, nil
}

// acquireThread creates or takes a thread: a free one, or one parked on
// the same run, or held for the same run by a Store whose lease expired.
const acquireThread = `
INSERT INTO reactguard_threads AS t (id, tenant, user_id, run, holder, token, created, updated)
VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
ON CONFLICT (id) DO UPDATE SET run = EXCLUDED.run, holder = EXCLUDED.holder, token = EXCLUDED.token, updated = EXCLUDED.updated
	WHERE t.tenant = EXCLUDED.tenant AND t.user_id = EXCLUDED.user_id
		AND (t.run = '\x' OR (t.run = EXCLUDED.run AND (t.holder = 0
			OR (t.holder <> EXCLUDED.holder
				AND NOT EXISTS (SELECT 1 FROM reactguard_leases l WHERE l.owner = t.holder AND l.expires > now())))))
RETURNING ` + threadColumns

// Acquire implements [threadstore.Store.Acquire].
func (t *Threads) Acquire(ctx context.Context, id string, owner runstore.Owner, run string) (threadstore.Thread, string, error) {
	if err := threadstore.CheckAcquire(id, owner, run); err != nil {
		return threadstore.Thread{}, "", err
	}
	ep, err := t.s.leaseNow(ctx)
	if err != nil {
		return threadstore.Thread{}, "", err
	}
	token := threadstore.NewToken()
	th, err := scanThread(t.s.pool.QueryRow(ctx, acquireThread, []byte(id), []byte(owner.Tenant), []byte(owner.User), []byte(run), ep.owner, token, t.s.ts()))
	if err == nil {
		return th, token, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return threadstore.Thread{}, "", schemaErr(ctx, "acquire thread", err)
	}
	th, ok, err := t.Get(ctx, id)
	switch {
	case err != nil:
		return threadstore.Thread{}, "", err
	case !ok:
		return t.Acquire(ctx, id, owner, run) // deleted meanwhile
	case th.Owner != owner:
		return threadstore.Thread{}, "", fmt.Errorf("%w: thread %q", threadstore.ErrNotOwner, id)
	}
	th.Summary = nil
	return th, "", fmt.Errorf("%w: thread %q is held by run %q", threadstore.ErrBusy, id, th.Run)
}

// lost returns ErrLeaseLost for thread id.
func lost(id string) error { return fmt.Errorf("%w: thread %q", threadstore.ErrLeaseLost, id) }

// Park implements [threadstore.Store.Park].
func (t *Threads) Park(ctx context.Context, id, token string) error {
	tag, err := t.s.pool.Exec(ctx, `UPDATE reactguard_threads SET holder = 0, token = '', updated = $3 WHERE id = $1 AND token = $2 AND token <> ''`,
		[]byte(id), token, t.s.ts())
	if err != nil {
		return schemaErr(ctx, "park thread", err)
	}
	if tag.RowsAffected() == 0 {
		return lost(id)
	}
	return nil
}

// Commit implements [threadstore.Store.Commit] in one statement.
func (t *Threads) Commit(ctx context.Context, id, token string, turn threadstore.Turn, sum *threadstore.Summary) error {
	if err := threadstore.CheckTurn(turn, sum); err != nil {
		return err
	}
	set, args := ``, []any{[]byte(id), token, turn.Index, []byte(turn.Run), int64(turn.Tokens), turn.Content, t.s.ts()}
	if sum != nil {
		set, args = `, summary = $8, summarized = $9`, append(args, sum.Content, sum.Through)
	}
	tag, err := t.s.pool.Exec(ctx, `
WITH th AS (
	UPDATE reactguard_threads SET turns = $3, run = '\x', holder = 0, token = '', updated = $7`+set+`
	WHERE id = $1 AND token = $2 AND token <> '' AND turns + 1 = $3
	RETURNING id
)
INSERT INTO reactguard_thread_turns (thread, idx, run, tokens, content, at) SELECT id, $3, $4, $5, $6, $7 FROM th`, args...)
	if err != nil {
		return schemaErr(ctx, "commit turn", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var turns int32
	err = t.s.pool.QueryRow(ctx, `SELECT turns FROM reactguard_threads WHERE id = $1 AND token = $2 AND token <> ''`, []byte(id), token).Scan(&turns)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return lost(id)
	case err != nil:
		return schemaErr(ctx, "commit turn", err)
	}
	return fmt.Errorf("%w: turn %d of thread %q, which holds %d", threadstore.ErrTurn, turn.Index, id, turns)
}

// Release implements [threadstore.Store.Release].
func (t *Threads) Release(ctx context.Context, id, run, token string) error {
	if token != "" {
		tag, err := t.s.pool.Exec(ctx, `UPDATE reactguard_threads SET run = '\x', holder = 0, token = '', updated = $3 WHERE id = $1 AND token = $2`,
			[]byte(id), token, t.s.ts())
		if err != nil {
			return schemaErr(ctx, "release thread", err)
		}
		if tag.RowsAffected() == 0 {
			return lost(id)
		}
		return nil
	}
	var mine int64 // this Store's lease: a thread it holds is running here
	if ep := t.s.current(); ep != nil {
		mine = ep.owner
	}
	tag, err := t.s.pool.Exec(ctx, `
UPDATE reactguard_threads SET run = '\x', holder = 0, token = '', updated = $3
WHERE id = $1 AND run = $2 AND run <> '\x' AND (holder = 0 OR (holder <> $4
	AND NOT EXISTS (SELECT 1 FROM reactguard_leases l WHERE l.owner = reactguard_threads.holder AND l.expires > now())))`,
		[]byte(id), []byte(run), t.s.ts(), mine)
	if err != nil {
		return schemaErr(ctx, "release thread", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	th, ok, err := t.Get(ctx, id)
	if err != nil {
		return err
	}
	if ok && th.Run == run && run != "" {
		return fmt.Errorf("%w: thread %q is held by run %q, running", threadstore.ErrBusy, id, run)
	}
	return nil
}

// Get implements [threadstore.Store.Get].
func (t *Threads) Get(ctx context.Context, id string) (threadstore.Thread, bool, error) {
	th, err := scanThread(t.s.pool.QueryRow(ctx, `SELECT `+threadColumns+` FROM reactguard_threads WHERE id = $1`, []byte(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return threadstore.Thread{}, false, nil
	}
	if err != nil {
		return threadstore.Thread{}, false, schemaErr(ctx, "get thread", err)
	}
	return th, true, nil
}

// Turns implements [threadstore.Store.Turns] with one range scan of the
// primary key.
func (t *Threads) Turns(ctx context.Context, id string, from, to int) ([]threadstore.Turn, error) {
	from = max(from, 1)
	if from >= to {
		return nil, nil
	}
	rows, err := t.s.pool.Query(ctx, `SELECT idx, run, tokens, content, at FROM reactguard_thread_turns WHERE thread = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`,
		[]byte(id), from, to)
	if err != nil {
		return nil, schemaErr(ctx, "thread turns", err)
	}
	defer rows.Close()
	var out []threadstore.Turn
	for rows.Next() {
		var idx int32
		var tokens int64
		var run []byte
		var tr threadstore.Turn
		var at time.Time
		if err := rows.Scan(&idx, &run, &tokens, &tr.Content, &at); err != nil {
			return nil, schemaErr(ctx, "thread turns", err)
		}
		tr.Index, tr.Run, tr.Tokens, tr.At = int(idx), string(run), int(tokens), at.UTC()
		out = append(out, tr)
	}
	if err := rows.Err(); err != nil {
		return nil, schemaErr(ctx, "thread turns", err)
	}
	return out, nil
}

// deleteThreads deletes the threads whose ids the subquery ids selects
// ($1 and $2 are its parameters), their turns and their evidence, and
// returns how many threads it deleted. The evidence key of a thread is
// threadstore.KeyPrefix followed by its id.
const deleteThreads = `
WITH th AS (DELETE FROM reactguard_threads WHERE id IN (%s) RETURNING id),
k AS (SELECT id, '\xff'::bytea || convert_to('thread:', 'UTF8') || id AS key FROM th),
tu AS (DELETE FROM reactguard_thread_turns WHERE thread IN (SELECT id FROM th)),
er AS (DELETE FROM reactguard_evidence_runs WHERE run IN (SELECT key FROM k)),
r AS (DELETE FROM reactguard_records WHERE run IN (SELECT key FROM k)),
f AS (DELETE FROM reactguard_facts WHERE run IN (SELECT key FROM k)),
u AS (DELETE FROM reactguard_user_texts WHERE run IN (SELECT key FROM k))
SELECT count(*) FROM th`

// Delete implements [threadstore.Store.Delete] in one statement.
func (t *Threads) Delete(ctx context.Context, id string) error {
	t.s.touches.forget()
	defer t.s.touches.forget()
	var n int
	if err := t.s.pool.QueryRow(ctx, fmt.Sprintf(deleteThreads, `$1`), []byte(id)).Scan(&n); err != nil {
		return schemaErr(ctx, "delete thread", err)
	}
	return nil
}

// Evidence implements [threadstore.Store.Evidence]: the store's evidence
// ledger, under [threadstore.Key].
func (t *Threads) Evidence() evidence.Ledger { return threadstore.EvidenceIn(t.s.Evidence()) }
