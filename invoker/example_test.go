package invoker_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

func ExampleNew() {
	type in struct {
		OrderID string `json:"order_id"`
	}
	status := tool.New("order_status", "Look up an order.", func(_ context.Context, a in) (string, error) {
		switch a.OrderID {
		case "A1":
			return "shipped", nil
		case "B2":
			return "", tool.BusinessFailure("system.50001", "order is archived")
		}
		return "", tool.NotFound("order %s", a.OrderID)
	})
	status.Effect = tool.Read

	inv := invoker.New(&invoker.Options{
		// Tell the model something specific when this tool finds nothing.
		ToolErrors: new(invoker.ToolErrors).SetFor("order_status", errcode.ToolNotFound,
			invoker.NextText("ask the user to check the order number")),
	})
	for _, args := range []string{`{"order_id":"A1"}`, `{"order_id":"B2"}`, `{"order_id":"Z9"}`, `{"order":1}`} {
		obs, err := inv(context.Background(), invoker.Call{ID: "c1", Name: "order_status", Args: json.RawMessage(args), Tool: status})
		if err != nil {
			fmt.Println("cancelled:", err)
			continue
		}
		fmt.Println(obs.Outcome(), obs.Code(), "|", obs.Message())
	}

	zh := invoker.New(&invoker.Options{Catalog: prompt.For(prompt.Chinese)})
	obs, _ := zh(context.Background(), invoker.Call{ID: "c2", Name: "order_status", Args: json.RawMessage(`{"order_id":"B2"}`), Tool: status})
	fmt.Println(obs.MessageIn(prompt.For(prompt.Chinese)))
	// Output:
	// SUCCESS CODE(0) | order_status succeeded
	// FAILED TOOL_BUSINESS_FAILED | business failure [system.50001]: order is archived. Next: tell the user about the failure with builtin_node_follow_up and ask how to proceed, or call builtin_node_fail with the reason; do not repeat the same call
	// FAILED TOOL_NOT_FOUND | order_status found no such resource: order Z9. Next: ask the user to check the order number
	// REJECTED ARG_JSON_INVALID | the arguments of order_status are not a JSON object: unknown field "order". Next: send the arguments of order_status again as one JSON object that matches its schema
	// 业务失败 [system.50001]：order is archived。下一步：用 builtin_node_follow_up 向用户说明失败并询问如何处理，或调用 builtin_node_fail 说明原因；不要重复相同的调用
}

func ExampleChain() {
	layer := func(name string) invoker.Interceptor {
		return func(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
			fmt.Println("enter", name)
			obs, err := next(ctx, call)
			fmt.Println("leave", name, obs.Outcome())
			return obs, err
		}
	}
	echo := &tool.Tool{
		Name: "echo",
		Func: func(_ context.Context, req tool.Request) (any, error) {
			fmt.Println("run echo")
			return string(req.Args), nil
		},
	}
	h := invoker.Chain(invoker.New(nil), layer("outer"), nil, layer("inner"))
	obs, _ := h(context.Background(), invoker.Call{ID: "c1", Name: "echo", Args: json.RawMessage(`{}`), Tool: echo})
	fmt.Println(obs.Message())
	// Output:
	// enter outer
	// enter inner
	// run echo
	// leave inner SUCCESS
	// leave outer SUCCESS
	// echo succeeded
}
