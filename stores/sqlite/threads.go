package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
)

// Threads is the [threadstore.Store] of a [Store]: the tables
// reactguard_threads and reactguard_thread_turns, and the store's evidence
// tables for the threads' evidence (under [threadstore.Key]). Acquire,
// Park, Commit and Release each run in one immediate transaction, under
// SQLite's write lock across processes, so of any number of concurrent
// Acquires of one free thread exactly one succeeds, and a turn is appended
// and the thread freed in one step. A lease names its holder as a running
// write does (see [WriteLedger]): the lock file of the holding process's
// Store. A lease whose holder's lock is free — its process died, or closed
// its store, while it drove the thread's run — is given to the same run's
// resume (Acquire by that run), or dropped by Release without a token;
// another run is never given it, since the dead driver's run may still be
// resumed. A live holder's lease is never taken.
type Threads struct{ s *Store }

var _ threadstore.Store = (*Threads)(nil)

// Threads returns the store's [threadstore.Store].
func (s *Store) Threads() *Threads { return &Threads{s: s} }

type threadRow struct {
	th            threadstore.Thread
	holder, token string
}

const threadColumns = `id, tenant, user_id, turns, run, holder, token, summary, summarized, created, updated`

func scanThread(row scanner) (threadRow, error) {
	var id, tenant, user, run, summary []byte
	var created, updated int64
	var r threadRow
	if err := row.Scan(&id, &tenant, &user, &r.th.Turns, &run, &r.holder, &r.token, &summary, &r.th.Summarized, &created, &updated); err != nil {
		return threadRow{}, err
	}
	r.th.ID, r.th.Owner, r.th.Run = string(id), runstore.Owner{Tenant: string(tenant), User: string(user)}, string(run)
	r.th.Held, r.th.Summary = r.holder != "", summary
	r.th.Created, r.th.Updated = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return r, nil
}

func getThread(ctx context.Context, q queryer, id string) (threadRow, bool, error) {
	r, err := scanThread(q.QueryRowContext(ctx, `SELECT `+threadColumns+` FROM reactguard_threads WHERE id = ?`, blob(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return threadRow{}, false, nil
	}
	return r, err == nil, err
}

// Acquire implements [threadstore.Store.Acquire].
func (t *Threads) Acquire(ctx context.Context, id string, owner runstore.Owner, run string) (threadstore.Thread, string, error) {
	if err := threadstore.CheckAcquire(id, owner, run); err != nil {
		return threadstore.Thread{}, "", err
	}
	o, err := t.s.owner()
	if err != nil {
		return threadstore.Thread{}, "", err
	}
	var out threadstore.Thread
	var token string
	var refused error
	err = t.s.tx(ctx, func(tx *sql.Tx) error {
		now := t.s.ts()
		if _, err := tx.ExecContext(ctx, `INSERT INTO reactguard_threads (id, tenant, user_id, created, updated) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			blob(id), blob(owner.Tenant), blob(owner.User), now, now); err != nil {
			return err
		}
		r, _, err := getThread(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case r.th.Owner != owner:
			refused = fmt.Errorf("%w: thread %q", threadstore.ErrNotOwner, id)
			return nil
		case r.th.Run == "":
		case r.th.Run == run && (r.holder == "" || o.dead(r.holder)):
		default:
			out, refused = r.th, fmt.Errorf("%w: thread %q is held by run %q", threadstore.ErrBusy, id, r.th.Run)
			out.Summary = nil
			return nil
		}
		token = threadstore.NewToken()
		if _, err := tx.ExecContext(ctx, `UPDATE reactguard_threads SET run = ?, holder = ?, token = ?, updated = ? WHERE id = ?`,
			blob(run), o.id, token, now, blob(id)); err != nil {
			return err
		}
		r.th.Run, r.th.Held, r.th.Updated = run, true, time.UnixMicro(now).UTC()
		out = r.th
		return nil
	})
	if err != nil {
		return threadstore.Thread{}, "", schemaErr(ctx, "acquire thread", err)
	}
	if refused != nil {
		if !errors.Is(refused, threadstore.ErrBusy) {
			out = threadstore.Thread{}
		}
		return out, "", refused
	}
	return out, token, nil
}

// leased runs f in a transaction when token holds thread id.
func (t *Threads) leased(ctx context.Context, op, id, token string, f func(tx *sql.Tx, r threadRow) error) error {
	lost := false
	err := t.s.tx(ctx, func(tx *sql.Tx) error {
		r, ok, err := getThread(ctx, tx, id)
		if err != nil {
			return err
		}
		if !ok || token == "" || r.token != token {
			lost = true
			return nil
		}
		return f(tx, r)
	})
	if err != nil {
		var te *turnError
		if errors.As(err, &te) {
			return te.err
		}
		return schemaErr(ctx, op, err)
	}
	if lost {
		return fmt.Errorf("%w: thread %q", threadstore.ErrLeaseLost, id)
	}
	return nil
}

// turnError carries a refusal of Commit out of its transaction.
type turnError struct{ err error }

func (e *turnError) Error() string { return e.err.Error() }

// Park implements [threadstore.Store.Park].
func (t *Threads) Park(ctx context.Context, id, token string) error {
	return t.leased(ctx, "park thread", id, token, func(tx *sql.Tx, _ threadRow) error {
		_, err := tx.ExecContext(ctx, `UPDATE reactguard_threads SET holder = '', token = '', updated = ? WHERE id = ?`, t.s.ts(), blob(id))
		return err
	})
}

// Commit implements [threadstore.Store.Commit].
func (t *Threads) Commit(ctx context.Context, id, token string, turn threadstore.Turn, sum *threadstore.Summary) error {
	if err := threadstore.CheckTurn(turn, sum); err != nil {
		return err
	}
	return t.leased(ctx, "commit turn", id, token, func(tx *sql.Tx, r threadRow) error {
		if turn.Index != r.th.Turns+1 {
			return &turnError{fmt.Errorf("%w: turn %d of thread %q, which holds %d", threadstore.ErrTurn, turn.Index, id, r.th.Turns)}
		}
		now := t.s.ts()
		if _, err := tx.ExecContext(ctx, `INSERT INTO reactguard_thread_turns (thread, idx, run, tokens, content, at) VALUES (?, ?, ?, ?, ?, ?)`,
			blob(id), turn.Index, blob(turn.Run), turn.Tokens, turn.Content, now); err != nil {
			return err
		}
		q, args := `UPDATE reactguard_threads SET turns = ?, run = x'', holder = '', token = '', updated = ?`, []any{turn.Index, now}
		if sum != nil {
			q, args = q+`, summary = ?, summarized = ?`, append(args, nullBytes(sum.Content), sum.Through)
		}
		_, err := tx.ExecContext(ctx, q+` WHERE id = ?`, append(args, blob(id))...)
		return err
	})
}

// Release implements [threadstore.Store.Release].
func (t *Threads) Release(ctx context.Context, id, run, token string) error {
	if token != "" {
		return t.leased(ctx, "release thread", id, token, func(tx *sql.Tx, _ threadRow) error {
			return t.free(ctx, tx, id)
		})
	}
	o, err := t.s.owner()
	if err != nil {
		return err
	}
	var busy error
	err = t.s.tx(ctx, func(tx *sql.Tx) error {
		r, ok, err := getThread(ctx, tx, id)
		switch {
		case err != nil:
			return err
		case !ok || r.th.Run != run:
			return nil
		case r.holder != "" && !o.dead(r.holder):
			busy = fmt.Errorf("%w: thread %q is held by run %q, running", threadstore.ErrBusy, id, run)
			return nil
		}
		return t.free(ctx, tx, id)
	})
	if err != nil {
		return schemaErr(ctx, "release thread", err)
	}
	return busy
}

func (t *Threads) free(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `UPDATE reactguard_threads SET run = x'', holder = '', token = '', updated = ? WHERE id = ?`, t.s.ts(), blob(id))
	return err
}

// Get implements [threadstore.Store.Get].
func (t *Threads) Get(ctx context.Context, id string) (threadstore.Thread, bool, error) {
	r, ok, err := getThread(ctx, t.s.db, id)
	if err != nil {
		return threadstore.Thread{}, false, schemaErr(ctx, "get thread", err)
	}
	return r.th, ok, nil
}

// Turns implements [threadstore.Store.Turns] with one range scan of the
// primary key.
func (t *Threads) Turns(ctx context.Context, id string, from, to int) ([]threadstore.Turn, error) {
	from = max(from, 1)
	if from >= to {
		return nil, nil
	}
	rows, err := t.s.db.QueryContext(ctx, `SELECT idx, run, tokens, content, at FROM reactguard_thread_turns WHERE thread = ? AND idx >= ? AND idx < ? ORDER BY idx`,
		blob(id), from, to)
	if err != nil {
		return nil, schemaErr(ctx, "thread turns", err)
	}
	defer func() { _ = rows.Close() }()
	var out []threadstore.Turn
	for rows.Next() {
		var tr threadstore.Turn
		var run []byte
		var at int64
		if err := rows.Scan(&tr.Index, &run, &tr.Tokens, &tr.Content, &at); err != nil {
			return nil, schemaErr(ctx, "thread turns", err)
		}
		tr.Run, tr.At = string(run), time.UnixMicro(at).UTC()
		out = append(out, tr)
	}
	if err := rows.Err(); err != nil {
		return nil, schemaErr(ctx, "thread turns", err)
	}
	return out, nil
}

// Delete implements [threadstore.Store.Delete]: the thread, its turns and
// its evidence, in one transaction.
func (t *Threads) Delete(ctx context.Context, id string) error {
	err := t.s.tx(ctx, func(tx *sql.Tx) error { return deleteThreads(ctx, tx, [][]byte{blob(id)}) })
	if err != nil {
		return schemaErr(ctx, "delete thread", err)
	}
	return nil
}

// deleteThreads deletes the threads ids, their turns and their evidence.
func deleteThreads(ctx context.Context, tx *sql.Tx, ids [][]byte) error {
	for _, id := range ids {
		key := blob(threadstore.Key(string(id)))
		for _, q := range []struct {
			sql string
			arg []byte
		}{
			{`DELETE FROM reactguard_threads WHERE id = ?`, id},
			{`DELETE FROM reactguard_thread_turns WHERE thread = ?`, id},
			{`DELETE FROM reactguard_evidence_runs WHERE run = ?`, key},
			{`DELETE FROM reactguard_records WHERE run = ?`, key},
			{`DELETE FROM reactguard_facts WHERE run = ?`, key},
			{`DELETE FROM reactguard_print_calls WHERE run = ?`, key},
			{`DELETE FROM reactguard_prints WHERE run = ?`, key},
			{`DELETE FROM reactguard_user_texts WHERE run = ?`, key},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, q.arg); err != nil {
				return err
			}
		}
	}
	return nil
}

// Evidence implements [threadstore.Store.Evidence]: the store's evidence
// ledger, under [threadstore.Key].
func (t *Threads) Evidence() evidence.Ledger { return threadstore.EvidenceIn(t.s.Evidence()) }
