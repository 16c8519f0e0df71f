package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	rgmcp "github.com/reactguard/reactguard/adapters/mcp"
	"github.com/reactguard/reactguard/tool"
)

type orderIn struct {
	ID string `json:"id" jsonschema:"the order id"`
}

type orderOut struct {
	Status string `json:"status"`
}

// orderServer is an MCP server with a read-only tool and a write tool.
func orderServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "v1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "get_order",
		Description: "Look up an order.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *sdk.CallToolRequest, in orderIn) (*sdk.CallToolResult, orderOut, error) {
		if in.ID != "A-1" {
			return nil, orderOut{}, errors.New("no order " + in.ID)
		}
		return nil, orderOut{Status: "shipped"}, nil
	})
	sdk.AddTool(s, &sdk.Tool{
		Name:        "cancel_order",
		Description: "Cancel an order.",
	}, func(_ context.Context, _ *sdk.CallToolRequest, in orderIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "cancelled " + in.ID}}}, nil, nil
	})
	return s
}

// connect returns a client session on an in-memory connection to s and a
// function that closes both ends.
func connect(ctx context.Context, s *sdk.Server) (*sdk.ClientSession, func()) {
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "v1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	return cs, func() { _ = cs.Close(); _ = ss.Wait() }
}

// The tools of an MCP server become a reactguard catalog. The read-only
// tool is a read; the unannotated one is a write and so passes the write
// gate.
func ExampleTools() {
	ctx := context.Background()
	session, closeAll := connect(ctx, orderServer())
	defer closeAll()

	tools, err := rgmcp.Tools(ctx, session, nil)
	if err != nil {
		panic(err)
	}
	catalog, err := tool.NewCatalog(tools...)
	if err != nil {
		panic(err)
	}
	for _, name := range catalog.Names() {
		t, _ := catalog.Lookup(name)
		fmt.Println(name, t.Effect)
	}

	get, _ := catalog.Lookup("get_order")
	out, err := get.Func(ctx, tool.Request{Args: json.RawMessage(`{"id":"A-1"}`)})
	fmt.Println(out, err)
	// Output:
	// cancel_order write
	// get_order read
	// map[status:shipped] <nil>
}

// Failures come back classified: an isError result is MCP_TOOL_ERROR, an
// argument that fails the tool's schema is an ARG_REJECTED rejection with a
// next step, a JSON-RPC -32602 is MCP_INVALID_PARAMS.
func ExampleTools_failures() {
	ctx := context.Background()
	session, closeAll := connect(ctx, orderServer())
	defer closeAll()
	tools, err := rgmcp.Tools(ctx, session, nil)
	if err != nil {
		panic(err)
	}
	catalog := tool.MustCatalog(tools...)
	get, _ := catalog.Lookup("get_order")

	_, err = get.Func(ctx, tool.Request{Args: json.RawMessage(`{"id":"B-2"}`)})
	if te, ok := tool.AsError(err); ok {
		fmt.Println(te.Kind.Code(), te.Message)
	}

	_, err = get.Func(ctx, tool.Request{Args: json.RawMessage(`{"id":7}`)})
	var rej *tool.Rejection
	if errors.As(err, &rej) {
		fmt.Println(rej.Code(), rej.Reason())
	}
	// Output:
	// MCP_TOOL_ERROR no order B-2
	// ARG_REJECTED argument id of get_order was rejected: the value has type "integer", want "string"
}

// The host decides effects where a server's annotations are missing or
// wrong, and may prefix names when several servers share a catalog.
func ExampleOptions() {
	ctx := context.Background()
	session, closeAll := connect(ctx, orderServer())
	defer closeAll()

	tools, err := rgmcp.Tools(ctx, session, &rgmcp.Options{
		Prefix:  "orders_",
		Effects: map[string]tool.Effect{"get_order": tool.Write}, // keyed by the server's name
	})
	if err != nil {
		panic(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name, t.Effect)
	}
	// Output:
	// orders_cancel_order write
	// orders_get_order write
}

func ExampleDefaultEffect() {
	fmt.Println(rgmcp.DefaultEffect(&sdk.Tool{Name: "search", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}))
	fmt.Println(rgmcp.DefaultEffect(&sdk.Tool{Name: "delete"}))
	// Output:
	// read
	// write
}
