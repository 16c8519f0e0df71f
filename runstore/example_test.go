package runstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// A user double-clicks "approve": both requests present the same snapshot,
// and only the first claim goes on.
func ExampleMemoryClaims() {
	claims := runstore.NewMemoryClaims()
	for i := range 2 {
		ok, _ := claims.Claim(context.Background(), "run-1", "snapshot-a")
		fmt.Printf("request %d resumes: %v\n", i+1, ok)
	}
	// Output:
	// request 1 resumes: true
	// request 2 resumes: false
}

// A resume that got the run to its next stop settles its claim: the
// snapshot is spent for good, and Release no longer frees it.
func ExampleMemoryClaims_Settle() {
	ctx := context.Background()
	claims := runstore.NewMemoryClaims()
	ok, _ := claims.Claim(ctx, "run-1", "snapshot-a")
	fmt.Println("claimed:", ok)
	_ = claims.Settle(ctx, "run-1", "snapshot-a")
	_ = claims.Release(ctx, "run-1", "snapshot-a")
	ok, _ = claims.Claim(ctx, "run-1", "snapshot-a")
	fmt.Println("claimed after it settled:", ok)
	// Output:
	// claimed: true
	// claimed after it settled: false
}

// An approvals inbox lists the runs of the signed-in owner waiting for an
// approval, oldest first, a page at a time. What each run waits for (the
// write, its arguments) is read from the sealed snapshot with react's
// Loop.Pending, never from the listing.
func ExampleMemory_List() {
	ctx := context.Background()
	store := runstore.NewMemory()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i, user := range []string{"alice", "bob", "alice", "alice"} {
		_ = store.Save(ctx, runstore.Run{
			ID: fmt.Sprintf("run-%d", i+1), Node: "sites", Kind: runstore.Approval,
			Owner:    runstore.Owner{Tenant: "acme", User: user},
			Snapshot: []byte(`{"sealed":"…"}`), Stopped: t0.Add(time.Duration(i) * time.Minute),
		})
	}
	_ = store.Save(ctx, runstore.Run{ID: "run-9", Node: "sites", Kind: runstore.Approval,
		Owner: runstore.Owner{Tenant: "beta", User: "alice"}, Snapshot: []byte(`{}`), Stopped: t0})

	f := runstore.Filter{Kind: runstore.Approval, Owner: &runstore.Owner{Tenant: "acme", User: "alice"}, Limit: 2}
	for {
		page, err := store.List(ctx, f)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range page.Runs {
			fmt.Println(r.ID, r.Owner, r.Stopped.Format(time.Kitchen))
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	// Output:
	// run-1 acme/alice 9:00AM
	// run-3 acme/alice 9:02AM
	// run-4 acme/alice 9:03AM
}

// The audit keeps one record per decided suspension: a decision delivered
// twice is answered with the first one.
func ExampleMemoryAudit() {
	ctx := context.Background()
	audit := runstore.NewMemoryAudit()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	d := runstore.Decision{Run: "run-1", Suspension: "s-1", Kind: runstore.Approved, CallID: "c1",
		Tool: "pay", Owner: runstore.Owner{Tenant: "acme"}, By: "alice", At: at}
	_, appended, _ := audit.Record(ctx, d)
	fmt.Println("first:", appended)
	late := d
	late.Kind, late.By = runstore.Declined, "bob"
	kept, appended, _ := audit.Record(ctx, late)
	fmt.Println("second:", appended, "kept:", kept.Kind, "by", kept.By)
	// Output:
	// first: true
	// second: false kept: approved by alice
}
