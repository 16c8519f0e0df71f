package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/runstore"
)

// Claims is the [runstore.Claims] of a [Store]. A claim names its owner,
// the advisory lock of the claiming process's owner session (as a running
// write does, see [WriteLedger]), and whether it is settled. Claim is one
// INSERT … ON CONFLICT DO UPDATE … WHERE: it takes a free id, or a taken
// one that was never settled and whose owner's lock is free — the process
// that claimed it died (or closed its store) before its resume stopped —
// so of any number of concurrent claims of one snapshot, in any number of
// processes, exactly one succeeds, and a live owner's claim is never
// taken. Release deletes only this store's own claim, and only while it is
// not settled; Settle is one upsert. A claim is kept until it is released
// or pruned by [Store.Prune].
//
// While the store's owner session is lost, Claim claims nothing and
// returns an error wrapping [ErrSessionLost]: a claim whose owner's lock
// is free would be taken over at once. The session caveat of the package
// documentation applies to claims as to writes: a session the server ends
// while the process lives lets another process take over the claims of
// resumes still running here (the write ledger still runs each write at
// most once).
type Claims struct{ s *Store }

var _ runstore.Claims = (*Claims)(nil)

// claimSnapshot takes a free claim, or a taken, unsettled one whose owner's
// lock is free (its process ended). The owner's lock is tried only for
// another owner's claim, and only for the length of the statement.
const claimSnapshot = `
INSERT INTO reactguard_claims (run, id, owner, at) VALUES ($1, $2, $3, $4)
ON CONFLICT (run, id) DO UPDATE SET owner = EXCLUDED.owner, at = EXCLUDED.at
	WHERE NOT reactguard_claims.settled AND reactguard_claims.owner <> EXCLUDED.owner
		AND pg_try_advisory_xact_lock(reactguard_claims.owner)
RETURNING true`

// Claim implements [runstore.Claims.Claim]. A claim statement that fails
// may still have been applied by the server (the connection dropped after
// it was sent); the loop then gave up the resume without using the claim,
// so the next Claim of the same snapshot in this process recognises the
// claim as its own and takes it, instead of calling it resumed.
func (c *Claims) Claim(ctx context.Context, run, id string) (bool, error) {
	if err := c.s.sessionErr(ctx); err != nil {
		return false, err
	}
	c.s.settlePending(ctx)
	k := [2]string{run, id}
	var ok bool
	err := c.s.pool.QueryRow(ctx, claimSnapshot, []byte(run), []byte(id), c.s.owner, c.s.ts()).Scan(&ok)
	if err == nil {
		c.s.setUnsure(k, false)
		return true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		c.s.setUnsure(k, true)
		return false, schemaErr(ctx, "claim", err)
	}
	if !c.s.isUnsure(k) {
		return false, nil
	}
	var owner int64
	var settled bool
	err = c.s.pool.QueryRow(ctx, `SELECT owner, settled FROM reactguard_claims WHERE run = $1 AND id = $2`, []byte(run), []byte(id)).Scan(&owner, &settled)
	if errors.Is(err, pgx.ErrNoRows) {
		return c.Claim(ctx, run, id) // released meanwhile
	}
	if err != nil {
		return false, schemaErr(ctx, "claim", err)
	}
	c.s.setUnsure(k, false)
	return owner == c.s.owner && !settled, nil
}

// Release implements [runstore.Claims.Release]: it deletes the claim only
// when this store holds it and it is not settled.
func (c *Claims) Release(ctx context.Context, run, id string) error {
	if _, err := c.s.pool.Exec(ctx, `DELETE FROM reactguard_claims WHERE run = $1 AND id = $2 AND owner = $3 AND NOT settled`,
		[]byte(run), []byte(id), c.s.owner); err != nil {
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
	_, err := s.pool.Exec(ctx, `
INSERT INTO reactguard_claims (run, id, owner, at, settled) VALUES ($1, $2, $3, $4, true)
ON CONFLICT (run, id) DO UPDATE SET settled = true`, []byte(k[0]), []byte(k[1]), s.owner, s.ts())
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

// Runs is the [runstore.Store] of a [Store]. Snapshots are stored as bytes
// (bytea), exactly as given: never as jsonb, which refuses the \u0000 a
// model may put in a string and reorders keys. List pages by keyset on
// (stopped, id) over an index, so a page costs the same at any depth.
type Runs struct{ s *Store }

var _ runstore.Store = (*Runs)(nil)

// Save implements [runstore.Store.Save] with one upsert.
func (r *Runs) Save(ctx context.Context, run runstore.Run) error {
	if err := runstore.Check(run); err != nil {
		return err
	}
	_, err := r.s.pool.Exec(ctx, `
INSERT INTO reactguard_runs (id, tenant, user_id, node, kind, snapshot, stopped)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (id) DO UPDATE SET tenant = EXCLUDED.tenant, user_id = EXCLUDED.user_id, node = EXCLUDED.node, kind = EXCLUDED.kind,
	snapshot = EXCLUDED.snapshot, stopped = EXCLUDED.stopped`,
		[]byte(run.ID), []byte(run.Owner.Tenant), []byte(run.Owner.User), []byte(run.Node), int16(run.Kind),
		run.Snapshot, micro(run.Stopped))
	if err != nil {
		return schemaErr(ctx, "save run", err)
	}
	return nil
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

// Delete implements [runstore.Store.Delete].
func (r *Runs) Delete(ctx context.Context, id string) error {
	if _, err := r.s.pool.Exec(ctx, `DELETE FROM reactguard_runs WHERE id = $1`, []byte(id)); err != nil {
		return schemaErr(ctx, "delete run", err)
	}
	return nil
}

// Expire implements [runstore.Store.Expire].
func (r *Runs) Expire(ctx context.Context, before time.Time) (int, error) {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM reactguard_runs WHERE stopped < $1`, micro(before))
	if err != nil {
		return 0, schemaErr(ctx, "expire runs", err)
	}
	return int(tag.RowsAffected()), nil
}
