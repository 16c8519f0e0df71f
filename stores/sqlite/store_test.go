package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/stores/sqlite"
	"github.com/reactguard/reactguard/threadstore"
)

var bg = context.Background()

func TestOpen_RefusesWhatIsNotADatabaseFile(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not sqlite "), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path string }{
		{"in memory (a different database per connection)", ":memory:"},
		{"empty path", ""},
		{"a directory", dir},
		{"a file that is not SQLite", junk},
		{"a missing directory", filepath.Join(dir, "missing", "state.db")},
	} {
		if s, err := sqlite.Open(bg, tt.path, nil); !errors.Is(err, sqlite.ErrOpen) && !errors.Is(err, sqlite.ErrSchemaNewer) {
			if err == nil {
				_ = s.Close()
			}
			t.Errorf("Open(%s) = %v; want ErrOpen", tt.name, err)
		} else if tt.path != "" && !strings.Contains(err.Error(), filepath.Base(tt.path)) {
			t.Errorf("Open(%s) = %v; want the error to name the file", tt.name, err)
		}
	}
}

func TestMigrate_IdempotentAndConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const procs = 6
	stores := make([]*sqlite.Store, procs)
	for i := range stores {
		s, err := sqlite.Open(bg, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.Close() }()
		stores[i] = s
	}
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for i, s := range stores {
		wg.Go(func() { errs[i] = s.Migrate(bg) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Migrate #%d = %v; want nil", i, err)
		}
	}
	if err := stores[0].Migrate(bg); err != nil {
		t.Fatalf("Migrate again = %v; want nil (idempotent)", err)
	}
	var n, v int
	if err := stores[0].DB().QueryRow(`SELECT count(*), max(version) FROM reactguard_schema`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != sqlite.SchemaVersion || v != sqlite.SchemaVersion {
		t.Fatalf("reactguard_schema holds %d rows up to version %d; want each of the %d versions once", n, v, sqlite.SchemaVersion)
	}
	var mode string
	if err := stores[0].DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestSchema_NewerIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(bg, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`INSERT INTO reactguard_schema (version, name, applied_at) VALUES (?, 'from the future', 0)`, sqlite.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(bg); !errors.Is(err, sqlite.ErrSchemaNewer) {
		t.Errorf("Migrate on a newer schema = %v; want ErrSchemaNewer", err)
	}
	_ = s.Close()
	if _, err := sqlite.Open(bg, path, nil); !errors.Is(err, sqlite.ErrSchemaNewer) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", sqlite.SchemaVersion+1)) {
		t.Errorf("Open on a newer schema = %v; want ErrSchemaNewer naming the version", err)
	}
}

// A database at version 1 with a resume claim in it migrates to the
// current version: the old claim reads as taken and not settled, so the
// claim of a process that died before the upgrade is taken over, once.
func TestSchema_UpgradeFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE reactguard_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		string(v1),
		`INSERT INTO reactguard_schema (version, name, applied_at) VALUES (1, '0001_init.sql', 0)`,
		`INSERT INTO reactguard_claims (run, id, owner, at) VALUES (X'72756e2d6f6c64', X'7331', 'gone0000', 0)`, // run-old, s1; no such owner file
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s := openAt(t, path, nil) // migrates
	var v int
	if err := s.DB().QueryRow(`SELECT max(version) FROM reactguard_schema`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("schema version after Migrate = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	for i, want := range []bool{true, false} {
		ok, err := s.Claims().Claim(bg, "run-old", "s1")
		if err != nil || ok != want {
			t.Fatalf("Claim #%d of a version-1 claim whose owner is gone = %v, %v; want %v", i+1, ok, err, want)
		}
	}
}

func TestSchema_OlderSaysMigrate(t *testing.T) {
	s, err := sqlite.Open(bg, filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, _, err := s.Approvals().Gated(bg, "r"); !errors.Is(err, sqlite.ErrSchemaOlder) {
		t.Fatalf("Gated before Migrate = %v; want ErrSchemaOlder", err)
	}
}

func TestStrings_AnyBytesRoundTrip(t *testing.T) {
	s := open(t, nil)
	weird := "nul\x00 and \xff\xfe bad utf-8"
	c := guard.GatedCall{CallID: weird, Tool: "w\x00", Args: []byte("{\"a\":\"\x00\"}"), Fingerprint: "fp", Round: 1}
	if err := s.Approvals().Gate(bg, weird, c); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Approvals().Gated(bg, weird)
	if err != nil || !ok || got.CallID != weird || got.Tool != c.Tool || !bytes.Equal(got.Args, c.Args) {
		t.Fatalf("Gated = %+v, %v, %v; want the call byte for byte", got, ok, err)
	}
	ev := s.Evidence()
	if err := ev.Append(bg, weird, evidence.Record{CallID: weird, Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"a\u0000b"}`)}); err != nil {
		t.Fatal(err)
	}
	if has, err := ev.HasValue(bg, weird, "t", "id", "a\x00b"); err != nil || !has {
		t.Fatalf("HasValue(a\\x00b) = %v, %v; want true", has, err)
	}
	r := runstore.Run{ID: weird, Node: "n\x00", Kind: runstore.FollowUp, Owner: runstore.Owner{Tenant: "t\x00", User: "ü\x00"}, Snapshot: []byte{0, 1, 0xff}, Stopped: time.Now()}
	if err := s.Runs().Save(bg, r); err != nil {
		t.Fatal(err)
	}
	back, ok, err := s.Runs().Get(bg, weird)
	if err != nil || !ok || back.Owner != r.Owner || back.Node != r.Node || !bytes.Equal(back.Snapshot, r.Snapshot) {
		t.Fatalf("Get = %+v, %v, %v; want the run byte for byte", back, ok, err)
	}
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	s := open(t, &sqlite.Options{Now: func() time.Time { return now }})
	run := "prune"
	wl, ap, ev, cl := s.WriteLedger(), s.Approvals(), s.Evidence(), s.Claims()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []struct {
		key   string
		state guard.WriteState
	}{{"ok", guard.WriteSucceeded}, {"failed", guard.WriteFailed}, {"uncertain", guard.WriteUncertain}} {
		must(wl.Finish(bg, guard.WriteRecord{Key: k.key, Tool: "w", State: k.state}))
	}
	_, _, err := wl.Begin(bg, "running", "w")
	must(err)
	must(ap.Gate(bg, run, guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	_, err = cl.Claim(bg, run, "snap")
	must(err)
	must(ev.Append(bg, run, evidence.Record{CallID: "c1", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"x"}`)}))
	must(s.Runs().Save(bg, runstore.Run{ID: run, Kind: runstore.Interrupted, Snapshot: []byte("{}"), Stopped: now}))
	// Two conversations: one nobody writes to again, one continued later;
	// both have evidence written now, which is a thread's, not a run's.
	th, tev := s.Threads(), s.Threads().Evidence()
	_, oldTok, err := th.Acquire(bg, "old-thread", runstore.Owner{}, "r1")
	must(err)
	must(th.Commit(bg, "old-thread", oldTok, threadstore.Turn{Index: 1, Run: "r1", Content: []byte("t")}, nil))
	must(tev.AddUserText(bg, "old-thread", "order A-1"))
	must(tev.AddUserText(bg, "kept-thread", "order A-2"))
	_, keptTok, err := th.Acquire(bg, "kept-thread", runstore.Owner{}, "r2")
	must(err)
	now = now.Add(24 * time.Hour)
	must(th.Commit(bg, "kept-thread", keptTok, threadstore.Turn{Index: 1, Run: "r2", Content: []byte("t")}, nil))
	must(ev.Append(bg, "fresh", evidence.Record{CallID: "c1", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"y"}`)}))
	_, err = cl.Claim(bg, "fresh", "snap")
	must(err)

	p, err := s.Prune(bg, now.Add(-time.Hour))
	must(err)
	want := sqlite.Pruned{Writes: 2, Runs: 1, Claims: 1, Approvals: 1, Evidence: 1, Threads: 1}
	if p != want {
		t.Fatalf("Prune = %+v; want %+v", p, want)
	}
	for _, k := range []struct {
		key  string
		kept bool
	}{{"ok", false}, {"failed", false}, {"uncertain", true}, {"running", true}} {
		_, ok, err := wl.Get(bg, k.key)
		must(err)
		if ok != k.kept {
			t.Errorf("write %s kept = %v; want %v (running and uncertain writes are never pruned)", k.key, ok, k.kept)
		}
	}
	if rs, _ := ev.Records(bg, run); len(rs) != 0 {
		t.Errorf("old run's evidence after Prune = %d records; want 0", len(rs))
	}
	if has, _ := ev.HasValue(bg, run, "t", "id", "x"); has {
		t.Error("old run's facts survive Prune")
	}
	if has, _ := ev.HasValue(bg, "fresh", "t", "id", "y"); !has {
		t.Error("Prune deleted the evidence of a fresh run")
	}
	if _, ok, _ := th.Get(bg, "old-thread"); ok {
		t.Error("the old conversation survives Prune")
	}
	if said, _ := tev.UserSaid(bg, "old-thread", "A-1"); said {
		t.Error("the old conversation's evidence survives Prune")
	}
	if said, _ := tev.UserSaid(bg, "kept-thread", "A-2"); !said {
		t.Error("Prune deleted, as a run's, the evidence of a conversation that goes on")
	}
}

// A statement waiting for the write lock another connection holds returns
// when ctx ends, well before the busy timeout.
func TestStatementTimeoutThroughContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openAt(t, path, &sqlite.Options{BusyTimeout: time.Hour})
	other := openAt(t, path, nil)
	tx, err := other.DB().BeginTx(bg, nil) // immediate: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	_, _, err = s.WriteLedger().Begin(ctx, "k", "w")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Begin while another connection holds the write lock, with a deadline = %v; want context.DeadlineExceeded", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.WriteLedger().Begin(bg, "k", "w"); err != nil || !ok {
		t.Fatalf("Begin after the lock was released = %v, %v; want a claim", ok, err)
	}
}

// A Settle whose statement fails is kept in the process and stored before
// the store's next Claim, and by Close, so the claim does not stay open to
// a takeover once the process has ended.
func TestClaims_FailedSettleIsRetried(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, via := range []string{"claim", "close"} {
		t.Run(via, func(t *testing.T) {
			second := open(t, nil)
			first := openAt(t, second.Path(), nil)
			if ok, err := first.Claims().Claim(ctx, "run", "s1"); err != nil || !ok {
				t.Fatalf("Claim = %v, %v; want true", ok, err)
			}
			if err := first.Claims().Settle(cancelled, "run", "s1"); err == nil {
				t.Fatal("Settle with a cancelled context = nil; want an error")
			}
			switch via {
			case "claim":
				if _, err := first.Claims().Claim(ctx, "run", "s2"); err != nil {
					t.Fatal(err)
				}
				var settled bool
				if err := second.DB().QueryRow(`SELECT settled FROM reactguard_claims WHERE run = CAST('run' AS BLOB) AND id = CAST('s1' AS BLOB)`).Scan(&settled); err != nil || !settled {
					t.Fatalf("settled after the next Claim = %v, %v; want true", settled, err)
				}
			case "close":
				if err := first.Close(); err != nil {
					t.Fatal(err)
				}
				if ok, err := second.Claims().Claim(ctx, "run", "s1"); err != nil || ok {
					t.Fatalf("Claim of the ended store's claim = %v, %v; want false (Close settled it)", ok, err)
				}
			}
		})
	}
}

// The write ledger consumes approvals in one operation only with its own
// Store's Approvals: another Store's (even on the same database) or any
// other Approvals store gets Begin and Consume, as before.
func TestWriteLedger_ConsumesFromItsOwnStoreOnly(t *testing.T) {
	s, other := open(t, nil), open(t, nil)
	for _, tt := range []struct {
		name string
		a    guard.Approvals
		want bool
	}{
		{"its own Store's", s.Approvals(), true},
		{"another Store's", other.Approvals(), false},
		{"in memory", guard.NewMemoryApprovals(), false},
		{"nil", nil, false},
	} {
		if got := s.WriteLedger().ConsumesFrom(tt.a); got != tt.want {
			t.Errorf("ConsumesFrom(%s Approvals) = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// fill writes n evidence records of run through s.
func fill(t testing.TB, s *sqlite.Store, run string, n int) {
	t.Helper()
	for i := range n {
		r := evidence.Record{CallID: fmt.Sprintf("c%d", i), Tool: "t", Outcome: outcome.Success, Attempt: 1,
			Payload: []byte(fmt.Sprintf(`{"id":"%d","text":"%s"}`, i, strings.Repeat("x", 200)))}
		if err := s.Evidence().Append(bg, run, r); err != nil {
			t.Fatal(err)
		}
	}
}

// Open refuses a damaged file (quick_check) with ErrCorrupt, naming what
// is wrong, rather than fail in the middle of a run later.
func TestOpen_RefusesADamagedFile(t *testing.T) {
	for _, tt := range []struct {
		name      string
		from, len int
	}{
		{"torn pages", 8 * 4096, 4 * 4096},  // a few pages past the header, as a torn copy does
		{"one page's header", 10 * 4096, 8}, // quick_check reads the file and reports the page
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			s, err := sqlite.Open(bg, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(bg); err != nil {
				t.Fatal(err)
			}
			fill(t, s, "r", 300)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 16*4096 {
				t.Fatalf("the file has %d bytes; want more pages to damage", len(b))
			}
			for i := tt.from; i < tt.from+tt.len; i++ {
				b[i] = byte(i * 7)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = sqlite.Open(bg, path, nil)
			if !errors.Is(err, sqlite.ErrCorrupt) || !errors.Is(err, sqlite.ErrOpen) {
				t.Fatalf("Open of a damaged file = %v; want ErrCorrupt and ErrOpen", err)
			}
			t.Log(err)
		})
	}
}

// Backup copies the database while writers go on: the copy opens (its
// quick_check passes), holds at least everything committed before the
// backup began, and is a database of its own.
func TestBackup_UnderLoad(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "state.db"), nil)
	fill(t, s, "before", 200)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var written [4]int
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := evidence.Record{CallID: fmt.Sprintf("c%d", i), Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"x"}`)}
				if err := s.Evidence().Append(bg, fmt.Sprintf("during-%d", w), r); err != nil {
					t.Error(err)
					return
				}
				if _, _, err := s.WriteLedger().Begin(bg, fmt.Sprintf("k-%d-%d", w, i), "w"); err != nil {
					t.Error(err)
					return
				}
				written[w] = i + 1
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	copyPath := filepath.Join(dir, "copy.db")
	if err := s.Backup(bg, copyPath); err != nil {
		t.Fatalf("Backup under load = %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err := s.Backup(bg, copyPath); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Backup over an existing file = %v; want os.ErrExist", err)
	}
	c := openAt(t, copyPath, nil)
	recs, err := c.Evidence().Records(bg, "before")
	if err != nil || len(recs) != 200 {
		t.Fatalf("the copy holds %d records of the run written before the backup, %v; want 200", len(recs), err)
	}
	during := 0
	for w := range 4 {
		rs, err := c.Evidence().Records(bg, fmt.Sprintf("during-%d", w))
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) > written[w] {
			t.Fatalf("the copy holds %d records of writer %d, which wrote %d", len(rs), w, written[w])
		}
		during += len(rs)
	}
	t.Logf("writers wrote %v records; the copy holds %d of them", written, during)
	fill(t, c, "after", 1)
	if rs, _ := s.Evidence().Records(bg, "after"); len(rs) != 0 {
		t.Fatal("a write to the copy reached the original")
	}
}

// Retention keeps what a snapshot within SnapshotMaxAge needs, and past it
// the snapshot is refused as expired (fake clock shared by the store and
// the loop).
func TestPrune_KeepsWhatAValidSnapshotNeeds(t *testing.T) {
	storetest.Retention(t, func(t *testing.T, now func() time.Time) (storetest.Stores, storetest.Pruner) {
		s := open(t, &sqlite.Options{Now: now})
		return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
				Claims: s.Claims(), Runs: s.Runs(), Close: func() { _ = s.Close() }},
			func(ctx context.Context, before time.Time) error { _, err := s.Prune(ctx, before); return err }
	})
}

// The pool holds one connection by default (measured: see
// Options.MaxOpenConns), and the option's value otherwise.
func TestOpen_PoolSize(t *testing.T) {
	for _, tt := range []struct{ set, want int }{{0, sqlite.DefaultMaxOpenConns}, {4, 4}} {
		s := open(t, &sqlite.Options{MaxOpenConns: tt.set})
		if got := s.DB().Stats().MaxOpenConnections; got != tt.want {
			t.Errorf("MaxOpenConns %d: the pool holds up to %d connections; want %d", tt.set, got, tt.want)
		}
	}
	if sqlite.DefaultMaxOpenConns != 1 {
		t.Errorf("DefaultMaxOpenConns = %d; want 1 (measured in BenchmarkRuns)", sqlite.DefaultMaxOpenConns)
	}
}

// The save or delete of a claimed run settles its claim, and a Release
// after it keeps the claim settled (see storetest.SettledByRuns).
func TestClaims_SettledByRunsStaysSettled(t *testing.T) {
	s := open(t, nil)
	storetest.SettledByRuns(t, storetest.Stores{Claims: s.Claims(), Runs: s.Runs()})
}

// Prune is one transaction: when a step fails (here a conversation's turns
// cannot be deleted), it returns the error and deletes nothing, neither the
// settled writes nor the conversation it had begun to delete.
func TestPrune_AllOrNothing(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	s := open(t, &sqlite.Options{Now: func() time.Time { return now }})
	wl, th := s.WriteLedger(), s.Threads()
	if err := wl.Finish(bg, guard.WriteRecord{Key: "ok", Tool: "w", State: guard.WriteSucceeded}); err != nil {
		t.Fatal(err)
	}
	_, tok, err := th.Acquire(bg, "old-thread", runstore.Owner{}, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := th.Commit(bg, "old-thread", tok, threadstore.Turn{Index: 1, Run: "r1", Content: []byte("t")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(bg, `CREATE TRIGGER keep_turns BEFORE DELETE ON reactguard_thread_turns BEGIN SELECT RAISE(ABORT, 'turns are kept'); END`); err != nil {
		t.Fatal(err)
	}
	now = now.Add(24 * time.Hour)
	p, err := s.Prune(bg, now.Add(-time.Hour))
	if err == nil || !strings.Contains(err.Error(), "turns are kept") || strings.Contains(err.Error(), "%!") {
		t.Fatalf("Prune with a step that fails = %+v, %v; want the step's error, cleanly worded", p, err)
	}
	if _, ok, err := wl.Get(bg, "ok"); err != nil || !ok {
		t.Errorf("settled write after the failed Prune: kept %v, %v; want kept (nothing deleted)", ok, err)
	}
	if _, ok, err := th.Get(bg, "old-thread"); err != nil || !ok {
		t.Errorf("conversation after the failed Prune: kept %v, %v; want kept (nothing deleted)", ok, err)
	}
}

// A Finish whose statement fails (here a trigger refuses it, as a full
// disk would) returns the error and keeps the record in the process: the
// next Get stores it, once, so the key reads as finished, and a later claim
// of the key is not overwritten by that record again. For a record with a
// claim's token and for one without (an upsert).
func TestWriteLedger_FailedFinishIsStoredLater(t *testing.T) {
	s := open(t, nil)
	wl, db := s.WriteLedger(), s.DB()
	refuse := func(on bool) {
		t.Helper()
		q := `DROP TRIGGER refuse_finish`
		if on {
			q = `CREATE TRIGGER refuse_finish BEFORE UPDATE ON reactguard_writes WHEN NEW.state IN (2, 3) BEGIN SELECT RAISE(ABORT, 'disk full'); END`
		}
		if _, err := db.ExecContext(bg, q); err != nil {
			t.Fatal(err)
		}
	}
	get := func(key string, want guard.WriteState, result string) {
		t.Helper()
		rec, ok, err := wl.Get(bg, key)
		if err != nil || !ok || rec.State != want || string(rec.Result) != result {
			t.Fatalf("Get(%s) = %+v, %v, %v; want state %v, result %q", key, rec, ok, err, want, result)
		}
	}
	for _, tokened := range []bool{true, false} {
		key := fmt.Sprintf("failed-finish/%v", tokened)
		rec, ok, err := wl.Begin(bg, key, "w")
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if !tokened {
			rec.Token = 0
		}
		refuse(true)
		rec.State, rec.Result = guard.WriteFailed, []byte(`{"refused":1}`)
		if err := wl.Finish(bg, rec); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("Finish refused by the database = %v; want its error", err)
		}
		refuse(false)
		get(key, guard.WriteFailed, `{"refused":1}`)
		// The failed write may be claimed again; the record kept from the
		// failed Finish is not stored over the new claim.
		if _, ok, err := wl.Begin(bg, key, "w"); err != nil || !ok {
			t.Fatalf("Begin of the failed key = %v, %v; want a new claim", ok, err)
		}
		get(key, guard.WriteRunning, "")
		get(key, guard.WriteRunning, "")
	}
}
