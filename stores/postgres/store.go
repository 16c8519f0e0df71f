package postgres

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reactguard/reactguard/internal/pending"
)

// DefaultSessionCheck is how often a [Store] checks, by default, that its
// owner session is alive (see [Options].SessionCheck).
const DefaultSessionCheck = 5 * time.Second

// Options configures a [Store]. The zero value (and nil) means defaults.
type Options struct {
	// Now is the clock of the times the store writes (when a call was
	// gated, a write settled, a claim taken, evidence written); [Store.Prune]
	// compares them with the bound it is given. Nil means time.Now. It must
	// be safe for concurrent use.
	Now func() time.Time
	// SessionCheck is how often the owner session is pinged (and reopened
	// when it was lost); 0 means [DefaultSessionCheck].
	SessionCheck time.Duration
}

// Store is the durable state of reactguard in one PostgreSQL database. It
// is safe for concurrent use by any number of goroutines and processes.
// Build it with [Open] or [New], call [Store.Migrate] once at start-up,
// and hand its parts to the loop:
//
//	guard.Options{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger()}
//	react.Config{…, Claims: s.Claims()}
//
// A Store holds one connection of its own besides the pool: its owner
// session (see the package documentation, "Writes of a process that
// died"). Close it when the process no longer runs tools through it.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	cfg     *pgx.ConnConfig
	now     func() time.Time
	check   time.Duration
	addr    string

	owner int64 // the advisory lock key of this store's owner session

	mu      sync.Mutex
	session *pgx.Conn // holds the owner lock; nil while lost
	lost    error     // why the session is lost, nil while it is held

	stop chan struct{}
	done chan struct{}
	once sync.Once

	keys    keys                               // per-key Begin lock and claims held by this process
	pending pending.Map[string, pendingFinish] // key → a final record not yet stored
	unsure  pending.Map[[2]string, struct{}]   // resume claims whose statement failed: maybe taken by this store
	settles pending.Map[[2]string, struct{}]   // resume claims whose Settle failed: settled before the next Claim or Settle
}

// pendingFinish is a final write record whose Finish failed; it is stored
// before anything else reads or claims its key in this process.
type pendingFinish struct {
	tool, result []byte
	state        int16
	code         int32
}

// ErrUnreachable is wrapped by the error of [Open] and [New] when the
// server cannot be reached; the message names the address.
var ErrUnreachable = errors.New("postgres: server unreachable")

// ErrSessionLost is wrapped by the error of [WriteLedger.Begin] while the
// store's owner session is lost: no write is claimed until the session is
// back (the store reconnects by itself).
var ErrSessionLost = errors.New("postgres: owner session lost")

// Open connects to the database of dsn (a URL or key=value string, see
// pgxpool.ParseConfig; pool settings such as pool_max_conns go there) and
// returns a Store that owns the pool. It fails when the server cannot be
// reached within ctx, with an error wrapping [ErrUnreachable] that names
// the address, and when the database's schema is newer than this code
// ([ErrSchemaNewer]). It does not migrate: call [Store.Migrate].
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse dsn: %w", err)
	}
	// A cancelled ctx cancels the statement on the server too (a cancel
	// request), rather than only dropping the connection while the
	// statement goes on.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 2 * time.Second}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s, err := newStore(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// New returns a Store over the caller's pool, which the Store uses but
// does not close. It fails as [Open] does.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	return newStore(ctx, pool, opts)
}

func newStore(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Store{
		pool:  pool,
		cfg:   pool.Config().ConnConfig.Copy(),
		now:   o.Now,
		check: o.SessionCheck,
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.check <= 0 {
		s.check = DefaultSessionCheck
	}
	s.addr = net.JoinHostPort(s.cfg.Host, strconv.Itoa(int(s.cfg.Port)))
	if err := pool.Ping(ctx); err != nil {
		return nil, s.unreachable(err)
	}
	if err := s.checkVersion(ctx); err != nil {
		return nil, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	s.owner = int64(binary.BigEndian.Uint64(b[:]) &^ (1 << 63)) // positive: readable in pg_locks
	if err := s.openSession(ctx); err != nil {
		return nil, err
	}
	go s.watch()
	return s, nil
}

func (s *Store) unreachable(err error) error {
	return fmt.Errorf("%w at %s: %w", ErrUnreachable, s.addr, err)
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close settles the resume claims whose Settle failed (one try, at most
// five seconds), stops the session check, ends the owner session (its
// running writes then read as uncertain to every other process, and its
// unsettled resume claims may be taken over) and closes the pool when
// [Open] made it. Call it once the process runs no more tools
// through the store; it is safe to call more than once.
func (s *Store) Close() {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.settlePending(ctx)
		cancel()
		close(s.stop)
		<-s.done
		s.mu.Lock()
		if s.session != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = s.session.Close(ctx)
			cancel()
			s.session = nil
		}
		s.lost = errors.New("store closed")
		s.mu.Unlock()
		if s.ownPool {
			s.pool.Close()
		}
	})
}

// openSession connects the owner session and takes the owner lock.
func (s *Store) openSession(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return s.unreachable(err)
	}
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, s.owner).Scan(&got); err != nil || !got {
		_ = conn.Close(context.WithoutCancel(ctx))
		if err == nil {
			err = fmt.Errorf("owner lock %d is held by another session", s.owner)
		}
		return fmt.Errorf("postgres: owner session: %w", err)
	}
	s.mu.Lock()
	s.session, s.lost = conn, nil
	s.mu.Unlock()
	return nil
}

// watch pings the owner session every s.check and reopens it when lost.
func (s *Store) watch() {
	defer close(s.done)
	t := time.NewTicker(s.check)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.checkSession()
		}
	}
}

// checkSession pings the owner session; when it is lost, it marks it so
// (Begin refuses new claims) and tries to reopen it.
func (s *Store) checkSession() {
	ctx, cancel := context.WithTimeout(context.Background(), s.check)
	defer cancel()
	s.mu.Lock()
	conn := s.session
	s.mu.Unlock()
	if conn != nil {
		if err := conn.Ping(ctx); err == nil {
			return
		} else {
			s.mu.Lock()
			s.session, s.lost = nil, err
			s.mu.Unlock()
			_ = conn.Close(ctx)
		}
	}
	_ = s.openSession(ctx) // stays lost until it succeeds
}

// sessionErr returns nil while the owner session is held; when it is lost
// it tries once to reopen it.
func (s *Store) sessionErr(ctx context.Context) error {
	s.mu.Lock()
	held, lost := s.session != nil, s.lost
	s.mu.Unlock()
	if held {
		return nil
	}
	select {
	case <-s.stop:
		return fmt.Errorf("%w: %w", ErrSessionLost, lost)
	default:
	}
	// The server may not have ended the old session yet (it holds the
	// owner lock until it notices): try for up to one session check.
	wait, cancel := context.WithTimeout(ctx, s.check)
	defer cancel()
	for {
		err := s.openSession(wait)
		if err == nil {
			return nil
		}
		select {
		case <-wait.Done():
			return fmt.Errorf("%w: %w (reopening: %w)", ErrSessionLost, lost, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Approvals returns the store's [guard.Approvals].
func (s *Store) Approvals() *Approvals { return &Approvals{s: s} }

// WriteLedger returns the store's [guard.WriteLedger].
func (s *Store) WriteLedger() *WriteLedger { return &WriteLedger{s: s} }

// Evidence returns the store's [evidence.Ledger].
func (s *Store) Evidence() *Evidence { return &Evidence{s: s} }

// Claims returns the store's [runstore.Claims].
func (s *Store) Claims() *Claims { return &Claims{s: s} }

// Runs returns the store's [runstore.Store].
func (s *Store) Runs() *Runs { return &Runs{s: s} }

// ts returns the store's current time to the microsecond, in UTC.
func (s *Store) ts() time.Time { return s.now().UTC().Truncate(time.Microsecond) }
