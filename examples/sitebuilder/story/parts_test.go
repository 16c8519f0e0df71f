package story_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

func TestBackendTools(t *testing.T) {
	var b story.Backend
	catalog := b.Tools()
	names := make([]string, 0, 3)
	for _, name := range story.Node().Tools {
		tl, ok := catalog.Lookup(name)
		require.True(t, ok, "Tools() lacks %s, a tool of Node()", name)
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"list_websites", "list_spaces", "create_site"}, names)

	create, _ := catalog.Lookup("create_site")
	assert.Equal(t, tool.Write, create.Effect, "create_site is a write, so it needs approval")
	assert.Equal(t, tool.Result("list_spaces", "id"), create.Params["space_id"], "space_id comes from list_spaces")
	assert.Equal(t, tool.User(), create.Params["name"], "the name comes from the user")
	for _, read := range []string{"list_websites", "list_spaces"} {
		tl, _ := catalog.Lookup(read)
		assert.Equal(t, tool.Read, tl.Effect, "%s is a read", read)
	}

	ctx := context.Background()
	for i := range 2 {
		_, err := create.Func(ctx, tool.Request{Args: []byte(`{"name":"Spring Sale","space_id":"sp-42"}`)})
		require.NoError(t, err, "create_site call %d", i+1)
	}
	assert.Equal(t, 2, b.Executions())
	created := b.Created()
	assert.Equal(t, []story.Site{
		{SiteID: "site-1001", URL: "https://spring-sale.example.com", SpaceID: "sp-42"},
		{SiteID: "site-1002", URL: "https://spring-sale.example.com", SpaceID: "sp-42"},
	}, created)
	created[0].SiteID = "changed"
	assert.Equal(t, "site-1001", b.Created()[0].SiteID, "Created() returns a copy")
}

func TestNode(t *testing.T) {
	n := story.Node()
	assert.Equal(t, "create_site", n.Name)
	require.Len(t, n.Outputs, 2)
	assert.True(t, n.Outputs[0].Required, "site_id is required")
	assert.False(t, n.Outputs[1].Required, "site_url is optional")
	n.Tools[0] = "changed"
	assert.Equal(t, "list_websites", story.Node().Tools[0], "Node() returns a new value each call")
}

func TestTask(t *testing.T) {
	tests := []struct {
		lang   prompt.Lang
		reason string
		want   string
	}{
		{prompt.English, "English", `Create a website called "Spring Sale" in the Marketing space.`},
		{prompt.Chinese, "Chinese", `在 Marketing 空间里创建一个名为 "Spring Sale" 的网站。`},
		{0, "the zero value means English, as for prompt.For", `Create a website called "Spring Sale" in the Marketing space.`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, story.Task(tt.lang), "Task(%d) (%s)", tt.lang, tt.reason)
	}
}

func TestView(t *testing.T) {
	tests := []struct {
		v     story.View
		name  string
		valid bool
	}{
		{story.Verdicts, "verdicts", true},
		{story.Conversation, "conversation", true},
		{2, "view(2)", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.name, tt.v.String(), "View(%d).String()", tt.v)
		assert.Equal(t, tt.valid, tt.v.IsValid(), "View(%d).IsValid()", tt.v)
	}
	assert.Equal(t, story.Verdicts, story.Config{}.View, "the zero Config prints verdicts")
}

func TestScriptedIsStateless(t *testing.T) {
	// Two model values, one per loop value, as two processes would have.
	res, err := story.Run(context.Background(), story.Config{Model: story.Scripted(), Approve: true})
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	first := story.Scripted()
	second := story.Scripted()
	req := react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: story.Task(prompt.English)}}}
	a, err := first.Generate(context.Background(), req)
	require.NoError(t, err)
	b, err := second.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, a, b, "the scripted turn depends only on the request")
}

func TestIsTerminal(t *testing.T) {
	assert.False(t, story.IsTerminal(os.NewFile(^uintptr(0), "closed")), "an unusable file is no terminal")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = r.Close(); _ = w.Close() }()
	assert.False(t, story.IsTerminal(r), "a pipe is no terminal")
}
