package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/stores/postgres"
	"github.com/reactguard/reactguard/threadstore"
)

// terminate ends every server session whose application_name is name, as
// a server restart or a failover ends a client's sessions.
func terminate(t *testing.T, name string) int {
	t.Helper()
	conn, err := pgx.Connect(bg, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(bg) }()
	var n int
	if err := conn.QueryRow(bg, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) t`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The first failure: the sessions of process A are terminated (as
// a restart or a failover does) while A is inside an approved write. A's
// lease outlives its sessions, so another process finds the write in
// flight and A's resume claim taken, not takeable; A's work is not
// cancelled, and A records its result once it reconnects.
func TestLease_SurvivesTerminatedSessions(t *testing.T) {
	storetest.SkipShort(t, "sessions ended while a lease outlives them")
	name := "reactguard-lease-a"
	a, err := postgres.Open(bg, withParam(dsn(t), "application_name", name), &postgres.Options{Lease: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := open(t, nil)
	key, run := "lease-terminated/"+t.Name(), "lease-run/"+t.Name()
	rec, ok, err := a.WriteLedger().Begin(bg, key, "w")
	if err != nil || !ok {
		t.Fatalf("A.Begin = %v, %v; want a claim", ok, err)
	}
	held, release := a.WriteLedger().Hold(bg, rec)
	defer release()
	if ok, err := a.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("A.Claim = %v, %v", ok, err)
	}
	if n := terminate(t, name); n == 0 {
		t.Fatal("A has no session to terminate")
	}
	deadline := time.Now().Add(4 * time.Second) // longer than A's lease
	for time.Now().Before(deadline) {
		got, ok, err := b.WriteLedger().Begin(bg, key, "w")
		if err != nil || ok || got.State != guard.WriteRunning {
			t.Fatalf("B.Begin while A lives = %+v, %v, %v; want A's write in flight", got, ok, err)
		}
		if ok, err := b.Claims().Claim(bg, run, "s1"); err != nil || ok {
			t.Fatalf("B.Claim of A's resume while A lives = %v, %v; want false", ok, err)
		}
		if held.Err() != nil {
			t.Fatalf("A's write was cancelled (%v) though A renews its lease", context.Cause(held))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := a.WriteLedger().Finish(bg, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteSucceeded, Token: rec.Token}); err != nil {
		t.Fatalf("A.Finish after its sessions were terminated = %v; want it stored", err)
	}
	if got, _, _ := b.WriteLedger().Get(bg, key); got.State != guard.WriteSucceeded {
		t.Fatalf("B sees %+v; want A's result", got)
	}
}

// A process that cannot reach the database loses its lease at two thirds
// of it: the work held under it is cancelled (cause ErrLeaseLost) while the
// database still keeps the lease, so nobody takes the claims over before
// the holder stopped; once the lease has expired, another process reads
// the write as uncertain and takes the resume claim over, and everything
// the first holder records after that is refused.
func TestLease_LostStopsTheHolderBeforeTakeover(t *testing.T) {
	d, p := throughProxy(t)
	const lease = 1500 * time.Millisecond
	a, err := postgres.Open(bg, d, &postgres.Options{Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := open(t, nil)
	key, run := "lease-lost/"+t.Name(), "lease-lost-run/"+t.Name()
	rec, ok, err := a.WriteLedger().Begin(bg, key, "w")
	if err != nil || !ok {
		t.Fatalf("A.Begin = %v, %v", ok, err)
	}
	wctx, wrelease := a.WriteLedger().Hold(bg, rec)
	defer wrelease()
	if ok, err := a.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("A.Claim = %v, %v", ok, err)
	}
	cctx, crelease := a.Claims().Hold(bg, run, "s1")
	defer crelease()

	p.Cut()
	cut := time.Now()
	select {
	case <-wctx.Done():
	case <-time.After(lease):
		t.Fatal("A's write was not cancelled within its lease")
	}
	lostAfter := time.Since(cut)
	if c := context.Cause(wctx); !errors.Is(c, runstore.ErrLeaseLost) {
		t.Fatalf("cause = %v; want ErrLeaseLost", c)
	}
	<-cctx.Done()
	if c := context.Cause(cctx); !errors.Is(c, runstore.ErrLeaseLost) {
		t.Fatalf("resume's cause = %v; want ErrLeaseLost", c)
	}
	// The database keeps A's lease for a third of it longer: the write is
	// still in flight for B.
	if got, ok, err := b.WriteLedger().Begin(bg, key, "w"); err != nil || ok || got.State != guard.WriteRunning {
		t.Fatalf("B.Begin %v after A stopped = %+v, %v, %v; want in flight until A's lease expires", lostAfter, got, ok, err)
	}
	if ok, err := b.Claims().Claim(bg, run, "s1"); err != nil || ok {
		t.Fatalf("B.Claim before A's lease expired = %v, %v; want false", ok, err)
	}
	time.Sleep(lease) // A's lease has expired in the database now
	got, ok, err := b.WriteLedger().Begin(bg, key, "w")
	if err != nil || ok || got.State != guard.WriteUncertain || got.Token != rec.Token {
		t.Fatalf("B.Begin after A's lease expired = %+v, %v, %v; want uncertain under A's token %d", got, ok, err, rec.Token)
	}
	if ok, err := b.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("B.Claim after A's lease expired = %v, %v; want the takeover", ok, err)
	}
	// B verified the write not applied, released it and claims it again.
	if err := b.WriteLedger().Finish(bg, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteNone, Token: got.Token}); err != nil {
		t.Fatal(err)
	}
	again, ok, err := b.WriteLedger().Begin(bg, key, "w")
	if err != nil || !ok || again.Token <= rec.Token {
		t.Fatalf("B's claim = %+v, %v, %v; want a claim with a token above A's %d", again, ok, err, rec.Token)
	}

	p.Restore()
	err = a.WriteLedger().Finish(bg, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteSucceeded, Token: rec.Token})
	if !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("A.Finish of its taken-over claim = %v; want ErrFenced", err)
	}
	if err := a.Claims().Settle(bg, run, "s1"); !errors.Is(err, runstore.ErrLeaseLost) {
		t.Fatalf("A.Settle of its taken-over resume claim = %v; want ErrLeaseLost", err)
	}
	if got, _, _ := b.WriteLedger().Get(bg, key); got.State != guard.WriteRunning || got.Token != again.Token {
		t.Fatalf("after A's late records: %+v; want B's claim untouched", got)
	}
	// A works on under a new lease.
	if _, ok, err := a.WriteLedger().Begin(bg, key+"/next", "w"); err != nil || !ok {
		t.Fatalf("A.Begin under a new lease = %v, %v; want a claim", ok, err)
	}
}

// A resume claim taken over after its holder lost its lease: the holder's
// save of the run (and its delete) is refused, so the run store keeps what
// the new holder saves, never the stale holder's state.
func TestLease_TakenOverRunIsNotSaved(t *testing.T) {
	d, p := throughProxy(t)
	const lease = time.Second
	a, err := postgres.Open(bg, d, &postgres.Options{Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := open(t, nil)
	run := "lease-save/" + t.Name()
	if ok, err := a.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("A.Claim = %v, %v", ok, err)
	}
	p.Cut()
	time.Sleep(lease + lease/2)
	if ok, err := b.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("B.Claim after A's lease expired = %v, %v; want the takeover", ok, err)
	}
	bRun := runstore.Run{ID: run, Kind: runstore.FollowUp, Owner: runstore.Owner{User: "B"}, Snapshot: []byte("B"), Stopped: time.Now()}
	if err := b.Runs().Save(bg, bRun); err != nil {
		t.Fatal(err)
	}
	p.Restore()
	stale := runstore.Run{ID: run, Kind: runstore.Interrupted, Snapshot: []byte("A"), Stopped: time.Now()}
	if err := a.Runs().Save(bg, stale); !errors.Is(err, runstore.ErrLeaseLost) {
		t.Fatalf("A.Save of a run whose claim was taken over = %v; want ErrLeaseLost", err)
	}
	if err := a.Runs().Delete(bg, run); !errors.Is(err, runstore.ErrLeaseLost) {
		t.Fatalf("A.Delete of a run whose claim was taken over = %v; want ErrLeaseLost", err)
	}
	got, ok, err := b.Runs().Get(bg, run)
	if err != nil || !ok || string(got.Snapshot) != "B" {
		t.Fatalf("stored run = %q, %v, %v; want B's", got.Snapshot, ok, err)
	}
	if err := b.Claims().Settle(bg, run, "s1"); err != nil {
		t.Fatalf("B.Settle after its save settled it = %v; want nil", err)
	}
}

// A lease that disappears from the database (an operator deleted it) is
// lost at the next claim: the claim fails with ErrLeaseLost, work held
// under the lease is cancelled, and the Store starts a new lease.
func TestLease_DeletedLeaseIsLost(t *testing.T) {
	s := open(t, &postgres.Options{Lease: 5 * time.Second})
	rec, ok, err := s.WriteLedger().Begin(bg, "lease-deleted/"+t.Name(), "w")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	held, release := s.WriteLedger().Hold(bg, rec)
	defer release()
	if _, err := s.Pool().Exec(bg, `DELETE FROM reactguard_leases`); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.WriteLedger().Begin(bg, "lease-deleted/2/"+t.Name(), "w")
	if !errors.Is(err, runstore.ErrLeaseLost) {
		t.Fatalf("Begin after the lease was deleted = %v; want ErrLeaseLost", err)
	}
	select {
	case <-held.Done():
	case <-time.After(5 * time.Second):
	}
	if !errors.Is(context.Cause(held), runstore.ErrLeaseLost) {
		t.Fatalf("held work: %v; want cancelled with ErrLeaseLost", context.Cause(held))
	}
	if _, ok, err := s.WriteLedger().Begin(bg, "lease-deleted/3/"+t.Name(), "w"); err != nil || !ok {
		t.Fatalf("Begin under a new lease = %v, %v; want a claim", ok, err)
	}
}

// Wrong credentials are refused with ErrAuth, not reported as an
// unreachable server (which a host would retry for ever).
func TestOpen_BadCredentialsAreNotUnreachable(t *testing.T) {
	d := dsn(t)
	if !strings.Contains(d, "://") {
		t.Skip("needs a URL DSN")
	}
	for _, tt := range []struct{ name, dsn string }{
		{"wrong password", withPassword(t, d, "not-the-password")},
		{"unknown database", withDatabase(t, d, "reactguard_no_such_database")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := postgres.Open(bg, tt.dsn, nil)
			if !errors.Is(err, postgres.ErrAuth) || errors.Is(err, postgres.ErrUnreachable) {
				t.Fatalf("Open = %v; want ErrAuth and not ErrUnreachable", err)
			}
			if strings.Contains(err.Error(), "not-the-password") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
}

// A lease that has expired in the database while this process still holds
// it on its own clock (the process stalled, or the clocks disagree) claims
// nothing: every claim statement checks the claiming Store's lease itself,
// so Begin, BeginApproved, BeginApprovedOrGate, Claim and ClaimDecided each
// fail with ErrLeaseLost and leave the key free, the approval unused, no
// call gated, the snapshot unclaimed and no decision recorded or applied.
// (Without that check in the statement, a claim under a dead lease could be
// taken over at once by another process and its write run twice.)
func TestLease_ExpiredInTheDatabaseClaimsNothing(t *testing.T) {
	// A long lease: no renewal comes between a test's expiry and its claim.
	s := open(t, &postgres.Options{Lease: 10 * time.Minute})
	wl, ap, cl := s.WriteLedger(), s.Approvals(), s.Claims()
	n := 0
	// expire makes sure the Store holds a lease (a claim of a key of its
	// own), then ends that lease in the database only.
	expire := func(t *testing.T) {
		t.Helper()
		n++
		if _, ok, err := wl.Begin(bg, fmt.Sprintf("lease-expired/warm/%d/%s", n, t.Name()), "w"); err != nil || !ok {
			t.Fatalf("Begin under a live lease = %v, %v; want a claim", ok, err)
		}
		if _, err := s.Pool().Exec(bg, `UPDATE reactguard_leases SET expires = now() - interval '1 second'`); err != nil {
			t.Fatal(err)
		}
	}
	lost := func(t *testing.T, what string, err error) {
		t.Helper()
		if !errors.Is(err, runstore.ErrLeaseLost) {
			t.Fatalf("%s under a lease expired in the database = %v; want ErrLeaseLost", what, err)
		}
	}
	free := func(t *testing.T, key string) {
		t.Helper()
		if rec, found, err := wl.Get(bg, key); err != nil || found {
			t.Fatalf("Get(%s) = %+v, %v, %v; want no record: nothing was claimed", key, rec, found, err)
		}
	}
	claims := func(t *testing.T, run string) int {
		t.Helper()
		var c int
		if err := s.Pool().QueryRow(bg, `SELECT count(*) FROM reactguard_claims WHERE run = $1`, []byte(run)).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	call := guard.GatedCall{CallID: "c1", Tool: "w", Args: []byte(`{"n":1}`), Fingerprint: "fp-1", Round: 1}

	t.Run("Begin", func(t *testing.T) {
		key := "lease-expired/begin/" + t.Name()
		expire(t)
		_, ok, err := wl.Begin(bg, key, "w")
		lost(t, "Begin", err)
		if ok {
			t.Fatal("Begin claimed the key")
		}
		free(t, key)
	})
	t.Run("BeginApproved", func(t *testing.T) {
		for _, k := range []struct {
			name string
			key  func(run string) string
		}{
			{"an explicit key", func(string) string { return "lease-expired/approved/" + t.Name() }},
			// The key the write gate derives: the approval is granted on
			// its row, which the claim updates in place.
			{"the derived key", func(run string) string { return guard.IdempotencyKey(run, call.Fingerprint) }},
		} {
			t.Run(k.name, func(t *testing.T) {
				run := "lease-expired-approved/" + t.Name()
				key := k.key(run)
				if err := ap.Gate(bg, run, call); err != nil {
					t.Fatal(err)
				}
				if err := ap.Approve(bg, run, call.CallID, call.Fingerprint); err != nil {
					t.Fatal(err)
				}
				expire(t)
				_, ok, err := wl.BeginApproved(bg, key, "w", run, call.Fingerprint)
				lost(t, "BeginApproved", err)
				if ok {
					t.Fatal("BeginApproved claimed the key")
				}
				if rec, _, err := wl.Get(bg, key); err != nil || rec.State != guard.WriteNone || rec.Token != 0 {
					t.Fatalf("Get(%s) = %+v, %v; want no claim (no record, or state none without a token)", key, rec, err)
				}
				if used, err := ap.Consume(bg, run, call.Fingerprint); err != nil || !used {
					t.Fatalf("Consume after the refused claim = %v, %v; want the approval still unused", used, err)
				}
			})
		}
	})
	t.Run("BeginApprovedOrGate", func(t *testing.T) {
		run, key := "lease-expired-gate", "lease-expired/gate/"+t.Name()
		expire(t)
		_, ok, gated, err := wl.BeginApprovedOrGate(bg, key, "w", run, call)
		lost(t, "BeginApprovedOrGate", err)
		if ok || gated {
			t.Fatalf("BeginApprovedOrGate = claimed %v, gated %v; want neither", ok, gated)
		}
		free(t, key)
		if c, found, err := ap.Gated(bg, run); err != nil || found {
			t.Fatalf("Gated = %+v, %v, %v; want no call gated", c, found, err)
		}
	})
	t.Run("Claim", func(t *testing.T) {
		run := "lease-expired-claim"
		expire(t)
		ok, err := cl.Claim(bg, run, "s1")
		lost(t, "Claim", err)
		if ok {
			t.Fatal("Claim claimed the snapshot")
		}
		if c := claims(t, run); c != 0 {
			t.Fatalf("%d claims stored; want none", c)
		}
	})
	t.Run("ClaimDecided", func(t *testing.T) {
		run := "lease-expired-decided"
		if err := ap.Gate(bg, run, call); err != nil {
			t.Fatal(err)
		}
		expire(t)
		ok, err := cl.ClaimDecided(bg, runstore.Decision{Run: run, Suspension: "s1", Kind: runstore.Approved, CallID: call.CallID,
			Tool: call.Tool, Fingerprint: call.Fingerprint, By: "alice", At: time.Now()})
		lost(t, "ClaimDecided", err)
		if ok {
			t.Fatal("ClaimDecided claimed the snapshot")
		}
		if c := claims(t, run); c != 0 {
			t.Fatalf("%d claims stored; want none", c)
		}
		if d, found, err := s.Audit().Decided(bg, run, "s1"); err != nil || found {
			t.Fatalf("Decided = %+v, %v, %v; want no decision recorded", d, found, err)
		}
		if c, found, err := ap.Gated(bg, run); err != nil || !found || c.CallID != call.CallID {
			t.Fatalf("Gated = %+v, %v, %v; want the call still waiting", c, found, err)
		}
		if used, err := ap.Consume(bg, run, call.Fingerprint); err != nil || used {
			t.Fatalf("Consume = %v, %v; want no approval granted", used, err)
		}
	})
}

// Release without a token never takes a thread from a run this Store
// still drives: a thread held under this Store's lease answers ErrBusy and
// stays held even when that lease has expired in the database (the process
// stalled, or the clocks disagree), as the run goes on here until the Store
// counts its lease lost. Another Store, whose lease is live, releases it:
// for that Store the holder's driver is dead.
func TestLease_ExpiredInTheDatabaseKeepsItsOwnThread(t *testing.T) {
	s := open(t, &postgres.Options{Lease: 10 * time.Minute}) // no renewal between the expiry and the Release
	other := open(t, &postgres.Options{Lease: 10 * time.Minute})
	id, run := "lease-thread/"+t.Name(), "lease-thread-run"
	owner := runstore.Owner{Tenant: "t", User: "u"}
	if _, token, err := s.Threads().Acquire(bg, id, owner, run); err != nil || token == "" {
		t.Fatalf("Acquire = %q, %v; want a lease token", token, err)
	}
	held := func(why string, want bool) {
		t.Helper()
		th, ok, err := s.Threads().Get(bg, id)
		if err != nil || !ok || th.Held != want || (want && th.Run != run) {
			t.Fatalf("%s: Get = %+v, %v, %v; want held %v by %s", why, th, ok, err, want, run)
		}
	}
	if err := s.Threads().Release(bg, id, run, ""); !errors.Is(err, threadstore.ErrBusy) {
		t.Fatalf("Release without a token of a thread this Store drives = %v; want ErrBusy", err)
	}
	held("under a live lease", true)
	if _, err := s.Pool().Exec(bg, `UPDATE reactguard_leases SET expires = now() - interval '1 second' WHERE owner = (SELECT holder FROM reactguard_threads WHERE id = $1)`, []byte(id)); err != nil {
		t.Fatal(err)
	}
	if err := s.Threads().Release(bg, id, run, ""); !errors.Is(err, threadstore.ErrBusy) {
		t.Fatalf("Release without a token, by the Store that drives the thread, after its lease expired in the database = %v; want ErrBusy", err)
	}
	held("after this Store's lease expired in the database", true)
	if err := other.Threads().Release(bg, id, run, ""); err != nil {
		t.Fatalf("Release without a token by another Store of a thread whose holder's lease expired = %v; want nil", err)
	}
	held("released by another Store", false)
}

// A Store that lives keeps its lease: renewals (every third of the lease)
// keep the work held under it going for longer than the lease, and the
// claim stays its own (its Finish is not fenced).
func TestLease_RenewedWhileHeld(t *testing.T) {
	const lease = 3 * time.Second
	s := open(t, &postgres.Options{Lease: lease})
	wl := s.WriteLedger()
	rec, ok, err := wl.Begin(bg, "lease-renewed/"+t.Name(), "w")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	held, release := wl.Hold(bg, rec)
	defer release()
	select {
	case <-held.Done():
		t.Fatalf("work held under a live Store's lease ended after less than %v: %v", lease*5/6, context.Cause(held))
	case <-time.After(lease * 5 / 6): // past the two thirds at which an unrenewed lease counts as lost
	}
	rec.State, rec.Result = guard.WriteSucceeded, []byte(`{}`)
	if err := wl.Finish(bg, rec); err != nil {
		t.Fatalf("Finish under the renewed lease = %v", err)
	}
}

// The lease a Store holds in the database is Options.Lease, DefaultLease
// when it is zero, and never shorter than the shortest the Store accepts
// (300 ms), which a Store renews in time to keep claiming: each case reads
// the lease's remaining time in the database right after a claim that
// checked it live, on a schema of its own (no other Store's lease).
func TestLease_DurationInTheDatabase(t *testing.T) {
	for _, c := range []struct {
		why    string
		lease  time.Duration
		lo, hi time.Duration // bounds of the remaining time after a claim
	}{
		{"zero is DefaultLease, 15 s", 0, 9 * time.Second, 15 * time.Second},
		// A renewal late under load may leave less than nothing: only the
		// claims it lets through say the lease is raised.
		{"a lease too short to renew is raised to the shortest accepted", time.Nanosecond, -time.Hour, 300 * time.Millisecond},
		{"a longer lease is kept", 2 * time.Minute, 2*time.Minute - 6*time.Second, 2 * time.Minute},
	} {
		t.Run(c.why, func(t *testing.T) {
			d := freshSchema(t)
			s, err := postgres.Open(bg, d, &postgres.Options{Lease: c.lease})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Migrate(bg); err != nil {
				t.Fatal(err)
			}
			// A claim checks the lease live in its statement; a renewal
			// late under load may refuse one, not five in a row.
			claimed := false
			for i := range 5 {
				if _, ok, err := s.WriteLedger().Begin(bg, fmt.Sprintf("lease-duration/%d", i), "w"); err == nil && ok {
					claimed = true
					break
				}
			}
			if !claimed {
				t.Fatal("no claim in 5 under a lease of at least 300 ms")
			}
			var left time.Duration
			if err := s.Pool().QueryRow(bg, `SELECT max(expires) - now() FROM reactguard_leases`).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left <= c.lo || left > c.hi {
				t.Errorf("the lease has %v left in the database after a claim; want more than %v and at most %v", left, c.lo, c.hi)
			}
		})
	}
}
