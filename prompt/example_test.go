package prompt_test

import (
	"fmt"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/prompt"
)

func ExampleCatalog_Reason() {
	en, zh := prompt.For(prompt.English), prompt.For(prompt.Chinese)
	fmt.Println(en.Reason(errcode.ApprovalToolMismatch, "tool", "delete_site", "gated", "create_site"))
	fmt.Println(zh.Reason(errcode.ApprovalRequired, "tool", "create_site"))
	// Output:
	// approval was requested for delete_site, but the call waiting for approval is create_site
	// 该写操作 create_site 须经用户确认
}

func ExampleCatalog_Text() {
	en := prompt.For(prompt.English)
	fmt.Println(en.Text(prompt.NextApproval, "tool", "create_site"))
	// Output:
	// call builtin_node_approval with tool create_site to ask the user to approve this exact call; do not call create_site again before the answer
}

func ExampleCatalog_Message() {
	for _, l := range []prompt.Lang{prompt.English, prompt.Chinese} {
		c := prompt.For(l)
		fmt.Println(c.Message(c.Reason(errcode.ApprovalRequired, "tool", "create_site"), c.Text(prompt.NextCallWriteFirst)))
	}
	// Output:
	// the write create_site needs the user's approval. Next: call the write tool directly; request approval only after the runtime stops it and asks for approval
	// 该写操作 create_site 须经用户确认。下一步：先直接调用写工具；被拦下并要求确认后再申请确认
}

func ExampleCatalog_PhaseHint() {
	en := prompt.For(prompt.English)
	written := map[string]bool{"site_id": true}
	has := func(k string) bool { return written[k] }
	fmt.Printf("%q\n", en.PhaseHint(nil, has))
	fmt.Println(en.PhaseHint([]string{"site_id", "site_url"}, has))
	written["site_url"] = true
	fmt.Println(en.PhaseHint([]string{"site_id", "site_url"}, has))
	// Output:
	// ""
	// Required outputs not yet set: site_url.
	// All required outputs are set: site_id, site_url.
}
