package guard

import (
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The passed-arguments cache takes texts of up to MaxCachedArgs bytes,
// that bound included, keeps the texts of every schema while it holds
// fewer than maxCachedSchemas, and a nil cache remembers nothing.
func TestPassedArgs_Bounds(t *testing.T) {
	p := &passedArgs{size: 8, schemas: map[*jsonschema.Resolved]map[string]struct{}{}}
	a, b := new(jsonschema.Resolved), new(jsonschema.Resolved)
	at := `{"k":"` + strings.Repeat("x", MaxCachedArgs-8) + `"}`
	require.Len(t, at, MaxCachedArgs)
	p.add(a, at)
	assert.True(t, p.has(a, []byte(at)), "a text of exactly MaxCachedArgs bytes is cached")
	over := at + " "
	p.add(a, over)
	assert.False(t, p.has(a, []byte(over)), "one byte more is not")
	p.add(a, `{}`)
	assert.True(t, p.has(a, []byte(`{}`)), "a short text is cached")
	assert.False(t, p.has(b, []byte(`{}`)), "per schema")
	p.add(b, `{}`)
	assert.True(t, p.has(a, []byte(`{}`)) && p.has(b, []byte(`{}`)), "a second schema does not push out the first")
	var none *passedArgs
	none.add(a, `{}`)
	assert.False(t, none.has(a, []byte(`{}`)))
}

// locate follows a schema path as far as the schema goes, whatever the
// path: a truncated segment or an index out of range stops the walk, never
// the process.
func TestLocate_TruncatedPaths(t *testing.T) {
	inner := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"id": {Type: "string"}}}
	root := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"items": {Type: "array", Items: inner},
		"alt":   {AnyOf: []*jsonschema.Schema{inner}},
	}}
	tests := []struct {
		path, field string
		found       bool
		why         string
	}{
		{"/properties", "", false, "properties without a name"},
		{"/properties/items/items", "items[]", true, "into the items"},
		{"/properties/alt/anyOf", "alt", false, "anyOf without an index"},
		{"/properties/alt/anyOf/0", "alt", true, "the first alternative"},
		{"/properties/alt/anyOf/0/properties/id", "alt.id", true, "through it"},
		{"/properties/alt/anyOf/1", "alt", false, "an index out of range"},
		{"/properties/alt/anyOf/-1", "alt", false, "a negative index"},
	}
	for _, tt := range tests {
		field, s := locate(root, tt.path)
		assert.Equal(t, tt.field, field, "locate(%q): %s", tt.path, tt.why)
		assert.Equal(t, tt.found, s != nil, "locate(%q) schema: %s", tt.path, tt.why)
	}
}

// clipTo cuts at a rune boundary: a text of exactly n bytes is kept; a cut
// never splits a rune; text that is not UTF-8 is cut without a panic.
func TestClipTo_Bounds(t *testing.T) {
	assert.Equal(t, "abc", clipTo("abc", 3), "exactly n bytes: kept")
	assert.Equal(t, "ab…", clipTo("abcd", 2))
	assert.Equal(t, "a…", clipTo("aé", 2), "é is two bytes: not split")
	assert.Equal(t, "…", clipTo("\x80\x80\x80", 1), "continuation bytes only: cut to nothing, no panic")
	assert.Equal(t, "…", clipTo("é", 1))
}
