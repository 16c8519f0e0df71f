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

// An approvals inbox lists the runs waiting for an approval, oldest first,
// a page at a time.
func ExampleMemory_List() {
	ctx := context.Background()
	store := runstore.NewMemory()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i, tool := range []string{"create_site", "delete_site", "rename_site"} {
		_ = store.Save(ctx, runstore.Run{
			ID: fmt.Sprintf("run-%d", i+1), Node: "sites", Kind: runstore.Approval, Tool: tool,
			Snapshot: []byte(`{"sealed":"…"}`), Stopped: t0.Add(time.Duration(i) * time.Minute),
		})
	}
	_ = store.Save(ctx, runstore.Run{ID: "run-9", Node: "sites", Kind: runstore.FollowUp, Question: "Which space?",
		Snapshot: []byte(`{}`), Stopped: t0})

	f := runstore.Filter{Kind: runstore.Approval, Node: "sites", Limit: 2}
	for {
		page, err := store.List(ctx, f)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range page.Runs {
			fmt.Println(r.ID, r.Tool, r.Stopped.Format(time.Kitchen))
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	// Output:
	// run-1 create_site 9:00AM
	// run-2 delete_site 9:01AM
	// run-3 rename_site 9:02AM
}
