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
	"sync"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver "sqlite"

	"github.com/reactguard/reactguard/internal/pending"
)

// DefaultBusyTimeout is how long, by default, a statement waits for
// another connection's or process's write lock before it fails.
const DefaultBusyTimeout = 10 * time.Second

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
	// means 8. SQLite runs one writer at a time whatever the number.
	MaxOpenConns int
}

// Store is the durable state of reactguard in one SQLite file, in WAL mode
// with a busy timeout, shared by every goroutine of the process and by
// other processes on the same machine that open the same file. Build it
// with [Open], call [Store.Migrate] once at start-up, hand its parts to the
// loop, and Close it when the process no longer runs tools through it.
type Store struct {
	db    *sql.DB
	path  string
	now   func() time.Time
	owner *owner // this process's identity for the running writes it claims

	closeOnce sync.Once
	closeErr  error

	pending pending.Map[string, pendingFinish] // key → a final record not yet stored
	unsure  pending.Map[[2]string, struct{}]   // resume claims whose statement failed: maybe taken by this store
	settles pending.Map[[2]string, struct{}]   // resume claims whose Settle failed: settled before the next Claim or Settle
}

// pendingFinish is a final write record whose Finish failed; it is stored
// before anything else reads or claims its key in this process.
type pendingFinish struct {
	tool, result []byte
	state, code  int
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
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: abs}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrOpen, abs, err)
	}
	n := o.MaxOpenConns
	if n <= 0 {
		n = 8
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	s := &Store{db: db, path: abs, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%w %q: %w", ErrOpen, abs, err)
	}
	if err := s.checkVersion(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if s.owner, err = newOwner(abs + ".owners"); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%w %q: owner lock: %w", ErrOpen, abs, err)
	}
	return s, nil
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
		s.closeErr = errors.Join(s.owner.release(), s.db.Close())
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
}

func newOwner(dir string) (*owner, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	o := &owner{dir: dir, id: hex.EncodeToString(b[:])}
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

// release unlocks and removes the lock file.
func (o *owner) release() error {
	if o == nil || o.file == nil {
		return nil
	}
	name := o.file.Name()
	err := o.file.Close() // closing drops the lock
	o.file = nil
	return errors.Join(err, os.Remove(name))
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
