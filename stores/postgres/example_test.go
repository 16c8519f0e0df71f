package postgres_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/stores/postgres"
)

// Open the store every replica of a service shares, migrate it (safe when
// several processes start at once), and give its stores to the loop. It
// needs a server, so it is compiled but not run by go test.
func ExampleOpen() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), nil)
	if err != nil {
		fmt.Println(err) // names the address when the server is unreachable
		return
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		fmt.Println(err)
		return
	}
	loop, err := react.New(react.Config{
		Model: react.ModelFunc(func(context.Context, react.Request) (react.Response, error) { return react.Response{}, nil }),
		Guards: &guard.Options{
			Ledger: store.Evidence(), Approvals: store.Approvals(), WriteLedger: store.WriteLedger(),
		},
		Claims:         store.Claims(),
		Runs:           store.Runs(),
		Audit:          store.Audit(),
		SnapshotKeys:   [][]byte{[]byte(os.Getenv("SNAPSHOT_KEY"))}, // 32 random bytes, the same in every replica
		SnapshotMaxAge: 30 * 24 * time.Hour,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The inbox of one owner: what each run waits for, read from its sealed
	// snapshot.
	owner := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
	page, err := loop.ListPending(ctx, runstore.Filter{Kind: runstore.Approval}, owner)
	if err != nil || len(page.Runs) == 0 {
		return
	}
	p := page.Runs[0]
	res, err := loop.ResumeRun(ctx, p.Run, react.Approve(p.Suspension.Ticket).DecidedBy("alice@acme"), owner)
	fmt.Println(res.Status, err)
}
