package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/runstore"
)

// Claims is the [runstore.Claims] of a [Store]. A claim names its owner,
// the lock file of the claiming process's Store (as a running write does,
// see [WriteLedger]), carries a fencing token from the same counter as the
// writes' and says whether it is settled. Claim runs in one immediate
// transaction (SQLite's write lock, across processes): it takes a free id,
// or a taken one that was never settled and whose owner's lock is free —
// the process that claimed it died (or closed its store) before its resume
// stopped — so of any number of concurrent claims of one snapshot exactly
// one succeeds, and a live owner's claim is never taken.
//
// It is a [runstore.LeasedClaims]: the loop runs a resume under
// [Claims.Hold], which ends if this Store's lock file is removed or
// replaced while the process lives (to others it then reads as dead).
// Records are fenced by the claim's token: Settle, and the save or delete
// of the claimed run by the same Store's [Runs] (which settles the claim in
// the same transaction), succeed only while the claim is still this
// Store's. Release deletes only this Store's own claim, and only while it
// is not settled. A claim is kept until it is released or pruned by
// [Store.Prune].
type Claims struct{ s *Store }

var _ runstore.LeasedClaims = (*Claims)(nil)

// Claim implements [runstore.Claims.Claim]. A claim statement that fails
// may still have been applied (the error came after the commit); the loop
// then gave up the resume without using the claim, so the next Claim of
// the same snapshot in this process recognises the claim as its own and
// takes it, instead of calling it resumed.
func (c *Claims) Claim(ctx context.Context, run, id string) (bool, error) {
	o, err := c.s.owner()
	if err != nil {
		return false, err
	}
	c.s.settlePending(ctx)
	k := [2]string{run, id}
	unsure := c.s.isUnsure(k)
	var token int64
	err = c.s.tx(ctx, func(tx *sql.Tx) error {
		var owner string
		var settled bool
		err := tx.QueryRowContext(ctx, `SELECT owner, settled, token FROM reactguard_claims WHERE run = ? AND id = ?`,
			blob(run), blob(id)).Scan(&owner, &settled, &token)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case settled:
			token = 0
			return nil
		case owner == o.id:
			if !unsure { // the remains of this store's claim whose statement failed are its own
				token = 0
			}
			return nil
		case !c.s.current().dead(owner):
			token = 0
			return nil
		}
		if token, err = nextToken(ctx, tx); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO reactguard_claims (run, id, owner, token, at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (run, id) DO UPDATE SET owner = excluded.owner, token = excluded.token, at = excluded.at`,
			blob(run), blob(id), o.id, token, c.s.ts())
		return err
	})
	if err != nil {
		c.s.setUnsure(k, true)
		return false, schemaErr(ctx, "claim", err)
	}
	c.s.setUnsure(k, false)
	if token == 0 {
		return false, nil
	}
	c.s.held.Put(run, heldClaim{id: id, token: token, own: o})
	return true, nil
}

// Hold implements [runstore.LeasedClaims.Hold].
func (c *Claims) Hold(ctx context.Context, run, id string) (context.Context, context.CancelFunc) {
	if h, ok := c.s.held.Get(run); ok && h.id == id {
		return hold(ctx, h.own)
	}
	return hold(ctx, nil)
}

// Release implements [runstore.Claims.Release]: it deletes the claim only
// when this Store holds it and it is not settled.
func (c *Claims) Release(ctx context.Context, run, id string) error {
	c.s.setUnsure([2]string{run, id}, false)
	h, ok := c.s.held.Get(run)
	if !ok || h.id != id {
		return nil
	}
	c.s.held.Delete(run)
	if _, err := c.s.db.ExecContext(ctx, `DELETE FROM reactguard_claims WHERE run = ? AND id = ? AND token = ? AND NOT settled`,
		blob(run), blob(id), h.token); err != nil {
		return schemaErr(ctx, "release", err)
	}
	return nil
}

// Settle implements [runstore.Claims.Settle] with one upsert, or nothing
// when the same Store's Runs settled the claim with the run's save or
// delete. A claim of this Store is settled only while it is still its own;
// once another process took it over, Settle changes nothing and returns an
// error wrapping runstore.ErrLeaseLost. When the statement fails, the
// claim is kept in the process and settled before this Store's next Claim
// or Settle, and by [Store.Close]; the error is returned all the same. If
// the process ends first, the claim stays taken and unsettled, and the
// next resume of its snapshot takes it over.
func (c *Claims) Settle(ctx context.Context, run, id string) error {
	c.s.settlePending(ctx)
	k := [2]string{run, id}
	var token int64
	if h, ok := c.s.held.Get(run); ok && h.id == id {
		c.s.held.Delete(run)
		if h.settled {
			return nil
		}
		token = h.token
	}
	err := c.s.settle(ctx, k, token)
	if err != nil && !errors.Is(err, runstore.ErrLeaseLost) {
		c.s.settles.Put(k, token)
	}
	return err
}

// settle settles claim k: the claim of token when it is not 0 (fenced),
// else whatever the claim holds (an upsert).
func (s *Store) settle(ctx context.Context, k [2]string, token int64) error {
	if token != 0 {
		res, err := s.db.ExecContext(ctx, `UPDATE reactguard_claims SET settled = 1 WHERE run = ? AND id = ? AND token = ?`, blob(k[0]), blob(k[1]), token)
		if err != nil {
			return schemaErr(ctx, "settle", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return schemaErr(ctx, "settle", err)
		} else if n == 0 {
			return fmt.Errorf("sqlite: settle snapshot %s of run %s: %w: its claim was taken over by another process", k[1], k[0], runstore.ErrLeaseLost)
		}
		return nil
	}
	_, err := s.db.ExecContext(ctx, `
INSERT INTO reactguard_claims (run, id, owner, at, settled) VALUES (?, ?, ?, ?, 1)
ON CONFLICT (run, id) DO UPDATE SET settled = 1`, blob(k[0]), blob(k[1]), s.current().id, s.ts())
	if err != nil {
		return schemaErr(ctx, "settle", err)
	}
	return nil
}

// settlePending settles the claims whose Settle failed; those that fail
// again stay pending, those taken over meanwhile are dropped.
func (s *Store) settlePending(ctx context.Context) {
	s.settles.Retry(func(k [2]string, token int64) error {
		err := s.settle(ctx, k, token)
		if errors.Is(err, runstore.ErrLeaseLost) {
			return nil
		}
		return err
	})
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
