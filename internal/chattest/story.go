package chattest

// Call is one tool call of a canned [Turn].
type Call struct{ ID, Name, Args string }

// Turn is one model turn, API-neutral: the adapter's test renders it as
// its API's response body.
type Turn struct {
	Text  string
	Calls []Call
}

// storyCreate is the arguments of both create_site calls of the story.
const storyCreate = `{"name":"Spring Sale","space_id":"sp-42"}`

// StoryTurns returns the six turns of the sitebuilder story
// (examples/sitebuilder/story) as a model would play it: list the
// websites and spaces, create the site (deferred), ask for approval
// (suspends), create it again once approved, record the site id as an
// output, finish. A new slice each call.
func StoryTurns() []Turn {
	return []Turn{
		{"Let me look at the websites and spaces.", []Call{{"c1", "list_websites", `{}`}, {"c2", "list_spaces", `{}`}}},
		{"", []Call{{"c3", "create_site", storyCreate}}},
		{"", []Call{{"c4", "builtin_node_approval", `{"tool":"create_site","reason":"create Spring Sale in Marketing"}`}}},
		{"", []Call{{"c5", "create_site", storyCreate}}},
		{"", []Call{{"c6", "builtin_output_set", `{"key":"site_id","value":"site-1001","sourceType":"tool_result","sourceRef":"c5"}`}}},
		{"", []Call{{"c7", "builtin_node_finish", `{"summary":"Created Spring Sale."}`}}},
	}
}

// StoryOutput returns lines the sitebuilder program prints when a model
// plays [StoryTurns] and stdin, not a terminal, approves. A new slice
// each call.
func StoryOutput() []string {
	return []string{
		"create_site: the write create_site needs the user's approval",
		"-- suspended: create_site(" + storyCreate + ") waits for approval",
		"-- stdin is not a terminal: approving",
		"-- finished after 6 rounds: Created Spring Sale.",
		`output site_id = "site-1001" (from tool_result c5)`,
		"create_site executed 1 time(s)",
	}
}
