package reacttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

func ExampleScript() {
	m := reacttest.Script(
		reacttest.Calls(reacttest.Call("c1", "list_spaces", `{}`)),
		reacttest.Text("all done"),
	)
	ctx := context.Background()
	req := react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "build me a site"}}}
	for range 3 {
		resp, err := m.Generate(ctx, req)
		switch {
		case errors.Is(err, reacttest.ErrScriptExhausted):
			fmt.Println("script exhausted")
		case len(resp.ToolCalls) > 0:
			fmt.Println("call", resp.ToolCalls[0].Name, string(resp.ToolCalls[0].Args))
		default:
			fmt.Println("text", resp.Text)
		}
	}
	fmt.Println("requests recorded:", len(m.Requests()))
	// Output:
	// call list_spaces {}
	// text all done
	// script exhausted
	// requests recorded: 3
}

func ExampleSteps() {
	// The second turn reads the result of the first one.
	m := reacttest.Steps(
		reacttest.Reply(reacttest.Calls(reacttest.Call("c1", "list_spaces", `{}`))),
		func(req react.Request) (react.Response, error) {
			res, _ := reacttest.ToolMessage(req, "c1")
			return reacttest.Text("the spaces are " + res.Content), nil
		},
	)
	ctx := context.Background()
	first, _ := m.Generate(ctx, react.Request{})
	second, _ := m.Generate(ctx, react.Request{Messages: []react.Message{
		{Role: react.RoleAssistant, ToolCalls: first.ToolCalls},
		{Role: react.RoleTool, ToolCallID: "c1", ToolName: "list_spaces", Content: `["sp-1"]`},
	}})
	fmt.Println(second.Text)
	// Output: the spaces are ["sp-1"]
}

func ExampleFunc() {
	// A model that answers every tool result by finishing, and starts by
	// listing spaces.
	m := reacttest.Func(func(req react.Request) react.Response {
		if len(reacttest.LastToolMessages(req)) == 0 {
			return reacttest.Calls(reacttest.Call("c1", "list_spaces", `{}`))
		}
		return reacttest.Calls(reacttest.Call("c2", "builtin_node_finish", `{"summary":"listed"}`))
	})
	r, _ := m.Generate(context.Background(), react.Request{})
	fmt.Println(r.ToolCalls[0].Name)
	// Output: list_spaces
}

func ExampleSucceed() {
	spaces := reacttest.Succeed("list_spaces", []string{"sp-1", "sp-2"})
	run := invoker.New(nil)
	for _, id := range []string{"c1", "c2"} {
		obs, _ := run(context.Background(), invoker.Call{ID: id, Name: "list_spaces", Args: json.RawMessage(`{}`), Tool: spaces.Tool})
		fmt.Println(obs.Outcome())
	}
	fmt.Println("executions:", spaces.Executions())
	// Output:
	// SUCCESS
	// SUCCESS
	// executions: 2
}

func ExampleFail() {
	site := reacttest.Fail("get_site", tool.KindNotFound, "no site 7")
	obs, _ := invoker.New(nil)(context.Background(), invoker.Call{ID: "c1", Name: "get_site", Tool: site.Tool})
	fmt.Println(obs.Outcome(), obs.Code())
	// Output: FAILED TOOL_NOT_FOUND
}

func ExampleBusinessCodeContract() {
	c := reacttest.BusinessCodeContract("system")
	fmt.Println(c.Business(map[string]any{"code": 50001, "message": "quota exceeded"}))
	fmt.Println(c.Business(map[string]any{"code": 0, "data": "ok"}))
	// Output:
	// true system.50001 quota exceeded
	// false
}

// Example_agent tests a whole agent offline: a scripted model, a fake read
// and a fake write, through the real loop and guards.
func Example_agent() {
	spaces := reacttest.Succeed("list_spaces", []map[string]string{{"id": "sp-42"}})
	create := reacttest.Succeed("create_site", map[string]string{"site_id": "site-1"}).Write()
	model := reacttest.Script(
		reacttest.Calls(reacttest.Call("c1", "list_spaces", `{}`)),
		reacttest.Calls(reacttest.Call("c2", "create_site", `{"space_id":"sp-42"}`)),
		reacttest.Calls(reacttest.Approval("c3", "create_site", "")),
		reacttest.Calls(reacttest.Call("c4", "create_site", `{"space_id":"sp-42"}`)),
		reacttest.Calls(reacttest.Finish("c5", "created")),
	)
	loop, _ := react.New(react.Config{
		Model:    model,
		Tools:    tool.MustCatalog(spaces.Tool, create.Tool),
		Guards:   &guard.Options{},
		Observer: react.DiscardObserver,
	})
	node := react.Node{Name: "site", Tools: []string{"list_spaces", "create_site"}}
	ctx := context.Background()

	res, _ := loop.Run(ctx, node, "create a site")
	fmt.Println(res.Status, res.Suspension.Kind, "executions:", create.Executions())
	res, _ = loop.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	fmt.Println(res.Status, "executions:", create.Executions(), "turns left:", model.Remaining())
	// Output:
	// suspended approval executions: 0
	// finished executions: 1 turns left: 0
}

// A streaming model whose chunk boundaries the test chooses: Split cuts a
// turn's text and each call's arguments into fragments.
func ExampleStream() {
	turn := reacttest.Split(reacttest.Turn("Paying.", reacttest.Call("c1", "pay", `{"to":"alice"}`)), 4)
	for _, c := range turn.Chunks {
		if c.Call != nil {
			fmt.Printf("call %q %q %q\n", c.Call.ID, c.Call.Name, c.Call.Args)
			continue
		}
		fmt.Printf("text %q\n", c.Text)
	}
	m := reacttest.Stream(turn)
	resp, err := m.Generate(context.Background(), react.Request{})
	fmt.Println(resp.Text, string(resp.ToolCalls[0].Args), err, m.Sent())
	// Output:
	// text "Payi"
	// text "ng."
	// call "c1" "pay" "{\"to"
	// call "" "" "\":\"a"
	// call "" "" "lice"
	// call "" "" "\"}"
	// Paying. {"to":"alice"} <nil> 6
}
