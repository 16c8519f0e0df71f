package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// Claims is the [runstore.Claims] of a [Store]: Claim is one INSERT … ON
// CONFLICT DO NOTHING, so of any number of concurrent claims of one
// snapshot, in any number of processes, exactly one succeeds. A claim is
// kept until it is released or pruned by [Store.Prune].
type Claims struct{ s *Store }

var _ runstore.Claims = (*Claims)(nil)

// Claim implements [runstore.Claims.Claim]. A claim statement that fails
// may still have been applied (the error came after the commit); the loop
// then gave up the resume without using the claim, so the next Claim of
// the same snapshot in this process recognises the claim as its own and
// takes it, instead of calling it resumed.
func (c *Claims) Claim(ctx context.Context, run, id string) (bool, error) {
	k := [2]string{run, id}
	res, err := c.s.db.ExecContext(ctx, `INSERT INTO reactguard_claims (run, id, owner, at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		blob(run), blob(id), c.s.owner.id, c.s.ts())
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		c.s.setUnsure(k, true)
		return false, schemaErr(ctx, "claim", err)
	}
	if n == 1 {
		c.s.setUnsure(k, false)
		return true, nil
	}
	if !c.s.isUnsure(k) {
		return false, nil
	}
	var owner string
	err = c.s.db.QueryRowContext(ctx, `SELECT owner FROM reactguard_claims WHERE run = ? AND id = ?`, blob(run), blob(id)).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return c.Claim(ctx, run, id) // released meanwhile
	}
	if err != nil {
		return false, schemaErr(ctx, "claim", err)
	}
	c.s.setUnsure(k, false)
	return owner == c.s.owner.id, nil
}

// Release implements [runstore.Claims.Release].
func (c *Claims) Release(ctx context.Context, run, id string) error {
	if _, err := c.s.db.ExecContext(ctx, `DELETE FROM reactguard_claims WHERE run = ? AND id = ?`, blob(run), blob(id)); err != nil {
		return schemaErr(ctx, "release", err)
	}
	c.s.setUnsure([2]string{run, id}, false)
	return nil
}

func (s *Store) setUnsure(k [2]string, unsure bool) {
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	if unsure {
		s.unsure[k] = true
	} else {
		delete(s.unsure, k)
	}
}

func (s *Store) isUnsure(k [2]string) bool {
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	return s.unsure[k]
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
INSERT INTO reactguard_runs (id, node, kind, tool, args, reason, question, snapshot, stopped)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET node = excluded.node, kind = excluded.kind, tool = excluded.tool, args = excluded.args,
	reason = excluded.reason, question = excluded.question, snapshot = excluded.snapshot, stopped = excluded.stopped`,
		blob(run.ID), blob(run.Node), int(run.Kind), blob(run.Tool), nullBytes(run.Args), blob(run.Reason), blob(run.Question),
		run.Snapshot, run.Stopped.UnixMicro())
	if err != nil {
		return schemaErr(ctx, "save run", err)
	}
	return nil
}

const runColumns = `id, node, kind, tool, args, reason, question, stopped`

func scanRun(row scanner, withSnapshot bool) (runstore.Run, error) {
	var id, node, tool, reason, question []byte
	var kind, stopped int64
	var run runstore.Run
	dest := []any{&id, &node, &kind, &tool, &run.Args, &reason, &question, &stopped}
	if withSnapshot {
		dest = append(dest, &run.Snapshot)
	}
	if err := row.Scan(dest...); err != nil {
		return runstore.Run{}, err
	}
	run.ID, run.Node, run.Kind, run.Tool = string(id), string(node), runstore.Kind(kind), string(tool)
	run.Reason, run.Question, run.Stopped = string(reason), string(question), time.UnixMicro(stopped).UTC()
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
	var where []string
	var args []any
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
	if f.Cursor != "" {
		c, err := runstore.ParseCursor(f.Cursor)
		if err != nil {
			return runstore.Page{}, err
		}
		where, args = append(where, "(stopped, id) > (?, ?)"), append(args, c.Stopped.UnixMicro(), blob(c.ID))
	}
	q := `SELECT ` + runColumns + ` FROM reactguard_runs`
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
	defer rows.Close()
	var runs []runstore.Run
	for rows.Next() {
		run, err := scanRun(rows, false)
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
		last := runs[n-1]
		p.Next = runstore.Cursor{Stopped: last.Stopped, ID: last.ID}.String()
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
