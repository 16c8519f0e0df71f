package guardtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
)

type approvingCase struct {
	name string
	// run gets the key of a write of run with fingerprint "fp" from key.
	run func(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, key func(run string) string)
}

// RunApprovingWriteLedger runs the [guard.ApprovingWriteLedger] contract
// tests as subtests of t, each with a ledger and the Approvals store it
// consumes from, from newStores. Run [RunWriteLedger] and [RunApprovals]
// on the same implementation too.
func RunApprovingWriteLedger(t *testing.T, newStores func() (guard.ApprovingWriteLedger, guard.Approvals)) {
	t.Helper()
	// Each case runs with a key of the caller's (an explicit idempotency
	// key) and with the key the write gate derives for the call
	// (guard.IdempotencyKey of the run and the fingerprint): a store may
	// keep an approval with the derived key's record.
	for _, c := range approvingCases {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []struct {
				name string
				key  func(run string) string
			}{
				{"ExplicitKey", func(run string) string { return "key/" + run }},
				{"DerivedKey", func(run string) string { return guard.IdempotencyKey(run, "fp") }},
			} {
				t.Run(k.name, func(t *testing.T) {
					l, a := newStores()
					c.run(t, l, a, "run/"+t.Name(), k.key)
				})
			}
		})
	}
}

var approvingCases = []approvingCase{
	{"ConsumesFromItsOwnApprovalsOnly", consumesFromItsOwn},
	{"ApprovalConsumedWithTheClaim", approvalConsumedWithClaim},
	{"NoApprovalClaimsNothing", noApprovalClaimsNothing},
	{"TakenKeyConsumesNothing", takenKeyConsumesNothing},
	{"FailedKeyIsClaimedAgain", failedKeyIsClaimedAgain},
	{"ApprovalsOfAnotherRunOrCallDoNotCount", approvalsOfAnotherRun},
	{"BeginApprovedIsAtomic", beginApprovedIsAtomic},
	{"OneApprovalOneClaimAcrossKeys", oneApprovalOneClaimAcrossKeys},
}

// approve gates call id with fingerprint fp in run and approves it.
func approve(t *testing.T, a guard.Approvals, run, id, fp string) {
	t.Helper()
	ctx := context.Background()
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: id, Tool: "w", Args: json.RawMessage(`{}`), Fingerprint: fp}))
	must(t, a.Approve(ctx, run, id, fp))
}

func consumesFromItsOwn(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, _ string, _ func(string) string) {
	if !l.ConsumesFrom(a) {
		t.Fatal("ConsumesFrom(its own Approvals) = false; want true")
	}
	if l.ConsumesFrom(guard.NewMemoryApprovals()) {
		t.Fatal("ConsumesFrom(a MemoryApprovals) = true; want false (another store's approvals)")
	}
	if l.ConsumesFrom(nil) {
		t.Fatal("ConsumesFrom(nil) = true; want false")
	}
}

func approvalConsumedWithClaim(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, keyOf func(string) string) {
	ctx := context.Background()
	key := keyOf(run)
	approve(t, a, run, "c1", "fp")
	rec, ok, err := l.BeginApproved(ctx, key, "w", run, "fp")
	must(t, err)
	if !ok || rec.State != guard.WriteRunning || rec.Key != key || rec.Tool != "w" {
		t.Fatalf("BeginApproved with an approval = %+v, %v; want a running record and true", rec, ok)
	}
	if n := consumes(t, a, run, "fp"); n != 0 {
		t.Fatalf("Consume after BeginApproved succeeded %d times; want 0 (the claim consumed the approval)", n)
	}
	got, found, err := l.Get(ctx, key)
	must(t, err)
	if !found || got.State != guard.WriteRunning {
		t.Fatalf("Get after BeginApproved = %+v, %v; want the running record", got, found)
	}
	rec, ok, err = l.BeginApproved(ctx, key, "w", run, "fp")
	must(t, err)
	if ok || rec.State != guard.WriteRunning {
		t.Fatalf("second BeginApproved = %+v, %v; want the running record and false", rec, ok)
	}
}

func noApprovalClaimsNothing(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, keyOf func(string) string) {
	ctx := context.Background()
	key := keyOf(run)
	gate(t, a, run) // waiting, not approved
	rec, ok, err := l.BeginApproved(ctx, key, "w", run, "fp")
	must(t, err)
	if ok || rec.State != guard.WriteNone {
		t.Fatalf("BeginApproved without an approval = %+v, %v; want WriteNone and false", rec, ok)
	}
	if _, waiting, err := a.Gated(ctx, run); err != nil || !waiting {
		t.Fatalf("Gated after BeginApproved without an approval = %v, %v; want the call still waiting", waiting, err)
	}
	if _, ok, err := l.Begin(ctx, key, "w"); err != nil || !ok {
		t.Fatalf("Begin after BeginApproved without an approval = %v, %v; want a claim (nothing was claimed)", ok, err)
	}
}

func takenKeyConsumesNothing(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, keyOf func(string) string) {
	ctx := context.Background()
	for _, tt := range []struct {
		state  guard.WriteState
		result json.RawMessage
	}{
		{guard.WriteRunning, nil},
		{guard.WriteSucceeded, json.RawMessage(`{"id":1}`)},
		{guard.WriteUncertain, nil},
	} {
		run := fmt.Sprintf("%s/%d", run, tt.state)
		k := keyOf(run)
		_, _, err := l.Begin(ctx, k, "w")
		must(t, err)
		if tt.state != guard.WriteRunning {
			must(t, l.Finish(ctx, guard.WriteRecord{Key: k, Tool: "w", State: tt.state, Result: tt.result, Code: errcode.ToolTimeout}))
		}
		approve(t, a, run, fmt.Sprintf("c%d", tt.state), "fp")
		rec, ok, err := l.BeginApproved(ctx, k, "w", run, "fp")
		must(t, err)
		if ok || rec.State != tt.state || !bytes.Equal(rec.Result, tt.result) {
			t.Fatalf("BeginApproved of a key in state %d = %+v, %v; want that record (result %s) and false", tt.state, rec, ok, tt.result)
		}
		if n := consumes(t, a, run, "fp"); n != 1 {
			t.Fatalf("Consume after BeginApproved of a key in state %d succeeded %d times; want 1 (the approval is left)", tt.state, n)
		}
	}
}

func failedKeyIsClaimedAgain(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, keyOf func(string) string) {
	ctx := context.Background()
	key := keyOf(run)
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteFailed, Code: errcode.ToolBusinessFailed}))
	rec, ok, err := l.BeginApproved(ctx, key, "w", run, "fp")
	must(t, err)
	if ok || rec.State != guard.WriteFailed {
		t.Fatalf("BeginApproved of a failed key without an approval = %+v, %v; want the failed record and false", rec, ok)
	}
	approve(t, a, run, "c1", "fp")
	rec, ok, err = l.BeginApproved(ctx, key, "w", run, "fp")
	must(t, err)
	if !ok || rec.State != guard.WriteRunning {
		t.Fatalf("BeginApproved of a failed key with a new approval = %+v, %v; want a claim", rec, ok)
	}
	if n := consumes(t, a, run, "fp"); n != 0 {
		t.Fatalf("Consume after the claim succeeded %d times; want 0", n)
	}
}

func approvalsOfAnotherRun(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, keyOf func(string) string) {
	ctx := context.Background()
	key := keyOf(run)
	approve(t, a, run, "c1", "fp")
	for _, tt := range []struct{ run, fp, why string }{
		{run + "/other", "fp", "an approval belongs to its run"},
		{run, "fp-other", "an approval belongs to its fingerprint"},
	} {
		rec, ok, err := l.BeginApproved(ctx, key, "w", tt.run, tt.fp)
		must(t, err)
		if ok || rec.State != guard.WriteNone {
			t.Fatalf("BeginApproved(%q, %q) = %+v, %v; want WriteNone and false (%s)", tt.run, tt.fp, rec, ok, tt.why)
		}
	}
	if n := consumes(t, a, run, "fp"); n != 1 {
		t.Fatalf("the approval of run, fp was consumed %d times afterwards; want 1 (left untouched)", n)
	}
}

// beginApprovedIsAtomic races BeginApproved calls of one key holding two
// approvals of its fingerprint: exactly one claims the key and consumes
// exactly one approval.
func beginApprovedIsAtomic(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, keyOf func(string) string) {
	ctx := context.Background()
	key := keyOf(run)
	approve(t, a, run, "c1", "fp")
	approve(t, a, run, "c2", "fp")
	var claims atomic.Int32
	parallel(t, func(int) error {
		_, ok, err := l.BeginApproved(ctx, key, "w", run, "fp")
		if ok {
			claims.Add(1)
		}
		return err
	})
	if n := claims.Load(); n != 1 {
		t.Fatalf("%d concurrent BeginApproved(%q) calls made %d claims; want exactly 1", Concurrency, key, n)
	}
	if n := consumes(t, a, run, "fp"); n != 1 {
		t.Fatalf("after one claim of two approvals, Consume succeeded %d times; want 1 (none lost, none doubled)", n)
	}
}

// oneApprovalOneClaimAcrossKeys races BeginApproved calls of many keys
// (one write under as many idempotency keys, the first the case's key)
// holding one approval: exactly one claims.
func oneApprovalOneClaimAcrossKeys(t *testing.T, l guard.ApprovingWriteLedger, a guard.Approvals, run string, keyOf func(string) string) {
	ctx := context.Background()
	key := keyOf(run)
	approve(t, a, run, "c1", "fp")
	var claims atomic.Int32
	parallel(t, func(i int) error {
		k := key
		if i > 0 {
			k = fmt.Sprintf("%s/%d", key, i)
		}
		_, ok, err := l.BeginApproved(ctx, k, "w", run, "fp")
		if ok {
			claims.Add(1)
		}
		return err
	})
	if n := claims.Load(); n != 1 {
		t.Fatalf("%d concurrent BeginApproved calls of distinct keys and one approval made %d claims; want exactly 1", Concurrency, n)
	}
}
