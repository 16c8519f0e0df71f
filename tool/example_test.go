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

// A typed write reads its call's request from its context and passes the
// write gate's idempotency key to its backend, which applies each key once.
func ExampleRequestFrom() {
	applied := map[string]string{} // the backend: idempotency key → order id
	type in struct {
		Item string `json:"item"`
	}
	place := tool.New("place_order", "Place an order.", func(ctx context.Context, a in) (string, error) {
		req, _ := tool.RequestFrom(ctx)
		if id, ok := applied[req.IdempotencyKey]; ok {
			return id, nil // a retried or re-submitted write: applied once
		}
		id := fmt.Sprintf("order-%d", len(applied)+1)
		applied[req.IdempotencyKey] = id
		return id, nil
	})
	place.Effect = tool.Write

	// The invoker passes the request the write gate prepared.
	req := tool.Request{Run: "run-1", CallID: "c1", Args: json.RawMessage(`{"item":"book"}`), Attempt: 1, IdempotencyKey: "rg-1f3a"}
	first, _ := place.Func(context.Background(), req)
	req.Attempt = 2
	again, _ := place.Func(context.Background(), req)
	fmt.Println(first, again, len(applied))
	// Output: order-1 order-1 1
}

// A tool marks what the model may read about a failure; the error it wraps
// (here one holding a DSN) still decides the code and goes to the log.
func ExampleWithDetail() {
	dsn := errors.New("dial tcp: lookup db.internal: no such host (postgres://app:hunter2@db.internal/orders)")
	err := tool.WithDetail(fmt.Errorf("query orders: %w", dsn), "the orders database is unavailable")

	detail, ok := tool.DetailOf(fmt.Errorf("handler: %w", err))
	fmt.Println(detail, ok)
	_, ok = tool.DetailOf(dsn)
	fmt.Println(ok)
	fmt.Println(errors.Is(err, dsn))
	// Output:
	// the orders database is unavailable true
	// false
	// true
}
