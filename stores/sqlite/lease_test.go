package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/stores/sqlite"
)

// ownerFile returns the one lock file in the owners directory of path.
func ownerFile(t *testing.T, path string) string {
	t.Helper()
	names, err := filepath.Glob(path + ".owners/*")
	if err != nil || len(names) != 1 {
		t.Fatalf("owner files %v, %v; want one", names, err)
	}
	return names[0]
}

// A Store whose owner lock file is removed while its process lives reads
// as dead to the others: it loses its claims like a PostgreSQL store that
// lost its lease. The work held under them is cancelled, another process
// takes the write (uncertain) and the resume claim over, everything the
// first Store records after that is refused, and it claims on under a new
// owner.
func TestOwner_RemovedLockFileIsLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := openAt(t, path, &sqlite.Options{OwnerCheck: 50 * time.Millisecond})
	lock := ownerFile(t, path)
	b := openAt(t, path, nil)
	key, run := "owner-lost/"+t.Name(), "owner-lost-run"
	rec, ok, err := a.WriteLedger().Begin(bg, key, "w")
	if err != nil || !ok || rec.Token == 0 {
		t.Fatalf("A.Begin = %+v, %v, %v; want a claim with a token", rec, ok, err)
	}
	held, release := a.WriteLedger().Hold(bg, rec)
	defer release()
	if ok, err := a.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("A.Claim = %v, %v", ok, err)
	}
	resume, rrelease := a.Claims().Hold(bg, run, "s1")
	defer rrelease()

	if got, ok, _ := b.WriteLedger().Begin(bg, key, "w"); ok || got.State != guard.WriteRunning {
		t.Fatalf("B.Begin while A lives = %+v, %v; want in flight", got, ok)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	for _, c := range []context.Context{held, resume} {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the work held under the lost owner was not cancelled")
		}
		if !errors.Is(context.Cause(c), runstore.ErrLeaseLost) {
			t.Fatalf("cause = %v; want ErrLeaseLost", context.Cause(c))
		}
	}
	got, ok, err := b.WriteLedger().Begin(bg, key, "w")
	if err != nil || ok || got.State != guard.WriteUncertain {
		t.Fatalf("B.Begin after A's owner was lost = %+v, %v, %v; want uncertain", got, ok, err)
	}
	if ok, err := b.Claims().Claim(bg, run, "s1"); err != nil || !ok {
		t.Fatalf("B.Claim after A's owner was lost = %v, %v; want the takeover", ok, err)
	}
	if err := b.WriteLedger().Finish(bg, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteNone, Token: got.Token}); err != nil {
		t.Fatal(err)
	}
	again, ok, err := b.WriteLedger().Begin(bg, key, "w")
	if err != nil || !ok || again.Token <= rec.Token {
		t.Fatalf("B's claim = %+v, %v, %v; want a token above A's %d", again, ok, err, rec.Token)
	}
	if err := a.WriteLedger().Finish(bg, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteSucceeded, Token: rec.Token}); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("A.Finish of its taken-over claim = %v; want ErrFenced", err)
	}
	stale := runstore.Run{ID: run, Kind: runstore.Interrupted, Snapshot: []byte("A"), Stopped: time.Now()}
	if err := a.Runs().Save(bg, stale); !errors.Is(err, runstore.ErrLeaseLost) {
		t.Fatalf("A.Save of a run whose claim was taken over = %v; want ErrLeaseLost", err)
	}
	if _, ok, _ := b.Runs().Get(bg, run); ok {
		t.Fatal("A's stale run was saved")
	}
	if err := a.Claims().Settle(bg, run, "s1"); !errors.Is(err, runstore.ErrLeaseLost) {
		t.Fatalf("A.Settle of its taken-over resume claim = %v; want ErrLeaseLost", err)
	}
	if _, ok, err := a.WriteLedger().Begin(bg, key+"/next", "w"); err != nil || !ok {
		t.Fatalf("A.Begin under a new owner = %v, %v; want a claim", ok, err)
	}
}

// A lock file replaced by another file at the same path (not locked: to
// the other processes the owner reads as dead) is lost as a removed one
// is: the work held under it is cancelled.
func TestOwner_ReplacedLockFileIsLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := openAt(t, path, &sqlite.Options{OwnerCheck: 50 * time.Millisecond})
	lock := ownerFile(t, path)
	rec, ok, err := a.WriteLedger().Begin(bg, "owner-replaced/"+t.Name(), "w")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	held, release := a.WriteLedger().Hold(bg, rec)
	defer release()
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte("pid 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the work held under a replaced lock file was not cancelled")
	}
	if !errors.Is(context.Cause(held), runstore.ErrLeaseLost) {
		t.Fatalf("cause = %v; want ErrLeaseLost", context.Cause(held))
	}
}
