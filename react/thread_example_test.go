package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
	"github.com/reactguard/reactguard/tool"
)

// chatModel stands in for an LLM in the examples of conversations: it
// answers a tool result by quoting it, and a message by calling a tool.
var chatModel = react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	ask := func(tool, order string) (react.Response, error) {
		return react.Response{ToolCalls: []react.ToolCall{{ID: "c1", Name: tool, Args: json.RawMessage(`{"order_id":"` + order + `"}`)}}}, nil
	}
	switch {
	case last.Role == react.RoleTool:
		return react.Response{Text: "(" + strings.ReplaceAll(last.Content, "\n", " ") + ")"}, nil
	case strings.Contains(last.Content, "refund"):
		return ask("refund", "A-17") // the id the user gave in an earlier message
	case strings.Contains(last.Content, "Where"):
		return ask("order_status", "A-17")
	case strings.Contains(last.Content, "other"):
		return ask("order_status", "B-99") // an id nobody gave
	}
	return react.Response{Text: "Noted."}, nil
})

type orderArgs struct {
	OrderID string `json:"order_id"`
}

func deskTools() *tool.Catalog {
	status := tool.New("order_status", "Look up an order.", func(_ context.Context, in orderArgs) (map[string]string, error) {
		return map[string]string{"order": in.OrderID, "status": "shipped"}, nil
	})
	status.Effect, status.Params = tool.Read, map[string]tool.Source{"order_id": tool.User()}
	refund := tool.New("refund", "Refund an order.", func(_ context.Context, in orderArgs) (map[string]string, error) {
		fmt.Println("  (refund runs)")
		return map[string]string{"refunded": in.OrderID}, nil
	})
	refund.Effect, refund.Params = tool.Write, map[string]tool.Source{"order_id": tool.User()}
	return tool.MustCatalog(status, refund)
}

// A conversation of four messages in one thread. The order id the user
// gave in message 1 is a user-given source for the parameter contract in
// messages 2 and 3, although the history policy sends only the last turn
// with each message; the refund waits for the user's approval and runs
// once; an id the model invents is refused.
func ExampleInThread() {
	ctx := context.Background()
	loop, _ := react.New(react.Config{
		Model: chatModel, Tools: deskTools(), Observer: react.DiscardObserver,
		Threads: threadstore.NewMemory(),          // stores/sqlite, stores/postgres across processes
		Runs:    runstore.NewMemory(),             // keeps the stopped runs for ResumeRun
		History: react.HistoryPolicy{MaxTurns: 1}, // the prompt holds the last turn only
	})
	node := react.Node{Tools: []string{"order_status", "refund"}, HostApproval: true, TextAnswers: true}
	alice := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
	show := func(res react.Result, err error) react.Result {
		switch {
		case err != nil:
			fmt.Println(err)
		case res.Status == react.Suspended:
			fmt.Printf("%d %s: approve %s %s\n", res.Turn, res.Status, res.Suspension.Approval.Tool, res.Suspension.Approval.Args)
		default:
			fmt.Printf("%d %s: %s\n", res.Turn, res.Status, res.Summary)
		}
		return res
	}
	say := func(text string) react.Result {
		return show(loop.Run(ctx, node, text, react.InThread("chat-42"), alice))
	}

	say("Hi, my order is A-17.")
	res := say("Please refund it.")
	show(loop.ResumeRun(ctx, res.Run, react.Approve(res.Suspension.Ticket).DecidedBy("alice"), alice))
	say("Where is it now?")
	say("And my other order?")
	// Output:
	// 1 finished: Noted.
	// 2 suspended: approve refund {"order_id":"A-17"}
	//   (refund runs)
	// 2 finished: (refund succeeded {"refunded":"A-17"})
	// 3 finished: (order_status succeeded {"order":"A-17","status":"shipped"})
	// 4 finished: (order_id of order_status must come from the user, who has not given it yet. Next: ask the user for order_id with builtin_node_follow_up)
}

// A message to a thread whose run waits for a decision is refused; the
// host resumes that run, or lets it go with ReleaseThread.
func ExampleLoop_ReleaseThread() {
	ctx := context.Background()
	loop, _ := react.New(react.Config{Model: chatModel, Tools: deskTools(), Observer: react.DiscardObserver, Threads: threadstore.NewMemory()})
	node := react.Node{Tools: []string{"order_status", "refund"}, HostApproval: true, TextAnswers: true}
	_, _ = loop.Run(ctx, node, "My order is A-17.", react.InThread("chat-7"))
	res, _ := loop.Run(ctx, node, "Please refund it.", react.InThread("chat-7"))
	fmt.Println(res.Status)

	_, err := loop.Run(ctx, node, "Never mind.", react.InThread("chat-7"))
	var busy *react.ThreadBusyError
	fmt.Println(errors.As(err, &busy), busy.Waiting)

	_ = loop.ReleaseThread(ctx, "chat-7") // the approval will not come
	res, _ = loop.Run(ctx, node, "Never mind.", react.InThread("chat-7"))
	fmt.Println(res.Turn, res.Summary)
	// Output:
	// suspended
	// true true
	// 2 Noted.
}

// Turns reads a conversation back, from its sealed turns.
func ExampleLoop_Turns() {
	ctx := context.Background()
	loop, _ := react.New(react.Config{Model: chatModel, Tools: deskTools(), Observer: react.DiscardObserver, Threads: threadstore.NewMemory()})
	node := react.Node{Tools: []string{"order_status"}, TextAnswers: true}
	for _, text := range []string{"My order is A-17.", "Where is it?"} {
		_, _ = loop.Run(ctx, node, text, react.InThread("chat-9"))
	}
	turns, _ := loop.Turns(ctx, "chat-9", 1, 10)
	for _, t := range turns {
		fmt.Printf("%d %q → %q\n", t.Index, t.User, t.Answer)
	}
	fmt.Println(turns[1].Messages[1].ToolCalls[0].ID) // an earlier call, marked with its turn
	// Output:
	// 1 "My order is A-17." → "Noted."
	// 2 "Where is it?" → "(order_status succeeded {\"order\":\"A-17\",\"status\":\"shipped\"})"
	// turn2_c1
}

// A summarizer keeps the gist of the turns that leave the prompt; the
// guards still know everything they held.
func ExampleHistoryPolicy() {
	ctx := context.Background()
	var prompt []react.Message
	model := react.ModelFunc(func(ctx context.Context, req react.Request) (react.Response, error) {
		prompt = req.Messages
		return chatModel.Generate(ctx, req)
	})
	loop, _ := react.New(react.Config{Model: model, Tools: deskTools(), Observer: react.DiscardObserver, Threads: threadstore.NewMemory(),
		History: react.HistoryPolicy{MaxTurns: 1, Summarize: func(_ context.Context, previous string, turns []react.Turn) (string, error) {
			return fmt.Sprintf("%d messages about orders", turns[len(turns)-1].Index), nil
		}}})
	node := react.Node{Tools: []string{"order_status"}, TextAnswers: true}
	for _, text := range []string{"My order is A-17.", "Thanks.", "Where is it?"} {
		_, _ = loop.Run(ctx, node, text, react.InThread("chat-3"))
	}
	fmt.Println(prompt[1].Content)
	// Output:
	// [Summary of the first 1 messages of this conversation, written by the host, not the user's words: 1 messages about orders]
}

// The outputs of a node declared from a Go struct, and read back typed.
func ExampleOutputsOf() {
	type result struct {
		Order  string `json:"order" jsonschema:"the order looked up" accepts:"user,tool_result"`
		Status string `json:"status" accepts:"tool_result"`
	}
	loop, _ := react.New(react.Config{
		Model: replay(tc("c1", "order_status", `{"order_id":"A-17"}`),
			tc("c2", react.ToolOutputSet, `{"key":"order","value":"A-17","sourceType":"user"}`),
			tc("c3", react.ToolOutputSet, `{"key":"status","value":7,"sourceType":"tool_result","sourceRef":"c1"}`),
			tc("c4", react.ToolOutputSet, `{"key":"status","value":"shipped","sourceType":"tool_result","sourceRef":"c1"}`),
			tc("c5", react.ToolFinish, `{}`)),
		Tools: deskTools(), Observer: react.DiscardObserver,
	})
	node := react.Node{Tools: []string{"order_status"}, Outputs: react.OutputsOf[result]()}
	res, _ := loop.Run(context.Background(), node, "Where is order A-17?")
	fmt.Println(res.Calls[2].Code) // 7 is not a string
	out, err := react.OutputsAs[result](res)
	fmt.Printf("%+v %v\n", out, err)
	// Output:
	// OUTPUT_VALUE_INVALID
	// {Order:A-17 Status:shipped} <nil>
}
