package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reactguard/reactguard/stores/sqlite"
)

// holdWriteLock takes SQLite's write lock (BEGIN IMMEDIATE) on the file
// path through a connection of its own that leaves the journal mode alone
// (a new file stays in rollback mode, as it is while another process's
// Open switches it to WAL), and returns the function that commits and
// closes it.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(bg, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, _ = conn.ExecContext(bg, `COMMIT`)
			_ = conn.Close()
			_ = db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// Open on a new file whose write lock another connection holds: SQLite
// fails the switch to WAL at once with SQLITE_BUSY, busy timeout or not,
// so Open tries again until the busy timeout passes or ctx ends.
func TestOpen_NewFileLockedByAnother(t *testing.T) {
	for _, tt := range []struct {
		name    string
		busy    time.Duration // Options.BusyTimeout
		release time.Duration // when the other connection commits; 0: never while Open runs
		ctx     time.Duration // ctx's timeout; 0: none
		want    []error       // what the error wraps besides ErrOpen; nil: Open succeeds
	}{
		{"the other commits within the busy timeout: Open waits for it and succeeds", 10 * time.Second, 100 * time.Millisecond, 0, nil},
		{"the lock outlives the busy timeout: ErrBusy, not a damaged or foreign file", 200 * time.Millisecond, 0, 0, []error{sqlite.ErrBusy}},
		{"ctx ends while Open waits for the lock: ctx's error and ErrBusy, before the busy timeout", time.Minute, 0, 200 * time.Millisecond,
			[]error{sqlite.ErrBusy, context.DeadlineExceeded}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			release := holdWriteLock(t, path)
			var wg sync.WaitGroup
			defer wg.Wait()
			if tt.release > 0 {
				wg.Go(func() { time.Sleep(tt.release); release() })
			}
			ctx := bg
			if tt.ctx > 0 {
				c, cancel := context.WithTimeout(bg, tt.ctx)
				defer cancel()
				ctx = c
			}
			s, err := sqlite.Open(ctx, path, &sqlite.Options{BusyTimeout: tt.busy})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Open = %v; want it to wait for the lock and succeed", err)
				}
				defer func() { _ = s.Close() }()
				if err := s.Migrate(bg); err != nil {
					t.Fatal(err)
				}
				var mode string
				if err := s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
					t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
				}
				return
			}
			if err == nil {
				_ = s.Close()
				t.Fatal("Open succeeded while the lock was held; want an error")
			}
			if !errors.Is(err, sqlite.ErrOpen) || errors.Is(err, sqlite.ErrCorrupt) {
				t.Fatalf("Open = %v; want ErrOpen (and not ErrCorrupt)", err)
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Fatalf("Open = %v; want it to wrap %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Fatalf("Open = %v; want the error to name the file", err)
			}
		})
	}
}

// Stores opening one new file at once and migrating it, as replicas of a
// service starting together do (a Store of its own per goroutine: SQLite
// locks the file between the connections of one process as it does
// between processes), again and again: each Open and Migrate succeeds.
// This is the realistic form of TestOpen_NewFileLockedByAnother, and a
// weak one: without the retry of the switch to WAL, 1 run in 6 of it
// failed with SQLITE_BUSY on a loaded machine (load 20-26); that test
// fails every time.
func TestOpen_ManyAtOnceOnANewFile(t *testing.T) {
	const stores = 12
	rounds := 40
	switch {
	case testing.Short():
		rounds = 5
	case raceEnabled: // about tenfold slower
		rounds = 8
	}
	for r := range rounds {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("state-%d.db", r))
		start := make(chan struct{})
		errs := make([]error, stores)
		var wg sync.WaitGroup
		for i := range stores {
			wg.Go(func() {
				<-start
				s, err := sqlite.Open(bg, path, nil)
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = errors.Join(s.Migrate(bg), s.Close())
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, store %d: %v", r, i, err)
			}
		}
	}
}

// ctx ending while Open reads the whole file (quick_check) is not damage:
// the error wraps ctx's error and ErrOpen, not ErrCorrupt (whose advice is
// to restore a backup).
func TestOpen_EndedContextIsNotDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, nil)
	// About 8 MB, so that quick_check outlasts the opening of the
	// connection by far.
	if _, err := s.DB().Exec(`CREATE TABLE filler (b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
		INSERT INTO filler SELECT zeroblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s2, err := sqlite.Open(bg, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	_ = s2.Close()
	for d := took / 2; d > 0; d /= 2 {
		ctx, cancel := context.WithTimeout(bg, d)
		s3, err := sqlite.Open(ctx, path, nil)
		cancel()
		if err == nil {
			_ = s3.Close()
			continue // Open was quicker this time: a shorter deadline
		}
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sqlite.ErrOpen) || errors.Is(err, sqlite.ErrCorrupt) {
			t.Fatalf("Open with a deadline of %v (a whole Open took %v) = %v; want ErrOpen and ctx's error, not ErrCorrupt", d, took, err)
		}
		t.Logf("Open with a deadline of %v (a whole Open took %v): %v", d, took, err)
		return
	}
	t.Fatal("Open never ran out of time")
}
