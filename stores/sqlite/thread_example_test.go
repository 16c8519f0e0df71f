package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/stores/sqlite"
	"github.com/reactguard/reactguard/tool"
)

// A conversation that outlives its process: message 1 is answered by one
// Store on the file, which then closes (the process ends); message 2, to
// the same thread, is answered by another. The order id the user gave in
// message 1 is still a user-given source for the parameter contract in
// message 2, though the history policy sends no earlier turn to the model.
// Every process of a conversation needs the same SnapshotKeys: turns are
// sealed with them.
func ExampleStore_Threads() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "reactguard-threads")
	defer func() { _ = os.RemoveAll(dir) }()
	file := filepath.Join(dir, "state.db")

	type orderArgs struct {
		OrderID string `json:"order_id"`
	}
	status := tool.New("order_status", "Look up an order.", func(_ context.Context, in orderArgs) (map[string]string, error) {
		return map[string]string{"order": in.OrderID, "status": "shipped"}, nil
	})
	status.Effect, status.Params = tool.Read, map[string]tool.Source{"order_id": tool.User()}
	model := react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == react.RoleTool:
			return react.Response{Text: strings.ReplaceAll(last.Content, "\n", " ")}, nil
		case strings.Contains(last.Content, "Where"):
			return react.Response{ToolCalls: []react.ToolCall{{ID: "c1", Name: "order_status", Args: json.RawMessage(`{"order_id":"A-17"}`)}}}, nil
		}
		return react.Response{Text: "Noted."}, nil
	})
	node := react.Node{Tools: []string{"order_status"}, TextAnswers: true}
	alice := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})

	// One process's store and loop; the thread's turns and evidence go to
	// the file.
	message := func(text string) {
		store, err := sqlite.Open(ctx, file, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer func() { _ = store.Close() }()
		if err := store.Migrate(ctx); err != nil {
			fmt.Println(err)
			return
		}
		loop, err := react.New(react.Config{
			Model: model, Tools: tool.MustCatalog(status), Observer: react.DiscardObserver,
			Guards:       &guard.Options{Ledger: store.Evidence(), Approvals: store.Approvals(), WriteLedger: store.WriteLedger()},
			Claims:       store.Claims(),
			Runs:         store.Runs(),
			Threads:      store.Threads(),
			History:      react.HistoryPolicy{MaxTurns: -1}, // the prompt holds this message only
			SnapshotKeys: [][]byte{[]byte("an example key of 32 bytes......")},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := loop.Run(ctx, node, text, react.InThread("chat-42"), alice)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d %s: %s\n", res.Turn, res.Status, res.Summary)
	}
	message("Hi, my order is A-17.") // the first process
	message("Where is my order?")    // the second, after the first closed its store
	// Output:
	// 1 finished: Noted.
	// 2 finished: order_status succeeded {"order":"A-17","status":"shipped"}
}
