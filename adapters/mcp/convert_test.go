package mcp

import (
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/tool"
)

// TestToolsConvertsEveryTool: every server tool becomes a tool with the
// server's name, description and input schema, and the catalog accepts
// them all (their schemas resolve).
func TestToolsConvertsEveryTool(t *testing.T) {
	f := inMemory(t, nil)
	want := []string{"echo", "greet", "lines", "picture", "nothing", "fail", "silent_fail", "structured_fail", "structured_fail_long", "count", "meta",
		"raw_invalid_params", "raw_internal", "raw_no_message", "raw_plain", "block", "stubborn"}
	assert.ElementsMatchf(t, want, keys(f.tools), "Tools() names = %v; want %v", keys(f.tools), want)

	list := make([]*tool.Tool, 0, len(f.tools))
	for _, tl := range f.tools {
		list = append(list, tl)
	}
	_, err := tool.NewCatalog(list...)
	require.NoErrorf(t, err, "tool.NewCatalog(converted tools) = %v; want the catalog to accept them", err)

	echo := f.tool(t, "echo")
	assert.Equal(t, "Echo the text back.", echo.Description, "echo description")
	assert.Equal(t, "object", echo.InputSchema.Type, "echo schema type")
	assert.Contains(t, echo.InputSchema.Properties, "text", "echo schema properties")
	assert.Equal(t, []string{"text"}, echo.InputSchema.Required, "echo schema required")
	assert.Equal(t, "Greeting", f.tool(t, "greet").Description, "a tool without description is described by its title")
	assert.Equal(t, "Counts.", f.tool(t, "count").Description, "the description wins over the annotations' title")
}

// TestEffects walks how a tool's effect is decided, one rule per row.
func TestEffects(t *testing.T) {
	tests := []struct {
		name   string
		opts   *Options
		tool   string
		want   tool.Effect
		reason string
	}{
		{"read-only hint", nil, "echo", tool.Read, "readOnlyHint=true is a read"},
		{"unannotated", nil, "lines", tool.Write, "MCP's default readOnlyHint is false: an unannotated tool is a write"},
		{"annotated not read-only", nil, "count", tool.Write, "readOnlyHint=false is a write"},
		{"override to read", &Options{Effects: map[string]tool.Effect{"lines": tool.Read}}, "lines", tool.Read, "the host's Effects wins over the annotations"},
		{"override to write", &Options{Effects: map[string]tool.Effect{"echo": tool.Write}}, "echo", tool.Write, "the host may make a read-only tool a write"},
		{"func", &Options{Effect: func(*sdk.Tool) tool.Effect { return tool.Read }}, "count", tool.Read, "the host's Effect func replaces DefaultEffect"},
		{"map before func", &Options{
			Effects: map[string]tool.Effect{"count": tool.Write},
			Effect:  func(*sdk.Tool) tool.Effect { return tool.Read },
		}, "count", tool.Write, "Effects wins over Effect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := inMemory(t, tc.opts)
			got := f.tool(t, tc.tool).Effect
			assert.Equalf(t, tc.want, got, "Tools(%s).Effect = %v; want %v (%s)", tc.tool, got, tc.want, tc.reason)
		})
	}
}

// TestOptions covers Include, Prefix and Timeout.
func TestOptions(t *testing.T) {
	f := inMemory(t, &Options{
		Include: func(t *sdk.Tool) bool { return t.Name == "echo" || t.Name == "greet" },
		Prefix:  "srv_",
		Timeout: 3 * time.Second,
	})
	assert.ElementsMatch(t, []string{"srv_echo", "srv_greet"}, keys(f.tools), "Include selects and Prefix renames")
	echo := f.tool(t, "srv_echo")
	assert.Equal(t, 3*time.Second, echo.Timeout, "Timeout becomes each tool's Timeout")
	got := call(t.Context(), echo, `{"text":"hi"}`)
	assert.Equalf(t, map[string]any{"echo": "hi"}, got.data, "call(srv_echo) = %#v; want the server's tool echo called by its own name", got.data)
}

// TestDefaultEffectNil: a nil tool is a write.
func TestDefaultEffectNil(t *testing.T) {
	assert.Equal(t, tool.Write, DefaultEffect(nil), "DefaultEffect(nil)")
}

// TestConvertRefuses: tools that cannot become reactguard tools are
// refused with an error naming them.
func TestConvertRefuses(t *testing.T) {
	f := inMemory(t, nil)
	tests := []struct {
		name   string
		tool   *sdk.Tool
		reason string
	}{
		{"no name", &sdk.Tool{InputSchema: map[string]any{"type": "object"}}, "a tool must have a name"},
		{"schema not an object", &sdk.Tool{Name: "x", InputSchema: "object"}, "a schema must be a JSON object (or boolean)"},
		{"schema not JSON", &sdk.Tool{Name: "x", InputSchema: func() {}}, "a schema must marshal to JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Convert(f.session, tc.tool, nil)
			assert.Errorf(t, err, "Convert(%s) = %v, nil; want an error (%s)", tc.name, got, tc.reason)
		})
	}
}

// TestInputSchemaForms: the forms an input schema may take on the client.
func TestInputSchemaForms(t *testing.T) {
	typed := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string"}}}
	tests := []struct {
		name   string
		in     any
		want   string // the schema's type
		reason string
	}{
		{"absent", nil, "object", "no schema: any object"},
		{"null", []byte("null"), "object", "a JSON null schema: any object"},
		{"typed", typed, "object", "a *jsonschema.Schema is copied"},
		{"map", map[string]any{"type": "object"}, "object", "the client's default form"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if b, ok := in.([]byte); ok {
				in = rawJSON(b)
			}
			got, err := inputSchema(in)
			require.NoErrorf(t, err, "inputSchema(%v) error (%s)", tc.in, tc.reason)
			assert.Equalf(t, tc.want, got.Type, "inputSchema(%v).Type = %q; want %q (%s)", tc.in, got.Type, tc.want, tc.reason)
		})
	}
	got, err := inputSchema(typed)
	require.NoError(t, err)
	assert.NotSame(t, typed, got, "inputSchema(*jsonschema.Schema) must copy, not share, the server's schema")
}

// TestToolsListingFails: listing on a closed session fails with an error.
func TestToolsListingFails(t *testing.T) {
	f := inMemory(t, nil)
	require.NoError(t, f.session.Close())
	got, err := Tools(t.Context(), f.session, nil)
	assert.Errorf(t, err, "Tools(closed session) = %v, nil; want an error", got)
}

// TestNilArgumentsPanic: a nil session or tool is a programming error.
func TestNilArgumentsPanic(t *testing.T) {
	assert.Panics(t, func() { _, _ = Tools(t.Context(), nil, nil) }, "Tools(nil session)")
	assert.Panics(t, func() { _, _ = Convert(nil, &sdk.Tool{Name: "x"}, nil) }, "Convert(nil session)")
}

type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
