package tool_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/tool"
)

func noop(context.Context, tool.Request) (any, error) { return nil, nil }

func objectSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

// valid returns a tool that the catalog accepts.
func valid(name string) *tool.Tool {
	return &tool.Tool{Name: name, InputSchema: objectSchema(), Func: noop}
}

func TestCatalogRefuses(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		tools  func() []*tool.Tool
		want   string // substring of the error
	}{
		{
			name:   "nil tool",
			reason: "a nil *Tool cannot be registered",
			tools:  func() []*tool.Tool { return []*tool.Tool{nil} },
			want:   "nil tool",
		},
		{
			name:   "no name",
			reason: "the model calls a tool by name",
			tools:  func() []*tool.Tool { return []*tool.Tool{valid("")} },
			want:   "needs a name",
		},
		{
			name:   "no func",
			reason: "a tool without a function cannot run",
			tools: func() []*tool.Tool {
				tl := valid("search")
				tl.Func = nil
				return []*tool.Tool{tl}
			},
			want: `"search": no Func`,
		},
		{
			name:   "no schema",
			reason: "a tool without an input schema cannot be checked nor described to the model",
			tools: func() []*tool.Tool {
				tl := valid("search")
				tl.InputSchema = nil
				return []*tool.Tool{tl}
			},
			want: `"search": no InputSchema`,
		},
		{
			name:   "unresolvable schema",
			reason: "a $ref to nowhere cannot be validated against",
			tools: func() []*tool.Tool {
				tl := valid("search")
				tl.InputSchema = &jsonschema.Schema{Type: "object", Ref: "#/$defs/missing"}
				return []*tool.Tool{tl}
			},
			want: `"search": input schema`,
		},
		{
			name:   "unresolvable output schema",
			reason: "the response contract's schema must resolve as well",
			tools: func() []*tool.Tool {
				tl := valid("search")
				tl.Contract = &tool.Contract{Output: &jsonschema.Schema{Ref: "#/$defs/missing"}}
				return []*tool.Tool{tl}
			},
			want: `"search": output schema`,
		},
		{
			name:   "negative timeout",
			reason: "a negative bound is a configuration mistake",
			tools: func() []*tool.Tool {
				tl := valid("search")
				tl.Timeout = -1
				return []*tool.Tool{tl}
			},
			want: "negative Timeout",
		},
		{
			name:   "result source without tool",
			reason: "a result source must name the tool whose result holds the value",
			tools: func() []*tool.Tool {
				tl := valid("order")
				tl.Params = map[string]tool.Source{"id": tool.Result("", "id")}
				return []*tool.Tool{tl}
			},
			want: `parameter "id"`,
		},
		{
			name:   "result source without field",
			reason: "a result source must name the field",
			tools: func() []*tool.Tool {
				tl := valid("order")
				tl.Params = map[string]tool.Source{"id": tool.Result("search", "")}
				return []*tool.Tool{tl}
			},
			want: "needs a tool and a field",
		},
		{
			name:   "unknown source kind",
			reason: "only the declared source kinds exist",
			tools: func() []*tool.Tool {
				tl := valid("order")
				tl.Params = map[string]tool.Source{"id": {Kind: 9}}
				return []*tool.Tool{tl}
			},
			want: "unknown source kind source(9)",
		},
		{
			name:   "negative retry attempts",
			reason: "attempts count executions and cannot be negative",
			tools: func() []*tool.Tool {
				tl := valid("search")
				tl.Retry = &tool.RetryPolicy{Attempts: -1}
				return []*tool.Tool{tl}
			},
			want: "negative retry attempts",
		},
		{
			name:   "duplicate name",
			reason: "the model could not tell two tools with one name apart",
			tools:  func() []*tool.Tool { return []*tool.Tool{valid("search"), valid("search")} },
			want:   `duplicate tool name "search"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tool.NewCatalog(tc.tools()...)
			require.Errorf(t, err, "NewCatalog = nil error; want an error (%s)", tc.reason)
			assert.Nil(t, c, "NewCatalog returned a catalog along with an error")
			assert.Containsf(t, err.Error(), tc.want, "NewCatalog error = %q; want it to contain %q (%s)", err, tc.want, tc.reason)
			assert.Panics(t, func() { tool.MustCatalog(tc.tools()...) }, "MustCatalog must panic where NewCatalog fails")
		})
	}
}

func TestCatalogAccepts(t *testing.T) {
	search := valid("search")
	search.Params = map[string]tool.Source{"q": tool.User(), "any": tool.Free(), "id": tool.Result("list", "items.id")}
	search.Retry = &tool.RetryPolicy{Attempts: 3}
	search.Contract = &tool.Contract{Output: &jsonschema.Schema{Type: "object"}}
	order := valid("order")

	require.Nil(t, search.Resolved(), "Resolved before Add = non-nil; want nil")
	require.Nil(t, search.Contract.ResolvedOutput(), "ResolvedOutput before Add = non-nil; want nil")

	c := tool.MustCatalog(search, order)
	assert.Equal(t, []string{"search", "order"}, c.Names(), "Names() keeps registration order")
	assert.Equal(t, []*tool.Tool{search, order}, c.Tools(), "Tools() keeps registration order")
	assert.Equal(t, 2, c.Len())
	got, ok := c.Lookup("order")
	assert.True(t, ok)
	assert.Same(t, order, got, "Lookup(order) returns the registered tool")
	_, ok = c.Lookup("missing")
	assert.False(t, ok, "Lookup(missing) = true; want false")
	assert.NotNil(t, search.Resolved(), "Add resolves the input schema")
	assert.NotNil(t, search.Contract.ResolvedOutput(), "Add resolves the output schema")

	names := c.Names()
	names[0] = "mutated"
	assert.Equal(t, "search", c.Names()[0], "Names() returns a copy")
}

func TestCatalogZeroAndNil(t *testing.T) {
	var zero tool.Catalog
	require.NoError(t, zero.Add(valid("a")), "the zero Catalog is ready to use")
	assert.Equal(t, 1, zero.Len())

	var c *tool.Catalog
	_, ok := c.Lookup("a")
	assert.False(t, ok, "nil catalog Lookup = true; want false")
	assert.Nil(t, c.Names())
	assert.Nil(t, c.Tools())
	assert.Zero(t, c.Len())

	var nilTool *tool.Tool
	assert.Nil(t, nilTool.Resolved(), "nil tool Resolved = non-nil; want nil")
	var nilContract *tool.Contract
	assert.Nil(t, nilContract.ResolvedOutput())

	empty, err := tool.NewCatalog()
	require.NoError(t, err)
	assert.Zero(t, empty.Len())
}

func TestCatalogConcurrent(t *testing.T) {
	c := tool.MustCatalog()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			name := fmt.Sprintf("t%d", i)
			assert.NoError(t, c.Add(valid(name)))
			_, ok := c.Lookup(name)
			assert.True(t, ok)
			_ = c.Names()
			_ = c.Tools()
			_ = c.Len()
		})
	}
	wg.Wait()
	assert.Equal(t, 20, c.Len())
}
