package observation_test

import (
	"encoding/json"
	"fmt"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/prompt"
)

func ExampleSuccess() {
	o := observation.Success("found 2 websites", []string{"shop", "blog"})
	fmt.Println(o.Outcome(), o.Outcome().Advances())
	fmt.Println(o.Message())
	// Output:
	// SUCCESS true
	// found 2 websites
}

func ExampleFailed() {
	o := observation.Failed(errcode.ToolBusinessFailed,
		"business failure [system.50001]: quota exceeded",
		"tell the user about the failure and ask how to proceed",
		map[string]any{"code": 50001})
	fmt.Println(o.Outcome(), o.Code(), o.Outcome().Stalls())
	fmt.Println(o.Message())
	// Output:
	// FAILED TOOL_BUSINESS_FAILED true
	// business failure [system.50001]: quota exceeded. Next: tell the user about the failure and ask how to proceed
}

func ExampleRejected() {
	o := observation.Rejected(errcode.ApprovalToolMismatch,
		"approval was requested for delete_site, but the call waiting for approval is create_site",
		"call builtin_node_approval with tool create_site")
	fmt.Println(o)
	// Output:
	// REJECTED APPROVAL_TOOL_MISMATCH: approval was requested for delete_site, but the call waiting for approval is create_site. Next: call builtin_node_approval with tool create_site
}

func ExampleDeferred() {
	o := observation.Deferred(errcode.ApprovalRequired,
		"the write create_site needs the user's approval",
		"call builtin_node_approval with tool create_site")
	fmt.Println(o.Outcome(), "advances:", o.Outcome().Advances(), "stalls:", o.Outcome().Stalls())
	// Output:
	// DEFERRED advances: false stalls: false
}

func ExampleDeferred_refused() {
	defer func() { fmt.Println("refused:", recover()) }()
	observation.Deferred(errcode.ApprovalRequired, "needs approval", "")
	// Output:
	// refused: observation: Deferred: a non-success observation needs a next step
}

func ExampleObservation_Message() {
	o := observation.Rejected(errcode.ArgRejected, "missing required argument [buyer]",
		"fill it in and call again; if you cannot, ask the user with builtin_node_follow_up")
	fmt.Println(o.Message())
	// Output:
	// missing required argument [buyer]. Next: fill it in and call again; if you cannot, ask the user with builtin_node_follow_up
}

func ExampleObservation_MessageIn() {
	zh := prompt.For(prompt.Chinese)
	o := observation.Rejected(errcode.ArgRejected, "缺少必填参数 [buyer]",
		"补齐后再调用；无法补齐时调用 builtin_node_follow_up 询问用户，或调用 builtin_node_fail 说明原因")
	fmt.Println(o.MessageIn(zh))
	// Output:
	// 缺少必填参数 [buyer]。下一步：补齐后再调用；无法补齐时调用 builtin_node_follow_up 询问用户，或调用 builtin_node_fail 说明原因
}

func ExampleObservation_WithNext() {
	failed := observation.Failed(errcode.ToolBusinessFailed, "business failure [system.50001]: quota", "tell the user")
	approved := failed.WithNext("use builtin_node_follow_up to tell the user and ask how to proceed")
	fmt.Println(failed.Next())
	fmt.Println(approved.Next())
	// Output:
	// tell the user
	// use builtin_node_follow_up to tell the user and ask how to proceed
}

func ExampleObservation_MarshalJSON() {
	o := observation.Deferred(errcode.WriteInFlight, "the same write create_site is running right now", "wait")
	b, _ := json.Marshal(o)
	fmt.Println(string(b))
	var back observation.Observation
	fmt.Println(json.Unmarshal(b, &back), back.Code())
	// Output:
	// {"outcome":"DEFERRED","code":"WRITE_IN_FLIGHT","reason":"the same write create_site is running right now","next":"wait"}
	// <nil> WRITE_IN_FLIGHT
}
