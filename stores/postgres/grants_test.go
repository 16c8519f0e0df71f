package postgres_test

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/guard"
)

// Since schema version 8 an approval is granted on the write ledger's row
// of the key the write gate derives for the call: the grants of version 7
// move there on upgrade (the key computed by the database as
// guard.IdempotencyKey computes it, a run id of 128 bytes or more
// included), onto a key's existing record when it has one, and the grants
// table is dropped.
func TestSchema_Version8MovesGrantsToKeys(t *testing.T) {
	d := freshSchema(t)
	conn, err := pgx.Connect(bg, d)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(bg) }()
	migrateTo(t, conn, 7)
	long := "run-" + strings.Repeat("x", 300) // its length is two bytes of uvarint
	grants := []struct {
		run, fp string
		n       int
	}{
		{"run-8", "fp-a", 2},
		{long, "fp-b", 1},
		{"run-9", "fp-d", 1},
		{"run-0", "fp-c", 0},
	}
	for _, g := range grants {
		if _, err := conn.Exec(bg, `INSERT INTO reactguard_grants (run, fingerprint, n, at) VALUES ($1, $2, $3, now())`,
			[]byte(g.run), []byte(g.fp), g.n); err != nil {
			t.Fatal(err)
		}
	}
	// run-9's key failed before the upgrade (a record without a run): its
	// grant joins that record, and lets the write be claimed again.
	if _, err := conn.Exec(bg, `INSERT INTO reactguard_writes (key, tool, state, code, at) VALUES ($1, 'w', 3, 1, now())`,
		[]byte(guard.IdempotencyKey("run-9", "fp-d"))); err != nil {
		t.Fatal(err)
	}
	s := upgraded(t, d, 7)
	wl, ap := s.WriteLedger(), s.Approvals()
	for _, c := range []struct {
		why     string
		run, fp string
		claims  bool
		left    int // approvals Consume finds after the claim
	}{
		{"two grants: one claimed, one left", "run-8", "fp-a", true, 1},
		{"a long run id", long, "fp-b", true, 0},
		{"a grant on a failed key's record", "run-9", "fp-d", true, 0},
		{"a spent grant moves nothing", "run-0", "fp-c", false, 0},
	} {
		key := guard.IdempotencyKey(c.run, c.fp)
		rec, ok, err := wl.BeginApproved(bg, key, "w", c.run, c.fp)
		if err != nil || ok != c.claims || (ok && rec.State != guard.WriteRunning) {
			t.Errorf("%s: BeginApproved of the derived key = %+v, %v, %v; want claimed %v", c.why, rec, ok, err, c.claims)
		}
		n := 0
		for {
			ok, err := ap.Consume(bg, c.run, c.fp)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			n++
		}
		if n != c.left {
			t.Errorf("%s: %d approvals left after the claim; want %d", c.why, n, c.left)
		}
	}
	var gone bool
	if err := conn.QueryRow(bg, `SELECT to_regclass('reactguard_grants') IS NULL`).Scan(&gone); err != nil || !gone {
		t.Errorf("reactguard_grants after the upgrade: dropped %v, %v; want dropped", gone, err)
	}
}

// A Store that granted an approval itself claims the approved write with
// the claim alone, and takes what it remembers of its grants as a hint
// only: when another Store consumed the grant or claimed the key
// meanwhile, the answer is the database's (the call gated again, or the
// write in flight), as if it remembered nothing.
func TestWriteLedger_GrantedHereIsAHintOnly(t *testing.T) {
	a, b := open(t, nil), open(t, nil)
	call := guard.GatedCall{CallID: "c1", Tool: "w", Args: []byte(`{"n":1}`), Fingerprint: "fp-1", Round: 1}
	grant := func(t *testing.T, run string) string {
		t.Helper()
		if err := a.Approvals().Gate(bg, run, call); err != nil {
			t.Fatal(err)
		}
		if err := a.Approvals().Approve(bg, run, call.CallID, call.Fingerprint); err != nil {
			t.Fatal(err)
		}
		return guard.IdempotencyKey(run, call.Fingerprint)
	}
	t.Run("consumed by another Store", func(t *testing.T) {
		run := "hint/consumed/" + t.Name() + unique()
		key := grant(t, run)
		if ok, err := b.Approvals().Consume(bg, run, call.Fingerprint); err != nil || !ok {
			t.Fatalf("Consume through the other Store = %v, %v; want the approval", ok, err)
		}
		rec, ok, gated, err := a.WriteLedger().BeginApprovedOrGate(bg, key, "w", run, call)
		if err != nil || ok || !gated || rec.State != guard.WriteNone {
			t.Fatalf("BeginApprovedOrGate = %+v, claimed %v, gated %v, %v; want the call gated again, nothing claimed", rec, ok, gated, err)
		}
		if c, found, err := b.Approvals().Gated(bg, run); err != nil || !found || c.CallID != call.CallID {
			t.Fatalf("Gated through the other Store = %+v, %v, %v; want the call waiting", c, found, err)
		}
	})
	t.Run("claimed by another Store", func(t *testing.T) {
		run := "hint/claimed/" + t.Name() + unique()
		key := grant(t, run)
		if _, ok, err := b.WriteLedger().BeginApproved(bg, key, "w", run, call.Fingerprint); err != nil || !ok {
			t.Fatalf("BeginApproved through the other Store = %v, %v; want the claim", ok, err)
		}
		rec, ok, gated, err := a.WriteLedger().BeginApprovedOrGate(bg, key, "w", run, call)
		if err != nil || ok || gated || rec.State != guard.WriteRunning {
			t.Fatalf("BeginApprovedOrGate = %+v, claimed %v, gated %v, %v; want the write in flight", rec, ok, gated, err)
		}
	})
	t.Run("one grant, one claim", func(t *testing.T) {
		run := "hint/once/" + t.Name() + unique()
		key := grant(t, run)
		rec, ok, _, err := a.WriteLedger().BeginApprovedOrGate(bg, key, "w", run, call)
		if err != nil || !ok {
			t.Fatalf("BeginApprovedOrGate = %+v, %v, %v; want the claim", rec, ok, err)
		}
		rec.State = guard.WriteNone // released: it did not run
		if err := a.WriteLedger().Finish(bg, rec); err != nil {
			t.Fatal(err)
		}
		rec, ok, gated, err := a.WriteLedger().BeginApprovedOrGate(bg, key, "w", run, call)
		if err != nil || ok || !gated {
			t.Fatalf("BeginApprovedOrGate again = %+v, claimed %v, gated %v, %v; want the call gated: its one approval was used", rec, ok, gated, err)
		}
	})
}

// unique returns a suffix no other call in this process returns, so that
// a test's names stay its own under -count.
func unique() string {
	return "/" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(uniqueN.Add(1), 36)
}

var uniqueN atomic.Int64
