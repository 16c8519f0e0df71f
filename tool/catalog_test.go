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

func objectSchema() *jsonschema.Schema {
	str := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"q": str(), "any": str(), "id": str()}}
}

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
			name:   "result source naming an absent tool",
			reason: "a value that must come from a tool the catalog lacks could never be given: every call would fail",
			tools: func() []*tool.Tool {
				tl := valid("order")
				tl.Params = map[string]tool.Source{"id": tool.Result("serach", "items.id")}
				return []*tool.Tool{valid("search"), tl}
			},
			want: `tool "order": parameter "id" must come from a result of "serach", which is not in the catalog; add "serach" to the catalog or correct the source`,
		},
		{
			name:   "Params key that is no parameter",
			reason: "a contract on a parameter the schema does not have is a typo: the value it guards never arrives",
			tools: func() []*tool.Tool {
				tl := valid("order")
				tl.Params = map[string]tool.Source{"ID": tool.User()}
				return []*tool.Tool{tl}
			},
			want: `tool "order": Params names "ID", which is not a parameter of its input schema (it has properties any, id, q); use a top-level property name`,
		},
		{
			name:   "Params on a schema without properties",
			reason: "a schema without properties declares no parameter to guard",
			tools: func() []*tool.Tool {
				tl := valid("order")
				tl.InputSchema = &jsonschema.Schema{Type: "object"}
				tl.Params = map[string]tool.Source{"id": tool.User()}
				return []*tool.Tool{tl}
			},
			want: `(it has no properties)`,
		},
		{
			name:   "input schema not an object",
			reason: "tool arguments are a JSON object: an integer schema fails every call",
			tools: func() []*tool.Tool {
				tl := valid("count")
				tl.InputSchema = &jsonschema.Schema{Type: "integer"}
				return []*tool.Tool{tl}
			},
			want: `tool "count": the input schema is not an object schema (type "integer"): tool arguments are a JSON object; set its Type to "object"`,
		},
		{
			name:   "input schema without type",
			reason: "a schema that admits any value is not an object schema",
			tools: func() []*tool.Tool {
				tl := valid("count")
				tl.InputSchema = &jsonschema.Schema{}
				return []*tool.Tool{tl}
			},
			want: `(no type)`,
		},
		{
			name:   "input schema of several types",
			reason: "an object or an array is not an object",
			tools: func() []*tool.Tool {
				tl := valid("count")
				tl.InputSchema = &jsonschema.Schema{Types: []string{"object", "array"}}
				return []*tool.Tool{tl}
			},
			want: `(types object, array)`,
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
	search.Params = map[string]tool.Source{"q": tool.User(), "any": tool.Free(), "id": tool.Result("order", "items.id")}
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

// TestCatalogSources: a result source may name any tool of the catalog,
// itself included, in any order with NewCatalog; Add needs the source's
// tool registered first and leaves the catalog unchanged when it refuses.
func TestCatalogSources(t *testing.T) {
	list, create := valid("list"), valid("create")
	create.Params = map[string]tool.Source{"id": tool.Result("list", "items.id")}
	_, err := tool.NewCatalog(create, list)
	require.NoError(t, err, "NewCatalog takes the tools in any order")

	page := valid("page")
	page.Params = map[string]tool.Source{"id": tool.Result("page", "next")}
	_, err = tool.NewCatalog(page)
	require.NoError(t, err, "a tool may take a value from its own earlier result (a cursor)")

	var c tool.Catalog
	err = c.Add(create)
	require.Error(t, err, "Add(create) before list = nil; want a refusal")
	assert.Contains(t, err.Error(), `add "list" to the catalog`)
	assert.Zero(t, c.Len(), "a refused Add leaves the catalog unchanged")
	require.NoError(t, c.Add(list))
	require.NoError(t, c.Add(create), "Add(create) after list")
	assert.Equal(t, []string{"list", "create"}, c.Names())
}

// TestNewRefusesNonObjectArguments: a typed tool's arguments are a JSON
// object; an In that is not a struct or map is a programming error.
func TestNewRefusesNonObjectArguments(t *testing.T) {
	fn := func(context.Context, int) (int, error) { return 0, nil }
	assert.PanicsWithValue(t, `tool.New("count"): the arguments type int has type "integer", not an object: use a struct (or map) type for a tool's arguments`,
		func() { tool.New("count", "Counts.", fn) })
	assert.NotPanics(t, func() {
		tool.New("m", "Map arguments.", func(context.Context, map[string]int) (int, error) { return 0, nil })
	}, "a map is an object")
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
