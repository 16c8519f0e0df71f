package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/stores/sqlite"
)

// Open a store in a file, migrate it, and give its stores to a loop: its
// runs then survive the process, and a second process resumes them.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "reactguard-example")
	defer func() { _ = os.RemoveAll(dir) }()

	store, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = store.Close() }()
	if err := store.Migrate(ctx); err != nil { // idempotent: every process may call it
		fmt.Println(err)
		return
	}
	_, err = react.New(react.Config{
		Model: react.ModelFunc(func(context.Context, react.Request) (react.Response, error) { return react.Response{}, nil }),
		Guards: &guard.Options{
			Ledger: store.Evidence(), Approvals: store.Approvals(), WriteLedger: store.WriteLedger(),
		},
		Claims: store.Claims(),
		Runs:   store.Runs(),
	})
	fmt.Println("loop:", err)

	// The approvals inbox of every process sharing the file.
	page, err := store.Runs().List(ctx, runstore.Filter{Kind: runstore.Approval})
	fmt.Println("waiting for approval:", len(page.Runs), err)

	pruned, err := store.Prune(ctx, time.Now().Add(-30*24*time.Hour)) // the retention
	fmt.Println("pruned runs:", pruned.Runs, err)
	// Output:
	// loop: <nil>
	// waiting for approval: 0 <nil>
	// pruned runs: 0 <nil>
}

// Copy a live database: Backup writes a consistent copy while the store
// stays in use (a plain cp of the file and its -wal may be damaged), and
// the copy opens as a store of its own.
func ExampleStore_Backup() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "reactguard-backup")
	defer func() { _ = os.RemoveAll(dir) }()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = store.Close() }()
	if err := store.Migrate(ctx); err != nil {
		fmt.Println(err)
		return
	}
	_ = store.Runs().Save(ctx, runstore.Run{ID: "r1", Kind: runstore.Interrupted, Snapshot: []byte("{}"), Stopped: time.Now()})

	copyPath := filepath.Join(dir, "backup-2026-12-02.db")
	if err := store.Backup(ctx, copyPath); err != nil {
		fmt.Println(err)
		return
	}
	restored, err := sqlite.Open(ctx, copyPath, nil) // quick_check passes: the copy is whole
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = restored.Close() }()
	_, ok, err := restored.Runs().Get(ctx, "r1")
	fmt.Println(ok, err)
	// Output: true <nil>
}
