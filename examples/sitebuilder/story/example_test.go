package story_test

import (
	"context"
	"fmt"
	"os"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
)

// The offline story with the scripted agent, approved by flag: the run
// suspends for the approval, resumes from its snapshot in a new loop
// value, and create_site runs once.
func ExampleRun() {
	res, err := story.Run(context.Background(), story.Config{
		Model:   story.Scripted(),
		Approve: true,
		Out:     os.Stdout,
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s after %d resume(s); create_site ran %d time(s)\n", res.Status, res.Resumes, res.Executions)
	// Output:
	// user: Create a website called "Spring Sale" in the Marketing space.
	//
	// round 1  model: Let me look at the existing websites and the spaces. → list_websites, list_spaces
	// round 1  list_websites          SUCCESS                      list_websites succeeded [{"id":"w-1","name":"Company Blog"}]
	// round 1  list_spaces            SUCCESS                      list_spaces succeeded [{"id":"sp-7","name":"Sales"},{"id":"sp-42","name":"Marketing"}]
	// round 2  model: Marketing is sp-42. Creating the site. → create_site
	// round 2  create_site            DEFERRED APPROVAL_REQUIRED   the write create_site needs the user's approval. Next: call builtin_node_approval with tool create_site to ask…
	// round 3  model → builtin_node_approval
	//
	// -- suspended: create_site({"name":"Spring Sale","space_id":"sp-42"}) waits for the user's approval; the host stores the JSON snapshot
	// -- resuming from the snapshot in a new loop value: approve
	//
	// round 3  builtin_node_approval  SUCCESS                      the user approved the call of create_site
	// round 4  model: Approved. Creating the site now. → create_site
	// round 4  create_site            SUCCESS                      create_site succeeded {"site_id":"site-1001","url":"https://spring-sale.example.com","space_id":"sp-42"}
	// round 5  model → builtin_output_set, builtin_output_set
	// round 5  builtin_output_set     SUCCESS                      output site_id is set
	// round 5  builtin_output_set     SUCCESS                      output site_url is set
	// round 6  model → builtin_node_finish
	// round 6  builtin_node_finish    SUCCESS                      the node is finished
	//
	// -- finished after 6 rounds: Created Spring Sale in Marketing.
	//    output site_id = "site-1001" (from tool_result c5)
	//    output site_url = "https://spring-sale.example.com" (from tool_result c5)
	//    create_site executed 1 time(s)
	// finished after 1 resume(s); create_site ran 1 time(s)
}

// The same story in the conversation view, which shows the arguments of
// every call, as the adapters' examples print a real model's turns; here
// the user declines.
func ExampleRun_conversation() {
	_, err := story.Run(context.Background(), story.Config{
		Model:   story.Scripted(),
		Decline: true,
		View:    story.Conversation,
		Out:     os.Stdout,
	})
	fmt.Println("error:", err)
	// Output:
	// user: Create a website called "Spring Sale" in the Marketing space.
	//
	// model: Let me look at the existing websites and the spaces.
	//   → list_websites({})
	//   → list_spaces({})
	//   list_websites: list_websites succeeded [{"id":"w-1","name":"Company Blog"}]
	//   list_spaces: list_spaces succeeded [{"id":"sp-7","name":"Sales"},{"id":"sp-42","name":"Marketing"}]
	// model: Marketing is sp-42. Creating the site.
	//   → create_site({"name":"Spring Sale","space_id":"sp-42"})
	//   create_site: the write create_site needs the user's approval. Next: call builtin_node_approval with tool create_site to ask the user to approve this exac…
	// model
	//   → builtin_node_approval({"reason":"create \"Spring Sale\" in Marketing (sp-42)","tool":"create_site"})
	// -- suspended: create_site({"name":"Spring Sale","space_id":"sp-42"}) waits for approval
	// -- resuming from the snapshot in a new loop value: decline
	//
	//   builtin_node_approval: the user declined the call of create_site: not now
	// model
	//   → builtin_node_fail({"reason":"the user declined creating the site"})
	//   builtin_node_fail: the node ended as failed: the user declined creating the site
	//
	// -- failed after 4 rounds (model): the user declined creating the site
	//    create_site executed 0 time(s)
	// error: <nil>
}

// A program's whole main: the shared flags, the model, the story, the
// exit code.
func ExampleParseFlags() {
	cfg, err := story.ParseFlags([]string{"-decline", "-lang", "zh"}, os.Stderr)
	if err != nil {
		os.Exit(story.Exit(os.Stderr, err))
	}
	cfg.Model = story.Scripted()
	res, err := story.Run(context.Background(), cfg)
	fmt.Println(res.Status, res.Failure.Reason, story.Exit(os.Stderr, err))
	// Output:
	// failed the user declined creating the site 0
}
