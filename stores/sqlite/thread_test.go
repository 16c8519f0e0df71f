package sqlite_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// A thread of 1,000 messages (300 under the race detector) on one SQLite
// file: every prompt holds at
// most MaxTokens of earlier turns, and what the process holds does not
// grow with the thread: the heap in use after the last message is within
// 2 MB of the heap after message 300 (100) (measured: 0.7 MB; the loop's cache
// of opened turns, bounded at 1,024 turns of about 1 KB here, is the only
// state that grows with the turns it has seen), while the file holds
// every turn and its evidence.
func TestThreadThousandMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 messages on SQLite")
	}
	n, mid := 1000, 300
	if raceEnabled { // 70 s under the race detector on 2 loaded cores: 300 messages, compared at 100
		n, mid = 300, 100
	}
	const budget = 2000
	s := open(t, nil)
	in := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"order_id": {Type: "string"}}, Required: []string{"order_id"}}
	status := &tool.Tool{Name: "order_status", InputSchema: in, Effect: tool.Read, Params: map[string]tool.Source{"order_id": tool.User()},
		Func: func(context.Context, tool.Request) (any, error) { return map[string]string{"status": "shipped"}, nil }}
	tokens := func(m react.Message) int { return len(m.Content) + 8 }
	worst := 0
	// A model that keeps nothing (reacttest's records every request).
	model := react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == react.RoleTool {
			return reacttest.Text("It has shipped."), nil
		}
		sum := 0
		for _, m := range req.Messages[1 : len(req.Messages)-1] {
			if !strings.HasPrefix(m.Content, "[") {
				sum += tokens(m)
			}
		}
		worst = max(worst, sum)
		return reacttest.Calls(reacttest.Call("c1", "order_status", `{"order_id":"A-17"}`)), nil
	})
	loop, err := react.New(react.Config{
		Model: model, Tools: tool.MustCatalog(status), Observer: react.DiscardObserver,
		Guards:  &guard.Options{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger()},
		Threads: s.Threads(), Runs: s.Runs(), Claims: s.Claims(), Audit: s.Audit(),
		History: react.HistoryPolicy{MaxTurns: 1 << 20, MaxTokens: budget, Tokens: tokens},
	})
	if err != nil {
		t.Fatal(err)
	}
	node := react.Node{Tools: []string{"order_status"}, TextAnswers: true}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var atMid uint64
	start := time.Now()
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("Where is my order? (%d)", i)
		if i == 1 {
			text = "My order is A-17."
		}
		res, err := loop.Run(bg, node, text, react.InThread("long"))
		if err != nil || res.Status != react.Finished || res.Turn != i {
			t.Fatalf("message %d: %v, %v, turn %d", i, res.Status, err, res.Turn)
		}
		if i > 1 && res.Calls[0].Outcome.String() != "SUCCESS" {
			t.Fatalf("message %d: A-17 of message 1 refused: %+v", i, res.Calls[0])
		}
		if i == mid {
			atMid = heap()
		}
	}
	atEnd := heap()
	runtime.KeepAlive(loop) // its cache of opened turns is part of what the process holds
	t.Logf("%d messages in %v; heap in use after message %d: %d B, after %d: %d B", n, time.Since(start).Round(time.Millisecond), mid, atMid, n, atEnd)
	if worst > budget {
		t.Errorf("a prompt held %d tokens of earlier turns; the budget is %d", worst, budget)
	}
	if atEnd > atMid+2<<20 {
		t.Errorf("the heap grew from %d to %d B between messages %d and %d; want at most 2 MB (flat)", atMid, atEnd, mid, n)
	}
	turns, err := s.Threads().Turns(bg, "long", 1, n+1)
	if err != nil || len(turns) != n {
		t.Fatalf("the file holds %d turns, %v; want %d", len(turns), err, n)
	}
}
