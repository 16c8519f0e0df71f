package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// Claims is the [runstore.Claims] of a [Store]. A claim names its owner,
// the lock file of the claiming process's Store (as a running write does,
// see [WriteLedger]), and whether it is settled. Claim runs in one
// immediate transaction (SQLite's write lock, across processes): it takes
// a free id, or a taken one that was never settled and whose owner's lock
// is free — the process that claimed it died (or closed its store) before
// its resume stopped — so of any number of concurrent claims of one
// snapshot exactly one succeeds, and a live owner's claim is never taken.
// Release deletes only this store's own claim, and only while it is not
// settled; Settle is one upsert. A claim is kept until it is released or
// pruned by [Store.Prune].
type Claims struct{ s *Store }

var _ runstore.Claims = (*Claims)(nil)

// Claim implements [runstore.Claims.Claim]. A claim statement that fails
// may still have been applied (the error came after the commit); the loop
// then gave up the resume without using the claim, so the next Claim of
// the same snapshot in this process recognises the claim as its own and
// takes it, instead of calling it resumed.
func (c *Claims) Claim(ctx context.Context, run, id string) (bool, error) {
	c.s.settlePending(ctx)
	k := [2]string{run, id}
	unsure := c.s.isUnsure(k)
	var ok bool
	err := c.s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO reactguard_claims (run, id, owner, at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			blob(run), blob(id), c.s.owner.id, c.s.ts())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			ok = err == nil
			return err
		}
		var owner string
		var settled bool
		if err := tx.QueryRowContext(ctx, `SELECT owner, settled FROM reactguard_claims WHERE run = ? AND id = ?`,
			blob(run), blob(id)).Scan(&owner, &settled); err != nil {
			return err
		}
		switch {
		case settled:
		case owner == c.s.owner.id:
			ok = unsure // the remains of this store's claim whose statement failed
		case c.s.owner.dead(owner):
			_, err := tx.ExecContext(ctx, `UPDATE reactguard_claims SET owner = ?, at = ? WHERE run = ? AND id = ?`,
				c.s.owner.id, c.s.ts(), blob(run), blob(id))
			ok = err == nil
			return err
		}
		return nil
	})
	if err != nil {
		c.s.setUnsure(k, true)
		return false, schemaErr(ctx, "claim", err)
	}
	c.s.setUnsure(k, false)
	return ok, nil
}

// Release implements [runstore.Claims.Release]: it deletes the claim only
// when this store holds it and it is not settled.
func (c *Claims) Release(ctx context.Context, run, id string) error {
	if _, err := c.s.db.ExecContext(ctx, `DELETE FROM reactguard_claims WHERE run = ? AND id = ? AND owner = ? AND NOT settled`,
		blob(run), blob(id), c.s.owner.id); err != nil {
		return schemaErr(ctx, "release", err)
	}
	c.s.setUnsure([2]string{run, id}, false)
	return nil
}

// Settle implements [runstore.Claims.Settle] with one upsert. When the
// statement fails, the claim is kept in the process and settled before
// this store's next Claim or Settle, and by [Store.Close]; the error is
// returned all the same. If the process ends first, the claim stays taken
// and unsettled, and the next resume of its snapshot takes it over.
func (c *Claims) Settle(ctx context.Context, run, id string) error {
	c.s.settlePending(ctx)
	k := [2]string{run, id}
	if err := c.s.settle(ctx, k); err != nil {
		c.s.settles.Put(k, struct{}{})
		return err
	}
	return nil
}

func (s *Store) settle(ctx context.Context, k [2]string) error {
	_, err := s.db.ExecContext(ctx, `
INSERT INTO reactguard_claims (run, id, owner, at, settled) VALUES (?, ?, ?, ?, 1)
ON CONFLICT (run, id) DO UPDATE SET settled = 1`, blob(k[0]), blob(k[1]), s.owner.id, s.ts())
	if err != nil {
		return schemaErr(ctx, "settle", err)
	}
	return nil
}

// settlePending settles the claims whose Settle failed; those that fail
// again stay pending.
func (s *Store) settlePending(ctx context.Context) {
	s.settles.Retry(func(k [2]string, _ struct{}) error { return s.settle(ctx, k) })
}

func (s *Store) setUnsure(k [2]string, unsure bool) {
	if unsure {
		s.unsure.Put(k, struct{}{})
	} else {
		s.unsure.Delete(k)
	}
}

func (s *Store) isUnsure(k [2]string) bool {
	_, ok := s.unsure.Get(k)
	return ok
}

// Runs is the [runstore.Store] of a [Store]. Snapshots are stored as BLOBs,
// exactly as given. List pages by keyset on (stopped, id) over an index, so
// a page costs the same at any depth.
type Runs struct{ s *Store }

var _ runstore.Store = (*Runs)(nil)

// Save implements [runstore.Store.Save] with one upsert.
func (r *Runs) Save(ctx context.Context, run runstore.Run) error {
	if err := runstore.Check(run); err != nil {
		return err
	}
	_, err := r.s.db.ExecContext(ctx, `
INSERT INTO reactguard_runs (id, tenant, user_id, node, kind, snapshot, stopped)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant, user_id = excluded.user_id, node = excluded.node, kind = excluded.kind,
	snapshot = excluded.snapshot, stopped = excluded.stopped`,
		blob(run.ID), blob(run.Owner.Tenant), blob(run.Owner.User), blob(run.Node), int(run.Kind),
		run.Snapshot, run.Stopped.UnixMicro())
	if err != nil {
		return schemaErr(ctx, "save run", err)
	}
	return nil
}

const runColumns = `id, tenant, user_id, node, kind, stopped`

func scanRun(row scanner, withSnapshot bool) (runstore.Run, error) {
	var id, tenant, user, node []byte
	var kind, stopped int64
	var run runstore.Run
	dest := []any{&id, &tenant, &user, &node, &kind, &stopped}
	if withSnapshot {
		dest = append(dest, &run.Snapshot)
	}
	if err := row.Scan(dest...); err != nil {
		return runstore.Run{}, err
	}
	run.ID, run.Node, run.Kind = string(id), string(node), runstore.Kind(kind)
	run.Owner, run.Stopped = runstore.Owner{Tenant: string(tenant), User: string(user)}, time.UnixMicro(stopped).UTC()
	return run, nil
}

// Get implements [runstore.Store.Get].
func (r *Runs) Get(ctx context.Context, id string) (runstore.Run, bool, error) {
	run, err := scanRun(r.s.db.QueryRowContext(ctx, `SELECT `+runColumns+`, snapshot FROM reactguard_runs WHERE id = ?`, blob(id)), true)
	if errors.Is(err, sql.ErrNoRows) {
		return runstore.Run{}, false, nil
	}
	if err != nil {
		return runstore.Run{}, false, schemaErr(ctx, "get run", err)
	}
	return run, true, nil
}

// List implements [runstore.Store.List].
func (r *Runs) List(ctx context.Context, f runstore.Filter) (runstore.Page, error) {
	if err := f.Check(); err != nil {
		return runstore.Page{}, err
	}
	var where []string
	var args []any
	if o := f.Owner; o != nil {
		where, args = append(where, "tenant = ?"), append(args, blob(o.Tenant))
		if o.User != "" {
			where, args = append(where, "user_id = ?"), append(args, blob(o.User))
		}
	}
	if f.Kind != 0 {
		where, args = append(where, "kind = ?"), append(args, int(f.Kind))
	}
	if f.Node != "" {
		where, args = append(where, "node = ?"), append(args, blob(f.Node))
	}
	if !f.StoppedBefore.IsZero() {
		where, args = append(where, "stopped < ?"), append(args, f.StoppedBefore.UnixMicro())
	}
	if !f.StoppedAfter.IsZero() {
		where, args = append(where, "stopped >= ?"), append(args, f.StoppedAfter.UnixMicro())
	}
	if c, ok, _ := f.After(); ok { // checked above
		where, args = append(where, "(stopped, id) > (?, ?)"), append(args, c.Stopped.UnixMicro(), blob(c.ID))
	}
	cols := runColumns
	if f.Snapshots {
		cols += ", snapshot"
	}
	q := `SELECT ` + cols + ` FROM reactguard_runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	n := f.PageSize()
	q += ` ORDER BY stopped, id LIMIT ?`
	args = append(args, n+1)
	rows, err := r.s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return runstore.Page{}, schemaErr(ctx, "list runs", err)
	}
	defer func() { _ = rows.Close() }()
	var runs []runstore.Run
	for rows.Next() {
		run, err := scanRun(rows, f.Snapshots)
		if err != nil {
			return runstore.Page{}, schemaErr(ctx, "list runs", err)
		}
		runs = append(runs, run)
	}
	if err := rows.Err(); err != nil {
		return runstore.Page{}, schemaErr(ctx, "list runs", err)
	}
	var p runstore.Page
	if len(runs) > n {
		runs = runs[:n]
		p.Next = f.Next(runs[n-1])
	}
	p.Runs = runs
	return p, nil
}

// Delete implements [runstore.Store.Delete].
func (r *Runs) Delete(ctx context.Context, id string) error {
	if _, err := r.s.db.ExecContext(ctx, `DELETE FROM reactguard_runs WHERE id = ?`, blob(id)); err != nil {
		return schemaErr(ctx, "delete run", err)
	}
	return nil
}

// Expire implements [runstore.Store.Expire].
func (r *Runs) Expire(ctx context.Context, before time.Time) (int, error) {
	res, err := r.s.db.ExecContext(ctx, `DELETE FROM reactguard_runs WHERE stopped < ?`, before.UnixMicro())
	if err != nil {
		return 0, schemaErr(ctx, "expire runs", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, schemaErr(ctx, "expire runs", err)
	}
	return int(n), nil
}
