package story

import (
	"encoding/json"
	"strings"

	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

// Scripted returns the offline agent of the story, a scripted model
// (package reacttest). It is stateless, like a real LLM: every turn is
// computed from the conversation it is sent, so a run can be resumed in
// another process with a fresh model value. It lists websites and spaces
// (calls c1, c2), creates the site in sp-42 (c3), asks for the approval
// (c4), and then either fails the node with the user's refusal or creates
// the site again (c5), sets both outputs from that result (c6, c7) and
// finishes (c8). The model is safe for concurrent use.
func Scripted() react.Model { return reacttest.Func(agent) }

func agent(req react.Request) react.Response {
	answered := func(id string) (react.Message, bool) { return reacttest.ToolMessage(req, id) }
	create := reacttest.Call("c3", "create_site", `{"name":"Spring Sale","space_id":"sp-42"}`)
	if _, listed := answered("c1"); !listed {
		return reacttest.Turn("Let me look at the existing websites and the spaces.",
			reacttest.Call("c1", "list_websites", `{}`), reacttest.Call("c2", "list_spaces", `{}`))
	}
	if _, ok := answered("c3"); !ok {
		return reacttest.Turn("Marketing is sp-42. Creating the site.", create)
	}
	approval, ok := answered("c4")
	if !ok {
		return reacttest.Calls(reacttest.Approval("c4", "create_site", `create "Spring Sale" in Marketing (sp-42)`))
	}
	if !granted(approval.Content) {
		return reacttest.Calls(reacttest.FailNode("c9", "the user declined creating the site"))
	}
	created, ok := answered("c5")
	if !ok {
		create.ID = "c5"
		return reacttest.Turn("Approved. Creating the site now.", create)
	}
	if _, ok := answered("c6"); !ok {
		var site Site
		start := strings.IndexByte(created.Content, '{')
		if created.IsError || start < 0 || json.Unmarshal([]byte(created.Content[start:]), &site) != nil {
			return reacttest.Calls(reacttest.FollowUp("c9", "Creating the site failed: "+created.Content+" How should I proceed?"))
		}
		return reacttest.Calls(
			reacttest.OutputSet("c6", "site_id", site.SiteID, react.SourceToolResult, "c5"),
			reacttest.OutputSet("c7", "site_url", site.URL, react.SourceToolResult, "c5"),
		)
	}
	return reacttest.Calls(reacttest.Finish("c8", "Created Spring Sale in Marketing."))
}

// granted reports whether the tool message of builtin_node_approval says
// the user approved (in either catalog's words).
func granted(msg string) bool {
	for _, lang := range []prompt.Lang{prompt.English, prompt.Chinese} {
		if msg == prompt.For(lang).Text(prompt.ResultApprovalGranted, "tool", "create_site") {
			return true
		}
	}
	return false
}
