package react_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// replay returns a model that answers with turns in order.
func replay(turns ...react.Response) react.Model {
	n := 0
	return react.ModelFunc(func(context.Context, react.Request) (react.Response, error) {
		if n >= len(turns) {
			return react.Response{}, fmt.Errorf("no more turns")
		}
		n++
		return turns[n-1], nil
	})
}

func tc(id, name, args string) react.Response {
	return react.Response{ToolCalls: []react.ToolCall{{ID: id, Name: name, Args: json.RawMessage(args)}}}
}

type site struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

func exampleCatalog() *tool.Catalog {
	list := tool.New("list_sites", "List the user's websites.", func(context.Context, struct{}) ([]site, error) {
		return []site{{ID: 7, Name: "blog"}}, nil
	})
	list.Effect = tool.Read
	type createIn struct {
		Name string `json:"name"`
	}
	create := tool.New("create_site", "Create a website.", func(_ context.Context, in createIn) (site, error) {
		fmt.Println("  (create_site runs)")
		return site{ID: 42, Name: in.Name}, nil
	})
	create.Effect = tool.Write
	return tool.MustCatalog(list, create)
}

func printTools(res react.Result) {
	for _, m := range res.Transcript {
		if m.Role == react.RoleTool {
			fmt.Printf("  %s: %s\n", m.ToolCallID, m.Content)
		}
	}
}

func ExampleNew() {
	loop, err := react.New(react.Config{
		Model:    replay(tc("c1", "list_sites", `{}`), tc("c2", react.ToolFinish, `{"summary":"one site"}`)),
		Tools:    exampleCatalog(),
		Observer: react.DiscardObserver,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := loop.Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "which sites do I have?")
	fmt.Println(res.Status, res.Summary, err)
	// Output: finished one site <nil>
}

func ExampleLoop_Run() {
	loop, _ := react.New(react.Config{
		Model: replay(
			tc("c1", "list_sites", `{}`),
			tc("c2", react.ToolOutputSet, `{"key":"site_id","value":7,"sourceType":"tool_result","sourceRef":"c1"}`),
			tc("c3", react.ToolFinish, `{}`),
		),
		Tools:    exampleCatalog(),
		Observer: react.DiscardObserver,
	})
	node := react.Node{
		Name:         "find_blog",
		Instructions: "Find the id of the user's blog.",
		Tools:        []string{"list_sites"},
		Outputs:      []react.Output{{Key: "site_id", Required: true}},
	}
	res, err := loop.Run(context.Background(), node, "what is the id of my blog?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, string(res.Outputs["site_id"].Value))
	printTools(res)
	// Output:
	// finished 7
	//   c1: list_sites succeeded
	// [{"id":7,"name":"blog"}]
	//   c2: output site_id is set
	//   c3: the node is finished
}

func ExampleLoop_Resume() {
	// The stores hold the server-side truth (which call waits for
	// approval, which writes ran) and the key seals snapshots: every
	// process that resumes runs shares both. In production the stores are
	// durable (stores/postgres) and the key comes from a secret manager.
	stores := &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	key := bytes.Repeat([]byte("k"), react.MinSnapshotKey) // use 32 bytes from crypto/rand
	cfg := react.Config{
		Model: replay(
			tc("w1", "create_site", `{"name":"shop"}`),
			tc("a", react.ToolApproval, `{"tool":"create_site","reason":"the user asked for a shop"}`),
		),
		Tools:        exampleCatalog(),
		Guards:       stores,
		SnapshotKeys: [][]byte{key},
		Observer:     react.DiscardObserver,
		NewRunID:     func(context.Context) string { return "run-42" },
	}
	loop, _ := react.New(cfg)
	node := react.Node{Tools: []string{"create_site"}}
	res, _ := loop.Run(context.Background(), node, "create a site called shop")
	fmt.Println(res.Status, res.Suspension.Kind, res.Suspension.Approval.Tool, string(res.Suspension.Approval.Args))
	printTools(res)

	// Later, perhaps in another process: a new Loop over the same stores
	// and key resumes the stored snapshot with the user's decision. A
	// second resume of the same snapshot would be refused
	// (react.ErrAlreadyResumed).
	cfg.Model = replay(tc("w2", "create_site", `{"name":"shop"}`), tc("f", react.ToolFinish, `{}`))
	later, _ := react.New(cfg)
	res, err := later.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	fmt.Println(res.Status, err)
	printTools(res)
	// Output:
	// suspended approval create_site {"name":"shop"}
	//   w1: the write create_site needs the user's approval. Next: call builtin_node_approval with tool create_site to ask the user to approve this exact call; do not call create_site again before the answer
	//   (create_site runs)
	// finished <nil>
	//   w1: the write create_site needs the user's approval. Next: call builtin_node_approval with tool create_site to ask the user to approve this exact call; do not call create_site again before the answer
	//   a: the user approved the call of create_site
	//   w2: create_site succeeded
	// {"id":42,"name":"shop"}
	//   f: the node is finished
}

// A service keeps stopped runs in a run store (durable in production:
// stores/postgres, stores/sqlite), names each run's owner, lists the
// approvals waiting for the signed-in owner in an inbox — read from the
// sealed snapshots, never from the store's columns — and resumes a run by
// its id with the decision of the person who saw it: the decision carries
// the suspension's ticket and who made it, and a decision delivered twice
// is refused.
func ExampleLoop_ResumeRun() {
	runs := runstore.NewMemory()
	stores := &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	loop, _ := react.New(react.Config{
		Model: replay(
			tc("w1", "create_site", `{"name":"shop"}`),
			tc("a", react.ToolApproval, `{"tool":"create_site","reason":"the user asked for a shop"}`),
			tc("w2", "create_site", `{"name":"shop"}`),
			tc("f", react.ToolFinish, `{}`),
		),
		Tools:    exampleCatalog(),
		Guards:   stores,
		Runs:     runs,
		Audit:    runstore.NewMemoryAudit(),
		Observer: react.DiscardObserver,
		NewRunID: func(context.Context) string { return "run-7" },
	})
	alice := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
	_, _ = loop.Run(context.Background(), react.Node{Name: "shop", Tools: []string{"create_site"}}, "create a site called shop", alice)

	// The inbox of alice: what each run waits for, as sealed.
	inbox, _ := loop.ListPending(context.Background(), runstore.Filter{Kind: runstore.Approval}, alice)
	p := inbox.Runs[0]
	w := p.Suspension.Approval
	fmt.Println(p.Run, p.Node, w.Tool, string(w.Args), "-", p.Suspension.Reason)

	// Bob of another tenant sees nothing and can decide nothing.
	bob := react.WithOwner(react.Owner{Tenant: "beta", User: "bob"})
	_, err := loop.ResumeRun(context.Background(), "run-7", react.Approve(p.Suspension.Ticket), bob)
	fmt.Println("bob:", errors.Is(err, react.ErrNotOwner))

	// Alice approves what she saw.
	approve := react.Approve(p.Suspension.Ticket).DecidedBy("alice@acme")
	res, err := loop.ResumeRun(context.Background(), "run-7", approve, alice)
	fmt.Println(res.Status, err)
	_, err = loop.ResumeRun(context.Background(), "run-7", approve, alice) // a double click
	fmt.Println("again:", errors.Is(err, react.ErrAlreadyResumed))
	h, _ := loop.History(context.Background(), "run-7", alice)
	fmt.Println(h[0].Kind, h[0].Tool, "by", h[0].By)
	// Output:
	// run-7 shop create_site {"name":"shop"} - the user asked for a shop
	// bob: true
	//   (create_site runs)
	// finished <nil>
	// again: true
	// approved create_site by alice@acme
}

// Each call's three layers, in the run's result: a read that first hit a
// rate limit and recovered on retry keeps its first failure; an empty
// search is executed but insufficient, though its verdict is SUCCESS.
func ExampleResult_calls() {
	attempt := 0
	quote := tool.New("quote", "Latest price of a symbol.", func(context.Context, struct{}) (map[string]float64, error) {
		if attempt++; attempt == 1 {
			return nil, tool.RateLimited("429")
		}
		return map[string]float64{"price": 41.27}, nil
	})
	quote.Effect, quote.Retry = tool.Read, &tool.RetryPolicy{Attempts: 3}
	search := tool.New("search", "Search the docs.", func(context.Context, struct{}) ([]string, error) { return nil, nil })
	search.Effect = tool.Read
	loop, _ := react.New(react.Config{
		Model: replay(tc("q", "quote", `{}`), tc("s", "search", `{}`), tc("f", react.ToolFinish, `{}`)),
		Tools: tool.MustCatalog(quote, search),
	})
	res, _ := loop.Run(context.Background(), react.Node{Tools: []string{"quote", "search"}}, "price of ACME?")
	for _, c := range res.Calls {
		fmt.Printf("%s %s: call=%s execution=%s business=%s attempts=%d", c.Tool, c.Outcome, c.Call, c.Execution, c.Business, c.Attempts)
		if c.Attempts > 1 {
			fmt.Printf(" first=%s %s", c.First.Outcome, c.First.Code)
		}
		fmt.Println()
	}
	fmt.Println("goal:", res.Goal)
	// Output:
	// quote SUCCESS: call=valid execution=ok business=evidence attempts=2 first=FAILED TOOL_RATE_LIMITED
	// search SUCCESS: call=valid execution=empty business=insufficient attempts=1
	// builtin_node_finish SUCCESS: call=valid execution=none business=none attempts=0
	// goal: unverified
}

// Per-layer metrics with their denominators: pass a Metrics as (one of)
// the observers, and record the host's verdict on each task.
func ExampleMetrics() {
	var m react.Metrics
	loop, _ := react.New(react.Config{
		Model:    replay(tc("l", "list_sites", `{}`), tc("f", react.ToolFinish, `{}`)),
		Tools:    exampleCatalog(),
		Observer: &m, // with the log: react.Observers(react.NewLogObserver(nil), &m)
	})
	_, _ = loop.Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "my sites?")
	m.RecordTask(true) // the user accepted the answer
	s := m.Snapshot()
	fmt.Println("call admission:", s.Call.Admission())
	fmt.Println("execution success:", s.Execution.Success())
	fmt.Println("new evidence:", s.Business.NewEvidence())
	fmt.Println("sub-goals met:", s.Business.SubGoals())
	fmt.Println("final task:", s.Business.FinalTask())
	// Output:
	// call admission: 2/2 (100.0%)
	// execution success: 1/1 (100.0%)
	// new evidence: 1/1 (100.0%)
	// sub-goals met: 0/1 (0.0%)
	// final task: 1/1 (100.0%)
}

// timer follows model and tool calls: an Observer receives every event
// of a run and picks the kinds it needs.
func timer(_ context.Context, e react.Event) {
	switch e.Kind {
	case react.EventModelStart:
		fmt.Printf("model call %d starts (%d messages)\n", e.Round, len(e.ModelStart.Request.Messages))
	case react.EventModelEnd:
		fmt.Printf("model call %d ends: %d tool call(s), finish reason %q\n", e.Round, len(e.ModelEnd.Response.ToolCalls), e.ModelEnd.Response.FinishReason)
	case react.EventToolStart:
		fmt.Printf("  %s starts\n", e.ToolStart.Tool)
	case react.EventToolEnd:
		fmt.Printf("  %s ends: %s\n", e.ToolEnd.Tool, e.ToolEnd.Outcome)
	default:
	}
}

func ExampleObserverFunc() {
	finishReason := func(r react.Response, reason string) react.Response { r.FinishReason = reason; return r }
	loop, _ := react.New(react.Config{
		Model: replay(
			finishReason(tc("c1", "list_sites", `{}`), "tool_calls"),
			finishReason(tc("c2", react.ToolFinish, `{}`), "tool_calls"),
		),
		Tools:    exampleCatalog(),
		Observer: react.ObserverFunc(timer),
	})
	res, _ := loop.Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "list my sites")
	fmt.Println(res.Status)
	// Output:
	// model call 1 starts (2 messages)
	// model call 1 ends: 1 tool call(s), finish reason "tool_calls"
	//   list_sites starts
	//   list_sites ends: SUCCESS
	// model call 2 starts (4 messages)
	// model call 2 ends: 1 tool call(s), finish reason "tool_calls"
	//   builtin_node_finish starts
	//   builtin_node_finish ends: SUCCESS
	// finished
}

// With Node.HostApproval the run suspends as soon as the write gate defers
// a write, without waiting for the model to call builtin_node_approval;
// approved, the write runs at once and its result answers the model's call.
func ExampleNode_hostApproval() {
	stores := &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	cfg := react.Config{
		Model:    replay(tc("w1", "create_site", `{"name":"shop"}`)),
		Tools:    exampleCatalog(),
		Guards:   stores,
		Observer: react.DiscardObserver,
	}
	loop, _ := react.New(cfg)
	node := react.Node{Tools: []string{"create_site"}, HostApproval: true}
	res, _ := loop.Run(context.Background(), node, "create a site called shop")
	fmt.Println(res.Status, res.Suspension.Kind, res.Suspension.CallID, res.Suspension.Approval.Tool, len(res.Transcript))

	cfg.Model = replay(tc("f", react.ToolFinish, `{}`))
	later, _ := react.New(cfg)
	res, err := later.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	fmt.Println(res.Status, err)
	printTools(res)
	// Output:
	// suspended approval w1 create_site 2
	//   (create_site runs)
	// finished <nil>
	//   w1: create_site succeeded
	// {"id":42,"name":"shop"}
	//   f: the node is finished
}
