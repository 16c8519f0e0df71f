package story

import (
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
)

// Node returns the story's ReAct task: create the site with the catalog's
// three tools; the output site_id is required, site_url optional; at most
// 16 rounds. Each call returns a new value the caller may change.
func Node() react.Node {
	return react.Node{
		Name:         "create_site",
		Instructions: "Create the website the user asks for, in the space the user names. Record the new site's id as the output site_id, then finish.",
		Tools:        []string{"list_websites", "list_spaces", "create_site"},
		Outputs: []react.Output{
			{Key: "site_id", Description: "the id of the created site", Required: true},
			{Key: "site_url", Description: "the address of the created site"},
		},
		MaxRounds: 16,
	}
}

// Task returns the user's words in lang; an invalid lang (the zero value
// included) means English, as for [prompt.For].
func Task(lang prompt.Lang) string {
	if lang == prompt.Chinese {
		return `在 Marketing 空间里创建一个名为 "Spring Sale" 的网站。`
	}
	return `Create a website called "Spring Sale" in the Marketing space.`
}
