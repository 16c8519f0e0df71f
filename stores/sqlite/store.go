package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	modernc "modernc.org/sqlite" // the pure-Go driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/reactguard/reactguard/internal/pending"
	"github.com/reactguard/reactguard/runstore"
)

// DefaultBusyTimeout is how long, by default, a statement waits for
// another connection's or process's write lock before it fails.
const DefaultBusyTimeout = 10 * time.Second

// DefaultMaxOpenConns is the size of a [Store]'s pool by default (see
// [Options].MaxOpenConns).
const DefaultMaxOpenConns = 1

// Options configures a [Store]. The zero value (and nil) means defaults.
type Options struct {
	// Now is the clock of the times the store writes; [Store.Prune]
	// compares them with the bound it is given. Nil means time.Now. It must
	// be safe for concurrent use.
	Now func() time.Time
	// BusyTimeout is SQLite's busy timeout: how long a statement waits for
	// the write lock held by another connection or process; 0 means
	// [DefaultBusyTimeout].
	BusyTimeout time.Duration
	// MaxOpenConns bounds the connections of the pool (database/sql); 0
	// means 1. SQLite runs one writer at a time whatever the number, and
	// more connections only wait for each other's write lock (busy
	// timeout sleeps): measured with 32 runs at once in one process
	// (BenchmarkRuns, docs/performance.md), one connection gave the most
	// runs per second and the lowest p99 in most series, eight the fewest
	// and the highest. Raise it for a store read much more than written.
	// [Store.Backup] uses a connection of its own.
	MaxOpenConns int
	// OwnerCheck is how often the Store checks that its owner lock file is
	// still its own (see [Store]); 0 means one second.
	OwnerCheck time.Duration
}

// Store is the durable state of reactguard in one SQLite file, in WAL mode
// with a busy timeout, shared by every goroutine of the process and by
// other processes on the same machine that open the same file. Build it
// with [Open], call [Store.Migrate] once at start-up, hand its parts to the
// loop, and Close it when the process no longer runs tools through it.
type Store struct {
	db   *sql.DB
	dsn  string
	path string
	now  func() time.Time

	omu   sync.Mutex
	own   *owner // this process's identity for the claims it makes; replaced when its lock file is lost
	stop  chan struct{}
	done  chan struct{}
	check time.Duration

	closeOnce sync.Once
	closeErr  error

	pending pending.Map[string, pendingFinish] // key → a final record not yet stored
	unsure  pending.Map[[2]string, struct{}]   // resume claims whose statement failed: maybe taken by this store
	settles pending.Map[[2]string, int64]      // resume claims (→ token) whose Settle failed: settled before the next Claim or Settle
	writes  pending.Map[string, heldWrite]     // key → the claim of it this process holds
	held    pending.Map[string, heldClaim]     // run → the resume claim of it this process holds
}

// pendingFinish is a final write record whose Finish failed; it is stored
// before anything else reads or claims its key in this process.
type pendingFinish struct {
	tool, result []byte
	state, code  int
	token        int64
}

// heldWrite is a write claim this process holds: its token and owner.
type heldWrite struct {
	token int64
	own   *owner
}

// heldClaim is a resume claim this process holds: its snapshot id, token
// and owner, and whether the save or delete of its run settled it.
type heldClaim struct {
	id      string
	token   int64
	own     *owner
	settled bool
}

// ErrOpen is wrapped by the error of [Open] when the file cannot be opened
// as an SQLite database; the message names the file.
var ErrOpen = errors.New("sqlite: cannot open the database")

// Open opens (creating it if needed) the SQLite database file path with
// WAL journaling, synchronous=NORMAL, a busy timeout and immediate
// transactions, and returns a Store over it. path must be a file: an
// in-memory database would be a different database on each connection. It
// fails when the file cannot be opened or is not an SQLite database
// ([ErrOpen], naming the file), and when its schema is newer than this code
// ([ErrSchemaNewer]). It does not migrate: call [Store.Migrate].
//
// Several processes (or Stores of one process) may open the same file at
// once, a new file included, while others write it. When another
// connection holds the lock Open needs, each step of Open waits for it up
// to the busy timeout ([Options].BusyTimeout), as every statement of the
// store does. That includes the switch of a new file to WAL journaling,
// which SQLite fails at once with SQLITE_BUSY, whatever the busy timeout,
// when another connection holds the write lock (another process switching
// the same new file): Open tries it again, with a backoff from 1 ms to
// 64 ms, until the busy timeout has passed or ctx ends. When the lock is
// still held then, the error wraps [ErrOpen] and [ErrBusy] (and ctx's
// error when ctx ended); when ctx ends otherwise, it wraps [ErrOpen] and
// ctx's error.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("%w %q: a file path is required", ErrOpen, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrOpen, path, err)
	}
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrOpen, abs, err)
	}
	n := o.MaxOpenConns
	if n <= 0 {
		n = DefaultMaxOpenConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	s := &Store{db: db, dsn: dsn, path: abs, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if err := openConn(ctx, db, busy); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%w %q: %w", ErrOpen, abs, err)
	}
	if err := quickCheck(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%w %q: %w", ErrOpen, abs, err)
	}
	if err := s.checkVersion(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if s.own, err = newOwner(abs + ".owners"); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%w %q: owner lock: %w", ErrOpen, abs, err)
	}
	s.check = o.OwnerCheck
	if s.check <= 0 {
		s.check = time.Second
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.watch()
	return s, nil
}

// watch checks the owner lock file every s.check until the Store closes.
func (s *Store) watch() {
	defer close(s.done)
	t := time.NewTicker(s.check)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			_, _ = s.owner()
		}
	}
}

// owner returns the Store's owner. When its lock file is no longer the one
// the Store holds locked (someone removed or replaced it: to every other
// process the owner now reads as dead), the owner is lost: the work held
// under it is cancelled (cause wrapping runstore.ErrLeaseLost) and a new
// owner, with a new lock file, is made for the next claims.
func (s *Store) owner() (*owner, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	if s.own.intact() {
		return s.own, nil
	}
	s.own.lose(fmt.Errorf("sqlite: %w: the owner lock file %s was removed or replaced", runstore.ErrLeaseLost, s.own.id))
	o, err := newOwner(s.own.dir)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w: a new owner lock: %w", runstore.ErrLeaseLost, err)
	}
	old := s.own
	s.own = o
	_ = old.release()
	return o, nil
}

// current returns the Store's owner without checking it.
func (s *Store) current() *owner {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.own
}

// ErrBusy is wrapped (with [ErrOpen]) by the error of [Open] when another
// connection or process held the database's lock for the whole busy
// timeout ([Options].BusyTimeout), or until Open's ctx ended (the error
// then wraps ctx's error too): a long write, or a process that stopped
// inside a transaction. Open again later, or look for the process that
// holds the file.
var ErrBusy = errors.New("sqlite: the database is locked by another connection or process")

// busy reports whether err is SQLite's SQLITE_BUSY (extended codes
// included: BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT).
func busy(err error) bool {
	var e *modernc.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// openConn opens the pool's first connection, which runs the DSN's
// pragmas, and tries again while it fails with SQLITE_BUSY, with a
// backoff from 1 ms to 64 ms, until wait has passed or ctx ends.
//
// On a file not yet in WAL mode (a new one), PRAGMA journal_mode=WAL reads
// the file's header under a shared lock and then takes the write lock to
// change it. When another connection holds the write lock (another
// process switching the same new file at the same moment), SQLite fails
// the pragma at once with SQLITE_BUSY, without calling the busy handler:
// a connection that already reads does not wait for the write lock,
// because the writer may be waiting for that reader to end (the deadlock
// SQLite avoids; sqlite3BtreeBeginTrans calls the busy handler only when
// no transaction is open). The busy timeout thus does not cover this
// step; the retry here does. Once the file is in WAL mode, the pragma
// only reads the header and the case does not arise.
func openConn(ctx context.Context, db *sql.DB, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := db.PingContext(ctx)
		if err == nil || !busy(err) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w: still locked after %v: %w", ErrBusy, wait, err)
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w, until %w: %w", ErrBusy, ctx.Err(), err)
		case <-t.C:
		}
		pause = min(2*pause, 64*time.Millisecond)
	}
}

// ErrCorrupt is wrapped (with [ErrOpen]) by the error of [Open] when
// SQLite's quick_check finds the file damaged (a torn copy of a live
// database, a disk fault): the store refuses it rather than fail later in
// the middle of a run. Restore the last copy made with [Store.Backup].
var ErrCorrupt = errors.New("sqlite: the database file is damaged")

// quickCheck runs PRAGMA quick_check: every page and index is read once
// (O(size of the file)), without comparing index contents to tables. A
// lock held past the busy timeout ([ErrBusy]) or the end of ctx is not
// damage: it is reported as such, not as [ErrCorrupt].
func quickCheck(ctx context.Context, db *sql.DB) error {
	failed := func(err error) error {
		switch {
		case busy(err):
			return fmt.Errorf("%w: quick_check: %w", ErrBusy, err)
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return fmt.Errorf("quick_check: %w", err)
		case ctx.Err() != nil:
			return fmt.Errorf("quick_check: %w: %w", ctx.Err(), err)
		}
		return fmt.Errorf("%w: quick_check: %w", ErrCorrupt, err)
	}
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return failed(err)
	}
	defer func() { _ = rows.Close() }()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return failed(err)
		}
		if line != "ok" && len(problems) < 3 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return failed(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: quick_check: %s; restore the last copy made with Store.Backup", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// Backup writes a consistent copy of the database to the file path, which
// must not exist, while the store stays in use: SQLite's VACUUM INTO reads
// the database in one read transaction (in WAL mode, writers go on
// meanwhile) and writes a compacted copy that includes everything
// committed before it began, write-ahead log included. The copy is a
// complete database: open it with [Open]. Copying the file of a live
// database with cp, rsync or a file-system snapshot that does not include
// the -wal file at the same instant may give a damaged copy, which [Open]
// refuses ([ErrCorrupt]); use Backup (or the sqlite3 tool's .backup).
func (s *Store) Backup(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("sqlite: backup to %q: %w", path, err)
	}
	if _, err := os.Lstat(abs); err == nil {
		return fmt.Errorf("sqlite: backup to %q: %w", abs, os.ErrExist)
	}
	// A handle of its own: the copy does not hold a connection of the
	// store's pool for as long as it takes.
	db, err := sql.Open("sqlite", s.dsn)
	if err != nil {
		return fmt.Errorf("sqlite: backup to %q: %w", abs, err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, abs); err != nil {
		return fmt.Errorf("sqlite: backup to %q: %w", abs, err)
	}
	return nil
}

// DB returns the store's database handle.
func (s *Store) DB() *sql.DB { return s.db }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close settles the resume claims whose Settle failed (one try, at most
// five seconds), releases this process's owner lock (its running writes
// then read as uncertain to other processes, and its unsettled resume
// claims may be taken over) and closes the database. Call it once
// the process runs no more tools through the store; it is safe to call
// more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.settlePending(ctx)
		cancel()
		close(s.stop)
		<-s.done
		o := s.current()
		o.lose(fmt.Errorf("sqlite: %w: the store is closed", runstore.ErrLeaseLost))
		s.closeErr = errors.Join(o.release(), s.db.Close())
	})
	return s.closeErr
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

// ts returns the store's current time in Unix microseconds.
func (s *Store) ts() int64 { return s.now().UnixMicro() }

// tx runs f in an immediate transaction (the write lock is taken at BEGIN,
// so two transactions never deadlock upgrading a read lock).
func (s *Store) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// owner is this process's identity in the running records it claims: the
// name of a lock file, beside the database, that the process holds locked
// (flock) for as long as it lives. The kernel drops the lock when the
// process dies, however it dies, so another process tells a write in
// flight from one whose owner died by trying the lock.
type owner struct {
	dir  string
	id   string
	file *os.File // holds the lock; nil where locks are unsupported
	ctx  context.Context
	lose context.CancelCauseFunc
}

func newOwner(dir string) (*owner, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	o := &owner{dir: dir, id: hex.EncodeToString(b[:])}
	o.ctx, o.lose = context.WithCancelCause(context.Background())
	f, err := os.OpenFile(filepath.Join(dir, o.id), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, true); err != nil && locksWork {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	_, _ = fmt.Fprintf(f, "pid %d\n", os.Getpid())
	o.file = f
	return o, nil
}

// intact reports whether the lock file at o's path is still the file o
// holds locked (a removed or replaced file makes o read as dead to other
// processes).
func (o *owner) intact() bool {
	if o.file == nil {
		return true // locks unsupported: every owner counts as alive anyway
	}
	at, err := os.Stat(filepath.Join(o.dir, o.id))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	mine, err := o.file.Stat()
	return err != nil || os.SameFile(at, mine)
}

// hold returns a context derived from ctx that is cancelled when o is
// lost (already cancelled for a nil o: nothing is held).
func hold(ctx context.Context, o *owner) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(ctx)
	if o == nil {
		cancel(fmt.Errorf("sqlite: %w: not held by this store", runstore.ErrLeaseLost))
		return c, func() {}
	}
	stop := context.AfterFunc(o.ctx, func() { cancel(context.Cause(o.ctx)) })
	return c, func() { stop(); cancel(context.Canceled) }
}

// release unlocks and removes the lock file.
func (o *owner) release() error {
	if o == nil || o.file == nil {
		return nil
	}
	name := o.file.Name()
	still := o.intact()
	err := o.file.Close() // closing drops the lock
	o.file = nil
	if still {
		err = errors.Join(err, os.Remove(name))
	}
	return err
}

// dead reports whether the owner id is known to have ended: its lock file
// is gone, or it is not locked (its process died). An id that is not a
// lock file name, or a lock that cannot be tried, counts as alive: a write
// is never called uncertain on a guess.
func (o *owner) dead(id string) bool {
	if id == "" || id == o.id || filepath.Base(id) != id || id == "." || id == ".." {
		return false
	}
	name := filepath.Join(o.dir, id)
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	if err := lockFile(f, true); err != nil {
		return false // held: alive (or locks unsupported here)
	}
	_ = os.Remove(name) // its process died; clean up
	return true
}
