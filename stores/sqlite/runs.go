package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// Runs is the [runstore.Store] of a [Store]. Snapshots are stored as BLOBs,
// exactly as given. List pages by keyset on (stopped, id) over an index, so
// a page costs the same at any depth.
type Runs struct{ s *Store }

var _ runstore.Store = (*Runs)(nil)

// Save implements [runstore.Store.Save] with one upsert. When this Store
// holds the resume claim of the run (a resume of it is stopping), the same
// transaction settles the claim, and saves only while the claim is still
// this Store's (see [Claims]).
func (r *Runs) Save(ctx context.Context, run runstore.Run) error {
	if err := runstore.Check(run); err != nil {
		return err
	}
	err := r.s.settling(ctx, run.ID, "save run", `
INSERT INTO reactguard_runs (id, tenant, user_id, node, kind, snapshot, stopped)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET tenant = excluded.tenant, user_id = excluded.user_id, node = excluded.node, kind = excluded.kind,
	snapshot = excluded.snapshot, stopped = excluded.stopped`,
		blob(run.ID), blob(run.Owner.Tenant), blob(run.Owner.User), blob(run.Node), int(run.Kind),
		run.Snapshot, run.Stopped.UnixMicro())
	return err
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

// Delete implements [runstore.Store.Delete]; like Save, it settles the
// resume claim this Store holds on the run in the same transaction, and
// deletes only while the claim is still its own.
func (r *Runs) Delete(ctx context.Context, id string) error {
	return r.s.settling(ctx, id, "delete run", `DELETE FROM reactguard_runs WHERE id = ?`, blob(id))
}

// settling runs q with args for run; when this Store holds a resume claim
// on the run, q runs in one transaction with the claim's settlement, and
// only while the claim is still its own (its token).
func (s *Store) settling(ctx context.Context, run, op, q string, args ...any) error {
	h, ok := s.held.Get(run)
	if !ok || h.settled {
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			return schemaErr(ctx, op, err)
		}
		return nil
	}
	taken := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE reactguard_claims SET settled = 1 WHERE run = ? AND id = ? AND token = ?`, blob(run), blob(h.id), h.token)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			taken = err == nil
			return err
		}
		_, err = tx.ExecContext(ctx, q, args...)
		return err
	})
	if err != nil {
		return schemaErr(ctx, op, err)
	}
	if taken {
		return fmt.Errorf("sqlite: %s %s: %w: the resume claim of snapshot %s was taken over by another process", op, run, runstore.ErrLeaseLost, h.id)
	}
	h.settled = true
	s.held.Put(run, h)
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
