package react_test

import (
	"context"
	"fmt"
	"iter"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// chunked is a streaming model that answers each turn in the given
// chunks.
type chunked [][]react.Chunk

func (c *chunked) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	return react.Collect(c.GenerateStream(ctx, req))
}

func (c *chunked) GenerateStream(context.Context, react.Request) iter.Seq2[react.Chunk, error] {
	turn := (*c)[0]
	*c = (*c)[1:]
	return func(yield func(react.Chunk, error) bool) {
		for _, ch := range turn {
			if !yield(ch, nil) {
				return
			}
		}
	}
}

// A run streamed to the host: text as the model writes it, each call's
// verdict, the suspension with what the person must decide.
func ExampleLoop_RunStream() {
	model := &chunked{
		{{Text: "Creating "}, {Text: "your shop."}, {Call: &react.CallDelta{ID: "w1", Name: "create_site", Args: `{"name":`}}, {Call: &react.CallDelta{Args: `"shop"}`}}},
		{{Call: &react.CallDelta{ID: "a1", Name: react.ToolApproval, Args: `{"tool":"create_site"}`}}},
	}
	loop, _ := react.New(react.Config{Model: model, Tools: exampleCatalog(), Observer: react.DiscardObserver})
	node := react.Node{Tools: []string{"create_site"}}
	for e, err := range loop.RunStream(context.Background(), node, "create a site called shop") {
		switch e.Kind {
		case react.EventTextDelta:
			fmt.Printf("text %q\n", e.Text)
		case react.EventToolInvoked:
			fmt.Println("verdict", e.Tool.Tool, e.Tool.Outcome, e.Tool.Code)
		case react.EventSuspended:
			a := e.Suspend.Suspension.Approval
			fmt.Printf("approve %s %s?\n", a.Tool, a.Args)
		case react.EventRunEnd:
			fmt.Println("end", e.RunEnd.Result.Status, err)
		default:
		}
	}
	// Output:
	// text "Creating "
	// text "your shop."
	// verdict create_site DEFERRED APPROVAL_REQUIRED
	// approve create_site {"name":"shop"}?
	// end suspended <nil>
}

// The person's decision resumes the run, streamed too.
func ExampleLoop_ResumeStream() {
	model := &chunked{
		{{Call: &react.CallDelta{ID: "w1", Name: "create_site", Args: `{"name":"shop"}`}}},
		{{Call: &react.CallDelta{ID: "a1", Name: react.ToolApproval, Args: `{"tool":"create_site"}`}}},
		{{Call: &react.CallDelta{ID: "w2", Name: "create_site", Args: `{"name":"shop"}`}}},
		{{Text: "Done: "}, {Text: "shop is live."}, {Call: &react.CallDelta{ID: "f", Name: react.ToolFinish, Args: `{}`}}},
	}
	runs := runstore.NewMemory()
	loop, _ := react.New(react.Config{Model: model, Tools: exampleCatalog(), Observer: react.DiscardObserver, Runs: runs})
	res, _ := loop.Run(context.Background(), react.Node{Tools: []string{"create_site"}}, "create a site called shop")
	for e, err := range loop.ResumeStream(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket)) {
		switch e.Kind {
		case react.EventTextDelta:
			fmt.Printf("text %q\n", e.Text)
		case react.EventToolInvoked:
			fmt.Println("verdict", e.Tool.Tool, e.Tool.Outcome)
		case react.EventRunEnd:
			fmt.Println("end", e.RunEnd.Result.Status, err)
		default:
		}
	}
	// Output:
	// verdict builtin_node_approval SUCCESS
	//   (create_site runs)
	// verdict create_site SUCCESS
	// text "Done: "
	// text "shop is live."
	// verdict builtin_node_finish SUCCESS
	// end finished <nil>
}

// Collect assembles a streamed turn: what an adapter's Generate returns.
func ExampleCollect() {
	model := &chunked{{
		{Text: "Paying ", ID: "r1"},
		{Text: "alice."},
		{Call: &react.CallDelta{Index: 0, ID: "c1", Name: "pay", Args: `{"to":`}},
		{Call: &react.CallDelta{Index: 0, Args: `"alice"}`}},
		{FinishReason: "tool_calls", Usage: &react.Usage{InputTokens: 12, OutputTokens: 9}},
	}}
	resp, err := react.Collect(model.GenerateStream(context.Background(), react.Request{}))
	fmt.Println(resp.Text, resp.ToolCalls[0].Name, string(resp.ToolCalls[0].Args), resp.FinishReason, resp.Usage.OutputTokens, err)
	// Output:
	// Paying alice. pay {"to":"alice"} tool_calls 9 <nil>
}

// A run kept in the run store resumes by its id, streamed: what an
// approvals page does with the person's decision.
func ExampleLoop_ResumeRunStream() {
	model := &chunked{
		{{Call: &react.CallDelta{ID: "w1", Name: "create_site", Args: `{"name":"shop"}`}}},
		{{Call: &react.CallDelta{ID: "a1", Name: react.ToolApproval, Args: `{"tool":"create_site"}`}}},
		{{Text: "Not created, as you asked."}, {Call: &react.CallDelta{ID: "f", Name: react.ToolFinish, Args: `{}`}}},
	}
	loop, _ := react.New(react.Config{Model: model, Tools: exampleCatalog(), Observer: react.DiscardObserver, Runs: runstore.NewMemory()})
	res, _ := loop.Run(context.Background(), react.Node{Tools: []string{"create_site"}}, "create a site called shop")
	for e, err := range loop.ResumeRunStream(context.Background(), res.Run, react.Decline(res.Suspension.Ticket, "not now")) {
		switch e.Kind {
		case react.EventTextDelta:
			fmt.Printf("text %q\n", e.Text)
		case react.EventRunEnd:
			fmt.Println("end", e.RunEnd.Result.Status, err)
		default:
		}
	}
	// Output:
	// text "Not created, as you asked."
	// end finished <nil>
}
