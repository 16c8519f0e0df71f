package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/pending"
)

// Options configures a [Store]. The zero value (and nil) means defaults.
type Options struct {
	// Now is the clock of the times the store writes (when a call was
	// gated, a write settled, a claim taken, evidence written); [Store.Prune]
	// compares them with the bound it is given. Nil means time.Now. It must
	// be safe for concurrent use. Leases are timed by the database's clock
	// and the process's monotonic clock, never by Now.
	Now func() time.Time
	// Lease is how long the database keeps the claims of this Store (its
	// running writes and unsettled resume claims) after the Store last
	// renewed its lease; 0 means [DefaultLease]. The Store renews it every
	// third of the lease, and counts it lost, cancelling the work done
	// under it, when two thirds of the lease passed without a renewal; the
	// last third is the time a cancelled call has to stop before another
	// process may take its claims over. A process that died has its claims
	// taken over a lease after its last renewal. Values below 300 ms are
	// raised to it.
	Lease time.Duration
}

// Store is the durable state of reactguard in one PostgreSQL database. It
// is safe for concurrent use by any number of goroutines and processes.
// Build it with [Open] or [New], call [Store.Migrate] once at start-up,
// and hand its parts to the loop:
//
//	guard.Options{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger()}
//	react.Config{…, Claims: s.Claims(), Runs: s.Runs()}
//
// A Store holds a lease in the database while it is open, renewed on one
// connection of its own besides the pool (see the package documentation,
// "Leases and failover"). Close it when the process no longer runs tools
// through it.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	kcfg    *pgx.ConnConfig // the lease keeper's connection: the pool's settings, untraced
	now     func() time.Time
	lease   time.Duration
	addr    string

	lmu    sync.Mutex
	cur    *epoch // the lease claims are made under; nil while none is held
	why    error  // why none is held
	closed bool
	amu    sync.Mutex // one start of a lease at a time
	kmu    sync.Mutex // the keeper's connection
	kconn  *pgx.Conn
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once

	keys       keys                               // per-key Begin lock and claims held by this process
	pending    pending.Map[string, pendingFinish] // key → a final record not yet stored
	unsure     pending.Map[[2]string, struct{}]   // resume claims whose statement failed: maybe taken by this store
	settles    pending.Map[[2]string, int64]      // resume claims (→ token) whose Settle failed: settled before the next Claim or Settle
	held       heldClaims                         // resume claims this store holds
	prefetched pending.Map[string, prefetch]      // run → its evidence, read with its resume claim
	runOps     pending.Map[string, pendingRun]    // run → its save or delete that settles a claim, whose statement failed
	gated      memo[guard.GatedCall]              // run → the call this store just gated (see Approvals.Gated)
	granted    memo[struct{}]                     // keys on whose rows this store just granted an approval (see WriteLedger)
	touches    touchMemo                          // run → when this store last moved its last write time
}

// pendingFinish is a final write record whose Finish failed; it is stored
// before anything else reads or claims its key in this process.
type pendingFinish struct {
	tool, result []byte
	state        int16
	code         int32
	token        int64
}

// ErrUnreachable is wrapped by the error of [Open] and [New] when the
// server cannot be reached; the message names the address. Retrying later
// may succeed.
var ErrUnreachable = errors.New("postgres: server unreachable")

// ErrAuth is wrapped by the error of [Open] and [New] when the server
// refused the credentials (SQLSTATE class 28: a wrong password, an unknown
// role, no pg_hba.conf entry) or the database does not exist (3D000): the
// server answered, and retrying with the same settings will not help.
var ErrAuth = errors.New("postgres: the server refused the connection")

// Open connects to the database of dsn (a URL or key=value string, see
// pgxpool.ParseConfig; pool settings such as pool_max_conns go there) and
// returns a Store that owns the pool. It fails when the server cannot be
// reached within ctx, with an error wrapping [ErrUnreachable] that names
// the address; when it refuses the credentials or the database, with
// [ErrAuth]; and when the database's schema is newer than this code
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
		kcfg:  pool.Config().ConnConfig.Copy(),
		now:   o.Now,
		lease: o.Lease,
		kick:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	s.kcfg.Tracer = nil // the keeper's renewals are not the pool's statements
	if s.now == nil {
		s.now = time.Now
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	s.lease = max(s.lease, minLease)
	s.addr = net.JoinHostPort(s.kcfg.Host, strconv.Itoa(int(s.kcfg.Port)))
	if err := pool.Ping(ctx); err != nil {
		return nil, s.connectErr(err)
	}
	if err := s.checkVersion(ctx); err != nil {
		return nil, err
	}
	if _, err := s.acquire(ctx); err != nil && !errors.Is(err, ErrSchemaOlder) {
		s.endLease()
		return nil, s.connectErr(err)
	}
	go s.keep()
	return s, nil
}

// connectErr classifies an error of connecting: refused (ErrAuth) or
// unreachable (ErrUnreachable), naming the address.
func (s *Store) connectErr(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "28") || pgErr.Code == "3D000") {
		return fmt.Errorf("%w at %s (SQLSTATE %s: check the user, the password and the database name): %w", ErrAuth, s.addr, pgErr.Code, err)
	}
	return fmt.Errorf("%w at %s: %w", ErrUnreachable, s.addr, err)
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close saves or deletes the runs whose save or delete failed, settles the
// resume claims whose Settle failed (one try, at most five seconds), stops renewing the lease, cancels the work still held
// under it and deletes it (its running writes then read as uncertain to
// every other process at once, and its unsettled resume claims may be
// taken over), and closes the pool when [Open] made it. Call it once the
// process runs no more tools through the store; it is safe to call more
// than once.
func (s *Store) Close() {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.flushRuns(ctx)
		s.settlePending(ctx)
		cancel()
		close(s.stop)
		<-s.done
		s.endLease()
		if s.ownPool {
			s.pool.Close()
		}
	})
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
