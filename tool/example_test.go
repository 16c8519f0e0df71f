package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/tool"
)

func ExampleNew() {
	type in struct {
		OrderID string `json:"order_id"`
		Verbose bool   `json:"verbose,omitempty"`
	}
	type out struct {
		Status string `json:"status"`
	}
	lookup := tool.New("order_status", "Look up the status of an order.",
		func(_ context.Context, a in) (out, error) {
			if a.OrderID != "A1" {
				return out{}, tool.NotFound("order %s", a.OrderID)
			}
			return out{Status: "shipped"}, nil
		})
	lookup.Effect = tool.Read

	schema, _ := json.Marshal(lookup.InputSchema)
	fmt.Println(string(schema))

	res, err := lookup.Func(context.Background(), tool.Request{Args: json.RawMessage(`{"order_id":"A1"}`)})
	fmt.Println(res, err)

	_, err = lookup.Func(context.Background(), tool.Request{Args: json.RawMessage(`{"order":"A1"}`)})
	var argsErr *tool.ArgsError
	fmt.Println(errors.As(err, &argsErr))
	// Output:
	// {"type":"object","properties":{"order_id":{"type":"string"},"verbose":{"type":"boolean"}},"required":["order_id"],"additionalProperties":false}
	// {shipped} <nil>
	// true
}

func ExampleNewCatalog() {
	search := tool.New("search", "Search the catalogue.",
		func(_ context.Context, a struct {
			Query string `json:"query"`
		}) ([]string, error) {
			return []string{"widget"}, nil
		})
	search.Effect = tool.Read

	_, err := tool.NewCatalog(search, search)
	fmt.Println(err)

	c, err := tool.NewCatalog(search)
	fmt.Println(c.Names(), err, search.Resolved() != nil)
	// Output:
	// tool: duplicate tool name "search"
	// [search] <nil> true
}

func ExampleReject() {
	// A built-in tool refuses by rule: the code and the next step travel
	// with the error, and the default invoker answers REJECTED.
	approve := func(context.Context, tool.Request) (any, error) {
		return nil, tool.Reject(errcode.ApprovalNotGated,
			"approval was requested, but no write is waiting for approval",
			"call the write tool directly")
	}
	_, err := approve(context.Background(), tool.Request{})
	var r *tool.Rejection
	if errors.As(err, &r) {
		fmt.Println(r.Code(), "|", r.Reason(), "|", r.Next())
	}
	// Output:
	// APPROVAL_NOT_GATED | approval was requested, but no write is waiting for approval | call the write tool directly
}
