package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/runstore"
)

// Runs is the [runstore.Store] of a [Store]. Snapshots are stored as bytes
// (bytea), exactly as given: never as jsonb, which refuses the \u0000 a
// model may put in a string and reorders keys. List pages by keyset on
// (stopped, id) over an index, so a page costs the same at any depth.
type Runs struct{ s *Store }

var _ runstore.Store = (*Runs)(nil)

// Save implements [runstore.Store.Save] with one upsert. When this Store
// holds the resume claim of the run (a resume of it is stopping), the same
// statement settles the claim, and saves only while the claim is still
// this Store's: once another process took it over, nothing is saved and
// the error wraps runstore.ErrLeaseLost (see [Claims]).
func (r *Runs) Save(ctx context.Context, run runstore.Run) error {
	if err := runstore.Check(run); err != nil {
		return err
	}
	return r.s.settling(ctx, run.ID, "save run", `
INSERT INTO reactguard_runs (id, tenant, user_id, node, kind, snapshot, stopped)
SELECT $1, $2, $3, $4, $5, $6, $7 WHERE %s
ON CONFLICT (id) DO UPDATE SET tenant = EXCLUDED.tenant, user_id = EXCLUDED.user_id, node = EXCLUDED.node, kind = EXCLUDED.kind,
	snapshot = EXCLUDED.snapshot, stopped = EXCLUDED.stopped`,
		[]byte(run.ID), []byte(run.Owner.Tenant), []byte(run.Owner.User), []byte(run.Node), int16(run.Kind),
		run.Snapshot, micro(run.Stopped))
}

func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// scanRun reads the listing columns, and the snapshot when withSnapshot.
func scanRun(row pgx.Row, withSnapshot bool) (runstore.Run, error) {
	var id, tenant, user, node []byte
	var kind int16
	var run runstore.Run
	dest := []any{&id, &tenant, &user, &node, &kind, &run.Stopped}
	if withSnapshot {
		dest = append(dest, &run.Snapshot)
	}
	if err := row.Scan(dest...); err != nil {
		return runstore.Run{}, err
	}
	run.ID, run.Node, run.Kind = string(id), string(node), runstore.Kind(kind)
	run.Owner, run.Stopped = runstore.Owner{Tenant: string(tenant), User: string(user)}, run.Stopped.UTC()
	return run, nil
}

const runColumns = `id, tenant, user_id, node, kind, stopped`

// Get implements [runstore.Store.Get].
func (r *Runs) Get(ctx context.Context, id string) (runstore.Run, bool, error) {
	if err := r.s.flushRun(ctx, id); err != nil {
		return runstore.Run{}, false, err
	}
	run, err := scanRun(r.s.pool.QueryRow(ctx, `SELECT `+runColumns+`, snapshot FROM reactguard_runs WHERE id = $1`, []byte(id)), true)
	if errors.Is(err, pgx.ErrNoRows) {
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
	if err := r.s.flushRuns(ctx); err != nil {
		return runstore.Page{}, err
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if o := f.Owner; o != nil {
		where = append(where, "tenant = "+arg([]byte(o.Tenant)))
		if o.User != "" {
			where = append(where, "user_id = "+arg([]byte(o.User)))
		}
	}
	if f.Kind != 0 {
		where = append(where, "kind = "+arg(int16(f.Kind)))
	}
	if f.Node != "" {
		where = append(where, "node = "+arg([]byte(f.Node)))
	}
	if !f.StoppedBefore.IsZero() {
		where = append(where, "stopped < "+arg(micro(f.StoppedBefore)))
	}
	if !f.StoppedAfter.IsZero() {
		where = append(where, "stopped >= "+arg(micro(f.StoppedAfter)))
	}
	if c, ok, _ := f.After(); ok { // checked above
		where = append(where, "(stopped, id) > ("+arg(micro(c.Stopped))+", "+arg([]byte(c.ID))+")")
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
	q += ` ORDER BY stopped, id LIMIT ` + arg(n+1)
	rows, err := r.s.pool.Query(ctx, q, args...)
	if err != nil {
		return runstore.Page{}, schemaErr(ctx, "list runs", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (runstore.Run, error) { return scanRun(row, f.Snapshots) })
	if err != nil {
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
// resume claim this Store holds on the run in the same statement, and
// deletes only while the claim is still its own.
func (r *Runs) Delete(ctx context.Context, id string) error {
	return r.s.settling(ctx, id, "delete run", `DELETE FROM reactguard_runs WHERE id = $1 AND %s`, []byte(id))
}

// Expire implements [runstore.Store.Expire].
func (r *Runs) Expire(ctx context.Context, before time.Time) (int, error) {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM reactguard_runs WHERE stopped < $1`, micro(before))
	if err != nil {
		return 0, schemaErr(ctx, "expire runs", err)
	}
	return int(tag.RowsAffected()), nil
}

// settling runs q (with args, its run's id first) for run; when this Store
// holds a resume claim on the run, q runs only while that claim is still
// its own, and settles it in the same statement. q holds one %s, replaced
// by the condition. When that statement fails (the connection was lost),
// it is kept in the process and run again before anything else reads,
// claims or settles the run here (and by Close): a run that finished is
// not left listed with its last stop, a run that stopped again not with
// the stop before.
func (s *Store) settling(ctx context.Context, run, op, q string, args ...any) error {
	s.gated.del(run)
	s.runOps.Delete(run) // superseded by this one
	h := s.held.get(run)
	if h == nil || h.settled {
		if _, err := s.pool.Exec(ctx, fmt.Sprintf(q, "TRUE"), args...); err != nil {
			return schemaErr(ctx, op, err)
		}
		return nil
	}
	p := pendingRun{op: op, q: q, args: cloneArgs(args), id: h.id, token: h.token}
	err := s.runSettling(ctx, run, p)
	if err != nil && !errors.Is(err, runstore.ErrLeaseLost) {
		s.runOps.Put(run, p)
	}
	return err
}

// pendingRun is the save or delete of a run that settles this Store's
// resume claim of it.
type pendingRun struct {
	op, q string
	args  []any
	id    string
	token int64
}

// runSettling runs p for run.
func (s *Store) runSettling(ctx context.Context, run string, p pendingRun) error {
	n := len(p.args)
	stmt := fmt.Sprintf(`WITH settled AS (
	UPDATE reactguard_claims SET settled = true WHERE run = $%d AND id = $%d AND token = $%d RETURNING 1
), done AS (`+p.q+` RETURNING 1)
SELECT EXISTS (SELECT 1 FROM settled)`, n+1, n+2, n+3, "EXISTS (SELECT 1 FROM settled)")
	var ok bool
	if err := s.pool.QueryRow(ctx, stmt, append(p.args, []byte(run), []byte(p.id), p.token)...).Scan(&ok); err != nil {
		return schemaErr(ctx, p.op, err)
	}
	if !ok {
		return fmt.Errorf("postgres: %s %s: %w: the resume claim of snapshot %s was taken over by another process", p.op, run, runstore.ErrLeaseLost, p.id)
	}
	s.held.markSettled(run, p.token)
	return nil
}

// flushRun runs the pending save or delete of run, if any; one whose claim
// was taken over meanwhile is dropped.
func (s *Store) flushRun(ctx context.Context, run string) error {
	p, ok := s.runOps.Get(run)
	if !ok {
		return nil
	}
	err := s.runSettling(ctx, run, p)
	if err != nil && !errors.Is(err, runstore.ErrLeaseLost) {
		return fmt.Errorf("postgres: the earlier %s of %s: %w", p.op, run, err)
	}
	s.runOps.DeleteIf(run, func(cur pendingRun) bool { return cur.token == p.token && cur.op == p.op })
	return nil
}

// flushRuns runs every pending save or delete; those that fail again stay.
func (s *Store) flushRuns(ctx context.Context) error {
	var errs []error
	s.runOps.Retry(func(run string, p pendingRun) error {
		err := s.runSettling(ctx, run, p)
		if err != nil && !errors.Is(err, runstore.ErrLeaseLost) {
			errs = append(errs, err)
			return err
		}
		return nil
	})
	return errors.Join(errs...)
}

// cloneArgs copies the arguments of a statement that is kept for later.
func cloneArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if b, ok := a.([]byte); ok {
			a = bytes.Clone(b)
		}
		out[i] = a
	}
	return out
}
