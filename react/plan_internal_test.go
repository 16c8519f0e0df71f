package react

import (
	"context"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/tool"
)

// A loop reuses the plan of the last node only while its catalog holds the
// same tool values under the node's names: a name freed by a failed
// Catalog.Add and taken by another tool gets a plan with the new tool.
func TestPlanFollowsTheCatalog(t *testing.T) {
	newTool := func(desc string) *tool.Tool {
		return &tool.Tool{Name: "lookup", Description: desc, InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Read,
			Func: func(context.Context, tool.Request) (any, error) { return nil, nil }}
	}
	first, second := newTool("first"), newTool("second")
	l, err := New(Config{Model: scripted(), Tools: tool.MustCatalog(first)})
	require.NoError(t, err)
	node := Node{Name: "n", Tools: []string{"lookup"}}

	p1, err := l.planOf(node)
	require.NoError(t, err)
	again, err := l.planOf(Node{Name: "other name, same tools", Tools: []string{"lookup"}})
	require.NoError(t, err)
	assert.Same(t, p1, again, "the same tools: the plan is reused")

	l.catalog = tool.MustCatalog(second) // the name now holds another tool
	p2, err := l.planOf(node)
	require.NoError(t, err)
	assert.NotSame(t, p1, p2, "another tool under the name: a new plan")
	assert.Same(t, second, p2.visible["lookup"])
	assert.Equal(t, "second", p2.specs[0].Description)
}
