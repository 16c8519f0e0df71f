package postgres

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reactguard/reactguard/runstore"
)

// DefaultLease is the lease of a [Store]'s claims by default (see
// [Options].Lease).
const DefaultLease = 15 * time.Second

// minLease is the shortest lease a Store accepts.
const minLease = 300 * time.Millisecond

// retryRenew is how soon a failed renewal, or a failed start of a lease, is
// tried again.
const retryRenew = 100 * time.Millisecond

// epoch is one lease of the Store: the owner id its claims name while it
// holds, and the context of the work done under it, cancelled (cause
// wrapping runstore.ErrLeaseLost) when the lease is lost.
type epoch struct {
	owner int64
	ctx   context.Context
	lose  context.CancelCauseFunc
	timer *time.Timer // fires when the lease counts as lost, on this process's clock
	ended bool        // guarded by Store.lmu
}

// newOwner returns a random positive owner id.
func newOwner() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:]) &^ (1 << 63)) // positive: readable as a bigint key
}

// holdFor is how long after a renewal was sent the lease still counts as
// held on this process's clock: two thirds of the lease. The database
// keeps it until at least a whole lease after that renewal, so a third of
// the lease separates the moment the holder stops from the first moment
// another process may take its claims over.
func (s *Store) holdFor() time.Duration { return s.lease * 2 / 3 }

// leaseInterval is the lease in microseconds, for SQL.
func (s *Store) leaseInterval() int64 { return s.lease.Microseconds() }

// keeperExec runs q on the keeper's own connection (not the pool: renewals
// never wait behind the pool's queue), reconnecting it when it was lost.
func (s *Store) keeperExec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error) {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if s.kconn == nil || s.kconn.IsClosed() {
		c, err := pgx.ConnectConfig(ctx, s.kcfg)
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		s.kconn = c
	}
	tag, err := s.kconn.Exec(ctx, q, args...)
	var pgErr *pgconn.PgError
	if err != nil && !errors.As(err, &pgErr) {
		// The connection may be broken (a restart, a dropped network):
		// open a new one next time.
		_ = s.kconn.Close(context.WithoutCancel(ctx))
		s.kconn = nil
	}
	return tag, err
}

// acquire starts a new lease and makes it the Store's current one, unless
// another call did meanwhile. It fails with ErrSchemaOlder before
// Migrate.
func (s *Store) acquire(ctx context.Context) (*epoch, error) {
	s.amu.Lock()
	defer s.amu.Unlock()
	if ep := s.current(); ep != nil {
		return ep, nil
	}
	if s.isClosed() {
		return nil, errClosed
	}
	owner := newOwner()
	sent := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.holdFor())
	defer cancel()
	if _, err := s.keeperExec(ctx, `INSERT INTO reactguard_leases (owner, expires) VALUES ($1, now() + $2 * interval '1 microsecond')`,
		owner, s.leaseInterval()); err != nil {
		return nil, schemaErr(ctx, "start lease", err)
	}
	lctx, lose := context.WithCancelCause(context.Background())
	ep := &epoch{owner: owner, ctx: lctx, lose: lose}
	ep.timer = time.AfterFunc(time.Until(sent.Add(s.holdFor())), func() {
		s.lost(ep, fmt.Errorf("postgres: %w: lease %d not renewed within %v", runstore.ErrLeaseLost, owner, s.holdFor()))
	})
	s.lmu.Lock()
	s.cur, s.why = ep, nil
	s.lmu.Unlock()
	return ep, nil
}

// renew extends the lease of ep; a lease the database says has expired is
// lost.
func (s *Store) renew(ep *epoch) error {
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), s.holdFor())
	defer cancel()
	tag, err := s.keeperExec(ctx, `UPDATE reactguard_leases SET expires = now() + $2 * interval '1 microsecond' WHERE owner = $1 AND expires > now()`,
		ep.owner, s.leaseInterval())
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		s.lost(ep, fmt.Errorf("postgres: %w: lease %d expired in the database", runstore.ErrLeaseLost, ep.owner))
		return nil
	}
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if !ep.ended {
		ep.timer.Reset(time.Until(sent.Add(s.holdFor())))
	}
	return nil
}

// lost ends the lease of ep with cause: every context held under it is
// cancelled, and the Store starts a new lease (with a new owner id) for
// its next claims. The lease's row is left to expire: its claims may be
// taken over only once it has.
func (s *Store) lost(ep *epoch, cause error) {
	s.lmu.Lock()
	if ep.ended {
		s.lmu.Unlock()
		return
	}
	ep.ended = true
	if s.cur == ep {
		s.cur, s.why = nil, cause
	}
	ep.timer.Stop()
	s.lmu.Unlock()
	ep.lose(cause)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// current returns the lease the Store holds, or nil.
func (s *Store) current() *epoch {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return s.cur
}

func (s *Store) isClosed() bool {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return s.closed
}

// errClosed is the cause of the lease of a closed Store.
var errClosed = fmt.Errorf("postgres: %w: the store is closed", runstore.ErrLeaseLost)

// keep renews the current lease every third of the lease (sooner after a
// failure) and starts a new one when it was lost, until the Store closes.
func (s *Store) keep() {
	defer close(s.done)
	for {
		wait := s.lease / 3
		if ep := s.current(); ep != nil {
			if err := s.renew(ep); err != nil {
				wait = retryRenew
			}
		} else if _, err := s.acquire(context.Background()); err != nil {
			wait = retryRenew
			if errors.Is(err, ErrSchemaOlder) {
				wait = s.lease / 3 // Migrate kicks when it is done
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-s.kick:
		case <-t.C:
		}
		t.Stop()
	}
}

// leaseNow returns the lease the Store's claims are made under, starting one
// when none is held (it tries for up to a third of the lease); without one
// the error wraps runstore.ErrLeaseLost.
func (s *Store) leaseNow(ctx context.Context) (*epoch, error) {
	if ep := s.current(); ep != nil {
		return ep, nil
	}
	if s.isClosed() {
		return nil, errClosed
	}
	wait, cancel := context.WithTimeout(ctx, s.lease/3)
	defer cancel()
	for {
		ep, err := s.acquire(wait)
		if err == nil {
			return ep, nil
		}
		if errors.Is(err, ErrSchemaOlder) {
			return nil, err
		}
		select {
		case <-wait.Done():
			s.lmu.Lock()
			why := s.why
			s.lmu.Unlock()
			return nil, fmt.Errorf("postgres: %w: no lease held (%w; starting one: %w)", runstore.ErrLeaseLost, why, err)
		case <-time.After(retryRenew):
		}
	}
}

// leaseRefused handles a claim statement that found this Store's lease
// expired in the database (the clocks disagree, or the process stalled):
// the lease is lost.
func (s *Store) leaseRefused(ep *epoch) error {
	err := fmt.Errorf("postgres: %w: lease %d has expired in the database", runstore.ErrLeaseLost, ep.owner)
	s.lost(ep, err)
	return err
}

// hold returns a context derived from ctx that is cancelled when the lease
// of ep is lost (already cancelled when ep is nil: nothing is held).
func hold(ctx context.Context, ep *epoch) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(ctx)
	if ep == nil {
		cancel(fmt.Errorf("postgres: %w: not held by this store", runstore.ErrLeaseLost))
		return c, func() {}
	}
	stop := context.AfterFunc(ep.ctx, func() { cancel(context.Cause(ep.ctx)) })
	return c, func() { stop(); cancel(context.Canceled) }
}

// endLease ends the Store's lease when it closes: its work is cancelled and
// its row deleted, so that its claims (of resumes and writes it did not
// finish) may be taken over at once.
func (s *Store) endLease() {
	s.lmu.Lock()
	ep := s.cur
	s.cur, s.closed, s.why = nil, true, errClosed
	if ep != nil {
		ep.ended = true
		ep.timer.Stop()
	}
	s.lmu.Unlock()
	if ep != nil {
		ep.lose(errClosed)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = s.keeperExec(ctx, `DELETE FROM reactguard_leases WHERE owner = $1`, ep.owner)
		cancel()
	}
	s.kmu.Lock()
	if s.kconn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.kconn.Close(ctx)
		cancel()
		s.kconn = nil
	}
	s.kmu.Unlock()
}
