package threadstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
)

// A run takes its thread, and a second message to the same thread is
// refused until the first run commits its turn. (Package react does this
// for every run started with react.InThread.)
func ExampleMemory() {
	ctx := context.Background()
	threads := threadstore.NewMemory()
	alice := runstore.Owner{Tenant: "acme", User: "alice"}

	_, lease, _ := threads.Acquire(ctx, "support-42", alice, "run-1")
	_, _, err := threads.Acquire(ctx, "support-42", alice, "run-2")
	fmt.Println(errors.Is(err, threadstore.ErrBusy))

	_ = threads.Commit(ctx, "support-42", lease, threadstore.Turn{Index: 1, Run: "run-1", Tokens: 42, Content: []byte("sealed turn")}, nil)
	th, _, _ := threads.Acquire(ctx, "support-42", alice, "run-2")
	fmt.Println(th.Turns, th.Run)
	// Output:
	// true
	// 1 run-2
}
