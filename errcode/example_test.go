package errcode_test

import (
	"fmt"

	"github.com/reactguard/reactguard/errcode"
)

func ExampleCode() {
	c := errcode.ApprovalToolMismatch
	fmt.Println(c, c.ID(), c.Layer(), c.Retryable())
	fmt.Println(c.Template())
	// Output:
	// APPROVAL_TOOL_MISMATCH 42246 call false
	// approval was requested for {tool}, but the call waiting for approval is {gated}
}

func ExampleCode_Retryable() {
	for _, c := range []errcode.Code{errcode.ToolUnavailable, errcode.ToolTimeout} {
		fmt.Printf("%s class=%s retryable=%v\n", c, c.Class(), c.Retryable())
	}
	// Output:
	// TOOL_UNAVAILABLE class=temporarily_unavailable retryable=true
	// TOOL_TIMEOUT class=timeout retryable=false
}

func ExampleParse() {
	c, err := errcode.Parse("FINGERPRINT_TRIP")
	fmt.Println(c.ID(), err)
	// Output: 42901 <nil>
}
