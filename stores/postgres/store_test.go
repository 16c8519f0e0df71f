package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/facts"
	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/stores/postgres"
	"github.com/reactguard/reactguard/threadstore"
)

var bg = context.Background()

func TestOpen_UnreachableNamesTheAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	// Port 1 on the loopback: nothing listens there.
	_, err := postgres.Open(ctx, "postgres://u:p@127.0.0.1:1/db?connect_timeout=5", nil)
	if !errors.Is(err, postgres.ErrUnreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Open(unreachable) = %v; want ErrUnreachable naming 127.0.0.1:1", err)
	}
	if _, err := postgres.Open(ctx, "::not a dsn::", nil); err == nil {
		t.Fatal("Open(invalid dsn) = nil; want an error")
	}
}

func TestMigrate_IdempotentAndConcurrent(t *testing.T) {
	d := freshSchema(t)
	const procs = 6
	stores := make([]*postgres.Store, procs)
	for i := range stores {
		s, err := postgres.Open(bg, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
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
			t.Fatalf("concurrent Migrate #%d = %v; want nil (they take turns)", i, err)
		}
	}
	if err := stores[0].Migrate(bg); err != nil {
		t.Fatalf("Migrate again = %v; want nil (idempotent)", err)
	}
	var n, v int
	if err := stores[0].Pool().QueryRow(bg, `SELECT count(*), max(version) FROM reactguard_schema`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != postgres.SchemaVersion || v != postgres.SchemaVersion {
		t.Fatalf("reactguard_schema holds %d rows up to version %d; want each of the %d versions once", n, v, postgres.SchemaVersion)
	}
}

// Migrate takes its turn under an advisory lock on a connection of the
// pool, and gives both back: the connection, unlocked, returns to the pool
// (with one connection in the pool, the session after Migrate is the one
// before it, and it holds no advisory lock). Closing the connection would
// free the lock too, but costs the pool a connection at every Migrate;
// Migrate closes it only when the unlock failed.
func TestMigrate_ReleasesItsLockAndConnection(t *testing.T) {
	d := freshSchema(t)
	s, err := postgres.Open(bg, withParam(d, "pool_max_conns", "1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, why := range []string{"the first Migrate applies every migration", "Migrate again applies nothing"} {
		before := backend(t, s.Pool())
		if err := s.Migrate(bg); err != nil {
			t.Fatalf("%s: Migrate = %v", why, err)
		}
		if after := backend(t, s.Pool()); after != before {
			t.Errorf("%s: the pool's one connection is session %d after Migrate, %d before; want the same (returned, not closed)", why, after, before)
		}
		var held int
		if err := s.Pool().QueryRow(bg, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if held != 0 {
			t.Errorf("%s: the pool's connection still holds %d advisory locks after Migrate returned; want none", why, held)
		}
	}
}

func TestSchema_NewerIsRefused(t *testing.T) {
	d := freshSchema(t)
	s, err := postgres.Open(bg, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(bg, `INSERT INTO reactguard_schema (version, name) VALUES ($1, 'from the future')`, postgres.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(bg); !errors.Is(err, postgres.ErrSchemaNewer) {
		t.Errorf("Migrate on a newer schema = %v; want ErrSchemaNewer", err)
	}
	s.Close()
	if _, err := postgres.Open(bg, d, nil); !errors.Is(err, postgres.ErrSchemaNewer) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", postgres.SchemaVersion+1)) {
		t.Errorf("Open on a newer schema = %v; want ErrSchemaNewer naming the version", err)
	}
}

// A database at version 1 with a resume claim in it migrates to the
// current version: the old claim reads as taken and not settled, so the
// claim of a process that died before the upgrade is taken over, once.
func TestSchema_UpgradeFromVersion1(t *testing.T) {
	d := freshSchema(t)
	conn, err := pgx.Connect(bg, d)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(bg) }()
	migrateTo(t, conn, 1)
	for _, q := range []string{
		`INSERT INTO reactguard_claims (run, id, owner, at) VALUES ('run-old', 's1', 4242, now())`, // no session holds lock 4242
		// Evidence as version 1 kept it: the record, its facts in a table.
		`INSERT INTO reactguard_records (run, call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round)
			VALUES ('run-old', 'c1', 1, 't', 'fp1', 1, 0, '{"id":"x"}', '', 1)`,
	} {
		if _, err := conn.Exec(bg, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range facts.Of("t", []byte(`{"id":"x"}`)) {
		if _, err := conn.Exec(bg, `INSERT INTO reactguard_facts (run, h) VALUES ('run-old', $1)`, h); err != nil {
			t.Fatal(err)
		}
	}
	s := upgraded(t, d, 1)
	var v int
	if err := conn.QueryRow(bg, `SELECT max(version) FROM reactguard_schema`).Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Fatalf("schema version after Migrate = %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
	// The old run's evidence answers lookups after the upgrade.
	if has, err := s.Evidence().HasValue(bg, "run-old", "t", "id", "x"); err != nil || !has {
		t.Fatalf("HasValue of a version-1 record = %v, %v; want true", has, err)
	}
	if n, r, err := s.Evidence().Executions(bg, "run-old", "fp1"); err != nil || n != 1 || r.CallID != "c1" {
		t.Fatalf("Executions of a version-1 record = %d, %+v, %v; want 1, c1", n, r, err)
	}
	for i, want := range []bool{true, false} {
		ok, err := s.Claims().Claim(bg, "run-old", "s1")
		if err != nil || ok != want {
			t.Fatalf("Claim #%d of a version-1 claim whose owner is gone = %v, %v; want %v", i+1, ok, err, want)
		}
	}
}

func TestSchema_OlderSaysMigrate(t *testing.T) {
	s, err := postgres.Open(bg, freshSchema(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Approvals().Gated(bg, "r"); !errors.Is(err, postgres.ErrSchemaOlder) {
		t.Fatalf("Gated before Migrate = %v; want ErrSchemaOlder", err)
	}
}

// Strings from a model or a user may hold NUL bytes and invalid UTF-8,
// which PostgreSQL text refuses: the store keeps them byte for byte.
func TestStrings_AnyBytesRoundTrip(t *testing.T) {
	s := open(t, nil)
	weird := "nul\x00 and \xff\xfe bad utf-8 " + t.Name()
	c := guard.GatedCall{CallID: weird, Tool: "w\x00", Args: []byte("{\"a\":\"\x00\"}"), Fingerprint: "fp", Round: 1}
	if err := s.Approvals().Gate(bg, weird, c); err != nil {
		t.Fatalf("Gate with NUL bytes = %v", err)
	}
	got, ok, err := s.Approvals().Gated(bg, weird)
	if err != nil || !ok || got.CallID != weird || got.Tool != c.Tool || !bytes.Equal(got.Args, c.Args) {
		t.Fatalf("Gated = %+v, %v, %v; want the call byte for byte", got, ok, err)
	}
	if err := s.Approvals().Approve(bg, weird, weird, "fp"); err != nil {
		t.Fatalf("Approve = %v", err)
	}
	ev := s.Evidence()
	if err := ev.AddUserText(bg, weird, weird); err != nil {
		t.Fatal(err)
	}
	if err := ev.Append(bg, weird, evidence.Record{CallID: weird, Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"a\u0000b"}`)}); err != nil {
		t.Fatalf("Append with NUL bytes = %v", err)
	}
	if has, err := ev.HasValue(bg, weird, "t", "id", "a\x00b"); err != nil || !has {
		t.Fatalf("HasValue(a\\x00b) = %v, %v; want true", has, err)
	}
	r := runstore.Run{ID: weird, Node: "n\x00", Kind: runstore.FollowUp, Owner: runstore.Owner{Tenant: "t\x00", User: "ü\x00"}, Snapshot: []byte{0, 1, 0xff}, Stopped: time.Now()}
	if err := s.Runs().Save(bg, r); err != nil {
		t.Fatalf("Save with NUL bytes = %v", err)
	}
	back, ok, err := s.Runs().Get(bg, weird)
	if err != nil || !ok || back.Owner != r.Owner || back.Node != r.Node || !bytes.Equal(back.Snapshot, r.Snapshot) {
		t.Fatalf("Get = %+v, %v, %v; want the run byte for byte", back, ok, err)
	}
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := open(t, &postgres.Options{Now: clock})
	run := "prune/" + t.Name()
	wl, ap, ev, cl := s.WriteLedger(), s.Approvals(), s.Evidence(), s.Claims()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Old state, written at now.
	for _, k := range []struct {
		key   string
		state guard.WriteState
	}{{"ok", guard.WriteSucceeded}, {"failed", guard.WriteFailed}, {"uncertain", guard.WriteUncertain}} {
		must(wl.Finish(bg, guard.WriteRecord{Key: run + k.key, Tool: "w", State: k.state}))
	}
	_, _, err := wl.Begin(bg, run+"running", "w")
	must(err)
	must(ap.Gate(bg, run, guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	granted := run + "/granted" // an approval granted and never used
	must(ap.Gate(bg, granted, guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	must(ap.Approve(bg, granted, "c1", "fp"))
	_, err = cl.Claim(bg, run, "snap")
	must(err)
	must(ev.Append(bg, run, evidence.Record{CallID: "c1", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"x"}`)}))
	must(s.Runs().Save(bg, runstore.Run{ID: run, Kind: runstore.Interrupted, Snapshot: []byte("{}"), Stopped: now}))

	// Two conversations: one nobody writes to again, one continued later;
	// both have evidence written now, which is a thread's, not a run's.
	th, tev := s.Threads(), s.Threads().Evidence()
	oldThread, keptThread := run+"/old-thread", run+"/kept-thread"
	_, oldTok, err := th.Acquire(bg, oldThread, runstore.Owner{}, "r1")
	must(err)
	must(th.Commit(bg, oldThread, oldTok, threadstore.Turn{Index: 1, Run: "r1", Content: []byte("t")}, nil))
	must(tev.AddUserText(bg, oldThread, "order A-1"))
	must(tev.AddUserText(bg, keptThread, "order A-2"))
	_, keptTok, err := th.Acquire(bg, keptThread, runstore.Owner{}, "r2")
	must(err)

	// A day later, fresh state of another run.
	now = now.Add(24 * time.Hour)
	must(th.Commit(bg, keptThread, keptTok, threadstore.Turn{Index: 1, Run: "r2", Content: []byte("t")}, nil))
	fresh := run + "/fresh"
	must(ev.Append(bg, fresh, evidence.Record{CallID: "c1", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"y"}`)}))
	_, err = cl.Claim(bg, fresh, "snap")
	must(err)

	p, err := s.Prune(bg, now.Add(-time.Hour))
	must(err)
	if p.Writes < 2 || p.Runs < 1 || p.Claims < 1 || p.Approvals < 1 || p.Evidence < 1 || p.Threads < 1 {
		t.Fatalf("Prune = %+v; want the settled writes, the run, the claim, the approval, the evidence and the thread pruned", p)
	}
	if ok, err := ap.Consume(bg, granted, "fp"); err != nil || ok {
		t.Errorf("Consume of the old unused approval after Prune = %v, %v; want it pruned", ok, err)
	}
	if _, ok, _ := th.Get(bg, oldThread); ok {
		t.Error("the old conversation survives Prune")
	}
	if said, _ := tev.UserSaid(bg, oldThread, "A-1"); said {
		t.Error("the old conversation's evidence survives Prune")
	}
	if said, _ := tev.UserSaid(bg, keptThread, "A-2"); !said {
		t.Error("Prune deleted, as a run's, the evidence of a conversation that goes on")
	}
	for _, k := range []struct {
		key  string
		kept bool
	}{{"ok", false}, {"failed", false}, {"uncertain", true}, {"running", true}} {
		_, ok, err := wl.Get(bg, run+k.key)
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
	if has, _ := ev.HasValue(bg, fresh, "t", "id", "y"); !has {
		t.Error("Prune deleted the evidence of a fresh run")
	}
	if ok, _ := cl.Claim(bg, run, "snap"); !ok {
		t.Error("the old claim survives Prune")
	}
	if ok, _ := cl.Claim(bg, fresh, "snap"); ok {
		t.Error("Prune deleted a fresh claim")
	}
}

// A statement blocked on a row lock returns when ctx ends: the store
// honours the caller's deadline, the statement ends on the server too (no
// statement of the store waits for the lock after Begin returned: else the
// server would claim the key once the lock is released, for a Begin whose
// caller was told it failed), and the connection, its statement cancelled
// by a cancel request, stays in the pool rather than being dropped.
func TestStatementTimeoutThroughContext(t *testing.T) {
	name := fmt.Sprintf("reactguard-timeout-%d", os.Getpid())
	s, err := postgres.Open(bg, withParam(withParam(dsn(t), "application_name", name), "pool_max_conns", "2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	// The pool's two connections, both open before Begin.
	sessions := map[int32]bool{}
	var held []*pgxpool.Conn
	for range 2 {
		c, err := s.Pool().Acquire(bg)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		sessions[backend(t, c)] = true
	}
	for _, c := range held {
		c.Release()
	}
	key := "timeout/" + t.Name()
	if err := s.WriteLedger().Finish(bg, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteFailed}); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Pool().Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(bg) //nolint:errcheck
	if _, err := tx.Exec(bg, `SELECT 1 FROM reactguard_writes WHERE key = $1 FOR UPDATE`, []byte(key)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	_, _, err = s.WriteLedger().Begin(ctx, key, "w")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Begin on a locked row with a deadline = %v; want context.DeadlineExceeded", err)
	}
	for wait := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var waiting int
		if err := tx.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, name).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			break
		}
		if time.Now().After(wait) {
			t.Fatalf("5 s after Begin returned, %d statements of the store still wait for the row's lock on the server; want none (cancelled with the context)", waiting)
		}
	}
	c, err := s.Pool().Acquire(bg) // the one the transaction does not hold
	if err != nil {
		t.Fatal(err)
	}
	if p := backend(t, c); !sessions[p] || p == backend(t, tx) {
		t.Errorf("after the cancelled Begin the pool's free connection is session %d, not one of %v: Begin's connection was dropped; want it kept", p, sessions)
	}
	c.Release()
	if err := tx.Rollback(bg); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		t.Fatal(err)
	}
	if _, ok, err := s.WriteLedger().Begin(bg, key, "w"); err != nil || !ok {
		t.Fatalf("Begin after the lock was released = %v, %v; want a claim (the store recovered)", ok, err)
	}
}

// A Settle whose statement fails is kept in the process and stored before
// the store's next Claim, and by Close, so the claim does not stay open to
// a takeover once the process has ended.
// backend returns the server process id of q's session.
func backend(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) int32 {
	t.Helper()
	var p int32
	if err := q.QueryRow(bg, `SELECT pg_backend_pid()`).Scan(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClaims_FailedSettleIsRetried(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, via := range []string{"claim", "close"} {
		t.Run(via, func(t *testing.T) {
			name := "reactguard-settle-" + via
			first, err := postgres.Open(ctx, withParam(dsn(t), "application_name", name), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			second := open(t, nil)
			run := "settle-retry-" + via + "-" + time.Now().Format("150405.000000")
			if ok, err := first.Claims().Claim(ctx, run, "s1"); err != nil || !ok {
				t.Fatalf("Claim = %v, %v; want true", ok, err)
			}
			if err := first.Claims().Settle(cancelled, run, "s1"); err == nil {
				t.Fatal("Settle with a cancelled context = nil; want an error")
			}
			switch via {
			case "claim":
				if _, err := first.Claims().Claim(ctx, run, "s2"); err != nil {
					t.Fatal(err)
				}
				var settled bool
				if err := second.Pool().QueryRow(ctx, `SELECT settled FROM reactguard_claims WHERE run = $1 AND id = 's1'`, []byte(run)).Scan(&settled); err != nil || !settled {
					t.Fatalf("settled after the next Claim = %v, %v; want true", settled, err)
				}
			case "close":
				first.Close() // deletes its lease: its unsettled claims could be taken at once
				if ok, err := second.Claims().Claim(ctx, run, "s1"); err != nil || ok {
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

// A migration applied outside Migrate (by hand, half-way) is detected: the
// error names the object, says what to do, and nothing is changed; once the
// half-applied object is dropped, Migrate completes.
func TestMigrate_HalfAppliedIsExplained(t *testing.T) {
	d := freshSchema(t)
	s, err := postgres.Open(bg, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(bg, d)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(bg) }()
	if _, err := conn.Exec(bg, `CREATE TABLE reactguard_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"0001_init.sql", "0002_settled_claims.sql", "0003_owners_audit.sql"} {
		b, err := os.ReadFile("migrations/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(bg, string(b)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(bg, `INSERT INTO reactguard_schema (version, name) VALUES (1, '0001_init.sql'), (2, '0002_settled_claims.sql'), (3, '0003_owners_audit.sql')`); err != nil {
		t.Fatal(err)
	}
	// The first statement of migration 4, run by hand.
	if _, err := conn.Exec(bg, `CREATE TABLE reactguard_leases (owner bigint PRIMARY KEY, expires timestamptz NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	err = s.Migrate(bg)
	if !errors.Is(err, postgres.ErrSchemaPartial) {
		t.Fatalf("Migrate over a half-applied migration = %v; want ErrSchemaPartial", err)
	}
	for _, want := range []string{"reactguard_leases", "0004_leases.sql", "INSERT INTO reactguard_schema", "drop"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	var v int
	if err := conn.QueryRow(bg, `SELECT max(version) FROM reactguard_schema`).Scan(&v); err != nil || v != 3 {
		t.Fatalf("schema version after the refused migration = %d, %v; want 3 (nothing changed)", v, err)
	}
	if _, err := conn.Exec(bg, `DROP TABLE reactguard_leases`); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(bg); err != nil {
		t.Fatalf("Migrate after the repair = %v", err)
	}
}

// Retention keeps what a snapshot within SnapshotMaxAge needs, and past it
// the snapshot is refused as expired (fake clock shared by the store and
// the loop).
func TestPrune_KeepsWhatAValidSnapshotNeeds(t *testing.T) {
	storetest.Retention(t, func(t *testing.T, now func() time.Time) (storetest.Stores, storetest.Pruner) {
		s := open(t, &postgres.Options{Now: now})
		return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
				Claims: s.Claims(), Runs: s.Runs(), Close: s.Close},
			func(ctx context.Context, before time.Time) error { _, err := s.Prune(ctx, before); return err }
	})
}

// The save or delete of a claimed run settles its claim, and a Release
// after it keeps the claim settled (see storetest.SettledByRuns).
func TestClaims_SettledByRunsStaysSettled(t *testing.T) {
	s := open(t, nil)
	storetest.SettledByRuns(t, storetest.Stores{Claims: s.Claims(), Runs: s.Runs()})
}

// ClaimDecided answers as Claim followed by Record and Approve or Decline
// would (react.ClaimDecider): a decision on a call that does not wait, or
// waits with another fingerprint, is refused with ErrNotPending, one on a
// suspension the audit holds another kind of decision on with
// ErrDecidedOtherwise; each claims, records and decides nothing.
func TestClaimDecided_Refusals(t *testing.T) {
	s := open(t, nil)
	cl, ap, au := s.Claims(), s.Approvals(), s.Audit()
	call := guard.GatedCall{CallID: "c1", Tool: "w", Args: []byte(`{"n":1}`), Fingerprint: "fp-1", Round: 1}
	decision := func(run string, kind runstore.DecisionKind, fp string) runstore.Decision {
		return runstore.Decision{Run: run, Suspension: "s1", Kind: kind, CallID: call.CallID, Tool: call.Tool, Fingerprint: fp, By: "alice", At: time.Now()}
	}
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, run string)
		d     func(run string) runstore.Decision
		want  error
	}{
		{"no call waits", func(*testing.T, string) {}, func(run string) runstore.Decision { return decision(run, runstore.Approved, call.Fingerprint) }, guard.ErrNotPending},
		{"another fingerprint", func(t *testing.T, run string) {
			if err := ap.Gate(bg, run, call); err != nil {
				t.Fatal(err)
			}
		}, func(run string) runstore.Decision { return decision(run, runstore.Approved, "fp-other") }, guard.ErrNotPending},
		{"declined in the audit", func(t *testing.T, run string) {
			if err := ap.Gate(bg, run, call); err != nil {
				t.Fatal(err)
			}
			if _, _, err := au.Record(bg, decision(run, runstore.Declined, "")); err != nil {
				t.Fatal(err)
			}
		}, func(run string) runstore.Decision { return decision(run, runstore.Approved, call.Fingerprint) }, runstore.ErrDecidedOtherwise},
		// A snapshot resumed and settled already answers false, nil,
		// whatever the decision: the resume that took it is the answer.
		{"settled, no call waits", func(t *testing.T, run string) {
			if ok, err := cl.Claim(bg, run, "s1"); err != nil || !ok {
				t.Fatal(ok, err)
			}
			if err := cl.Settle(bg, run, "s1"); err != nil {
				t.Fatal(err)
			}
		}, func(run string) runstore.Decision { return decision(run, runstore.Approved, call.Fingerprint) }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := "claim-decided/" + t.Name()
			tt.setup(t, run)
			ok, err := cl.ClaimDecided(bg, tt.d(run))
			if ok || !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("ClaimDecided = %v, %v; want false and %v", ok, err, tt.want)
			}
			if used, err := ap.Consume(bg, run, call.Fingerprint); err != nil || used {
				t.Fatalf("Consume = %v, %v; want no approval granted", used, err)
			}
			if tt.want == nil {
				return
			}
			// Nothing was claimed: the snapshot is free for a plain Claim.
			if ok, err := cl.Claim(bg, run, "s1"); err != nil || !ok {
				t.Fatalf("Claim after the refused ClaimDecided = %v, %v; want the snapshot free", ok, err)
			}
		})
	}
}

// A host that goes on using a closed Store gets errors, never a panic:
// Settle of a claim it does not hold (no lease is held once closed),
// Claim, Begin and Finish.
func TestClosedStore_AnswersErrors(t *testing.T) {
	s, err := postgres.Open(bg, dsn(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"Settle", func() error { return s.Claims().Settle(bg, "closed-run", "s1") }},
		{"Claim", func() error { _, err := s.Claims().Claim(bg, "closed-run", "s1"); return err }},
		{"Begin", func() error { _, _, err := s.WriteLedger().Begin(bg, "closed-key", "w"); return err }},
		{"Finish", func() error {
			return s.WriteLedger().Finish(bg, guard.WriteRecord{Key: "closed-key", Tool: "w", State: guard.WriteSucceeded})
		}},
	} {
		if err := tt.call(); err == nil {
			t.Errorf("%s on a closed Store = nil; want an error", tt.name)
		}
	}
}

// A save of a claimed run whose statement fails (here its context was
// cancelled; a lost connection does the same) is kept in the process and
// stored, with the claim's settlement, before the run is next settled here;
// once stored it is forgotten, so it never overwrites what another process
// saved of the run since.
func TestRuns_FailedSaveIsStoredLater(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	a, b := open(t, nil), open(t, nil)
	run := "failed-save-" + time.Now().Format("150405.000000")
	saved := func(snapshot string) runstore.Run {
		return runstore.Run{ID: run, Node: run, Kind: runstore.Approval, Snapshot: []byte(snapshot), Stopped: time.Now()}
	}
	if ok, err := a.Claims().Claim(ctx, run, "s1"); err != nil || !ok {
		t.Fatalf("Claim = %v, %v; want true", ok, err)
	}
	if err := a.Runs().Save(cancelled, saved(`{"by":"a"}`)); err == nil {
		t.Fatal("Save with a cancelled context = nil; want an error")
	}
	if err := a.Claims().Settle(ctx, run, "s1"); err != nil {
		t.Fatalf("Settle after the failed save = %v; want nil (the save stored first, settling the claim)", err)
	}
	if got, ok, err := a.Runs().Get(ctx, run); err != nil || !ok || string(got.Snapshot) != `{"by":"a"}` {
		t.Fatalf("Get after the settle = %s, %v, %v; want the kept save", got.Snapshot, ok, err)
	}
	if err := b.Runs().Save(ctx, saved(`{"by":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Runs().List(ctx, runstore.Filter{Node: run}); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Claims().Claim(ctx, run, "s2"); err != nil || !ok {
		t.Fatalf("Claim of the next snapshot = %v, %v; want true", ok, err)
	}
	if got, ok, err := b.Runs().Get(ctx, run); err != nil || !ok || string(got.Snapshot) != `{"by":"b"}` {
		t.Fatalf("Get = %s, %v, %v; want the other process's later save: the stored one is not saved again", got.Snapshot, ok, err)
	}
}

// The evidence read with a resume claim answers the resume's first Load
// only while nothing was written to the run since: FinishRecorded, which
// writes the write's evidence with its record, drops it, and the next Load
// reads the record.
func TestFinishRecorded_DropsTheClaimsEvidence(t *testing.T) {
	s := open(t, nil)
	run := "finish-recorded-prefetch-" + time.Now().Format("150405.000000")
	if ok, err := s.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("Claim = %v, %v; want true", ok, err)
	}
	wl := s.WriteLedger()
	rec, ok, err := wl.Begin(bg, "finish-recorded-prefetch/"+run, "w")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	rec.State, rec.Result = guard.WriteSucceeded, []byte(`{"id":"x"}`)
	r := evidence.Record{CallID: "c1", Tool: "w", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"x"}`)}
	if err := wl.FinishRecorded(bg, rec, run, r); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Evidence().Load(bg, run)
	if err != nil || len(snap.Records) != 1 || snap.Records[0].CallID != "c1" {
		t.Fatalf("Load after FinishRecorded = %+v, %v; want the write's record", snap, err)
	}
}

// A Finish whose statement fails (here its context was cancelled; a lost
// connection does the same) returns the error and keeps the record in the
// process: the next Get stores it, once, so the key reads as finished, and
// a later claim of the key is not overwritten by that record again. For a
// record with a claim's token and for one without (an upsert).
func TestWriteLedger_FailedFinishIsStoredLater(t *testing.T) {
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	s := open(t, nil)
	wl := s.WriteLedger()
	get := func(key string, want guard.WriteState, result string) {
		t.Helper()
		rec, ok, err := wl.Get(bg, key)
		if err != nil || !ok || rec.State != want || string(rec.Result) != result {
			t.Fatalf("Get(%s) = %+v, %v, %v; want state %v, result %q", key, rec, ok, err, want, result)
		}
	}
	for _, tokened := range []bool{true, false} {
		key := fmt.Sprintf("failed-finish/%v/%s", tokened, time.Now().Format("150405.000000"))
		rec, ok, err := wl.Begin(bg, key, "w")
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if !tokened {
			rec.Token = 0
		}
		rec.State, rec.Result = guard.WriteFailed, []byte(`{"refused":1}`)
		if err := wl.Finish(cancelled, rec); err == nil {
			t.Fatal("Finish with a cancelled context = nil; want an error")
		}
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

// A claim statement that the server applied but whose reply was lost
// leaves the key running under this Store's lease with no Begin here
// holding it: the next Begin of the key in this process takes it over (a
// claim, with the token the statement drew), so the write is not stuck in
// flight; another Store, whose lease is not the owner's, finds it running.
func TestWriteLedger_TakesOverItsOwnLostClaim(t *testing.T) {
	s, other := open(t, nil), open(t, nil)
	wl := s.WriteLedger()
	stamp := time.Now().Format("150405.000000")
	warm, key := "lost-claim/warm/"+stamp, "lost-claim/"+stamp
	if _, ok, err := wl.Begin(bg, warm, "w"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	var owner, token int64
	if err := s.Pool().QueryRow(bg, `SELECT owner FROM reactguard_writes WHERE key = $1`, []byte(warm)).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	// What the lost claim statement left behind.
	if err := s.Pool().QueryRow(bg, `INSERT INTO reactguard_writes (key, tool, state, owner, token, at)
		VALUES ($1, 'w', 1, $2, nextval('reactguard_fence'), now()) RETURNING token`, []byte(key), owner).Scan(&token); err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := other.WriteLedger().Begin(bg, key, "w"); err != nil || ok || rec.State != guard.WriteRunning {
		t.Fatalf("another Store's Begin = %+v, %v, %v; want the key running and not claimed", rec, ok, err)
	}
	rec, ok, err := wl.Begin(bg, key, "w")
	if err != nil || !ok || rec.State != guard.WriteRunning || rec.Token != uint64(token) {
		t.Fatalf("Begin of its own lost claim = %+v, %v, %v; want it claimed with token %d", rec, ok, err, token)
	}
	if again, ok, err := wl.Begin(bg, key, "w"); err != nil || ok || again.State != guard.WriteRunning {
		t.Fatalf("Begin while this process holds the claim = %+v, %v, %v; want it running and not claimed", again, ok, err)
	}
	rec.State, rec.Result = guard.WriteSucceeded, []byte(`{}`)
	if err := wl.Finish(bg, rec); err != nil {
		t.Fatalf("Finish of the taken-over claim = %v", err)
	}
}

// AddUserTextAndLoad stores the user's text with the run's evidence (a
// later reader, without this Store's memory, finds it a source) and
// returns the run's evidence with it; a blank text adds nothing.
func TestEvidence_AddUserTextAndLoadStoresTheText(t *testing.T) {
	s := open(t, nil)
	run := "user-text-and-load-" + time.Now().Format("150405.000000")
	snap, err := s.Evidence().AddUserTextAndLoad(bg, run, "my order is A-7")
	if err != nil || len(snap.UserTexts) != 1 || snap.UserTexts[0] != "my order is A-7" {
		t.Fatalf("AddUserTextAndLoad = %+v, %v; want the run's evidence with the text", snap, err)
	}
	if said, err := open(t, nil).Evidence().UserSaid(bg, run, "A-7"); err != nil || !said {
		t.Fatalf("UserSaid(A-7) from another Store = %v, %v; want the stored text", said, err)
	}
	snap, err = s.Evidence().AddUserTextAndLoad(bg, run, "  \n")
	if err != nil || len(snap.UserTexts) != 1 {
		t.Fatalf("AddUserTextAndLoad(blank) = %+v, %v; want the one text, nothing added", snap, err)
	}
}

// A ClaimDecided whose statement failed (here: cancelled by its context
// while the waiting call's row was locked, so nothing was applied) is
// made again in steps by the next ClaimDecided of the same suspension in
// the process: the snapshot claimed, the decision recorded, then applied.
// The same decision is applied (the approval granted once); a decision the
// audit meanwhile holds otherwise is refused with ErrDecidedOtherwise and
// grants nothing, and the snapshot is free again.
func TestClaimDecided_AfterItsStatementFailed(t *testing.T) {
	s := open(t, nil)
	cl, ap, au := s.Claims(), s.Approvals(), s.Audit()
	call := guard.GatedCall{CallID: "c1", Tool: "w", Args: []byte(`{"n":1}`), Fingerprint: "fp-1", Round: 1}
	decision := func(run string, kind runstore.DecisionKind) runstore.Decision {
		fp := call.Fingerprint
		if kind != runstore.Approved {
			fp = ""
		}
		return runstore.Decision{Run: run, Suspension: "s1", Kind: kind, CallID: call.CallID, Tool: call.Tool, Fingerprint: fp, By: "alice", At: time.Now()}
	}
	// failOnce gates the call and makes one ClaimDecided of it fail.
	failOnce := func(t *testing.T, run string) {
		t.Helper()
		if err := ap.Gate(bg, run, call); err != nil {
			t.Fatal(err)
		}
		tx, err := s.Pool().Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(bg) //nolint:errcheck
		if _, err := tx.Exec(bg, `SELECT 1 FROM reactguard_gated WHERE run = $1 FOR UPDATE`, []byte(run)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
		defer cancel()
		if ok, err := cl.ClaimDecided(ctx, decision(run, runstore.Approved)); ok || err == nil {
			t.Fatalf("ClaimDecided on a locked row with a deadline = %v, %v; want it to fail", ok, err)
		}
	}
	t.Run("the same decision", func(t *testing.T) {
		run := "claim-decided-again/" + t.Name() + unique()
		failOnce(t, run)
		ok, err := cl.ClaimDecided(bg, decision(run, runstore.Approved))
		if err != nil || !ok {
			t.Fatalf("ClaimDecided again = %v, %v; want the snapshot claimed and the decision applied", ok, err)
		}
		if used, err := ap.Consume(bg, run, call.Fingerprint); err != nil || !used {
			t.Fatalf("Consume = %v, %v; want the approval granted", used, err)
		}
		if used, err := ap.Consume(bg, run, call.Fingerprint); err != nil || used {
			t.Fatalf("Consume again = %v, %v; want one approval, not two", used, err)
		}
		if _, waiting, err := ap.Gated(bg, run); err != nil || waiting {
			t.Fatalf("Gated = %v, %v; want the call no longer waiting", waiting, err)
		}
	})
	t.Run("declined meanwhile", func(t *testing.T) {
		run := "claim-decided-again/" + t.Name() + unique()
		failOnce(t, run)
		if _, _, err := au.Record(bg, decision(run, runstore.Declined)); err != nil {
			t.Fatal(err)
		}
		ok, err := cl.ClaimDecided(bg, decision(run, runstore.Approved))
		if ok || !errors.Is(err, runstore.ErrDecidedOtherwise) {
			t.Fatalf("ClaimDecided again = %v, %v; want false and ErrDecidedOtherwise", ok, err)
		}
		if used, err := ap.Consume(bg, run, call.Fingerprint); err != nil || used {
			t.Fatalf("Consume = %v, %v; want no approval granted", used, err)
		}
		if ok, err := cl.Claim(bg, run, "s1"); err != nil || !ok {
			t.Fatalf("Claim after the refused ClaimDecided = %v, %v; want the snapshot free", ok, err)
		}
	})
}

// A save that failed, and failed again when the Store next tried it (a
// List whose context had ended), stays kept: the next try with a live
// context stores it before the claim it settles.
func TestRuns_FailedSaveFailingAgainStays(t *testing.T) {
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	s := open(t, nil)
	run := "failed-twice-" + time.Now().Format("150405.000000")
	if ok, err := s.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("Claim = %v, %v; want true", ok, err)
	}
	if err := s.Runs().Save(cancelled, runstore.Run{ID: run, Node: run, Kind: runstore.Approval, Snapshot: []byte(`{"n":1}`), Stopped: time.Now()}); err == nil {
		t.Fatal("Save with a cancelled context = nil; want an error")
	}
	if _, err := s.Runs().List(cancelled, runstore.Filter{Node: run}); err == nil {
		t.Fatal("List with a cancelled context = nil; want an error (the kept save failed again)")
	}
	if err := s.Claims().Settle(bg, run, "s1"); err != nil {
		t.Fatalf("Settle = %v; want nil (the kept save stored first)", err)
	}
	if got, ok, err := s.Runs().Get(bg, run); err != nil || !ok || string(got.Snapshot) != `{"n":1}` {
		t.Fatalf("Get = %s, %v, %v; want the save that failed twice", got.Snapshot, ok, err)
	}
}
