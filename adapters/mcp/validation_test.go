package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// TestParseValidation: the SDK's validation messages (as measured with
// go-sdk v1.8.0 and jsonschema-go v0.4.3) and the field each names.
func TestParseValidation(t *testing.T) {
	tests := []struct {
		name        string
		msg         string
		wantFields  []string
		wantMissing bool
		wantDetail  string
		reason      string
	}{
		{
			name:       "wrong type",
			msg:        `validating root: validating /properties/count: type: x has type "string", want "integer"`,
			wantFields: []string{"count"},
			wantDetail: `the value has type "string", want "integer"`,
			reason:     "the deepest schema location names the property",
		},
		{
			name:       "missing properties",
			msg:        `validating root: required: missing properties: ["name" "count"]`,
			wantFields: []string{"name", "count"}, wantMissing: true,
			wantDetail: `required: missing properties: ["name" "count"]`,
			reason:     "every missing property is named",
		},
		{
			name:       "additional property",
			msg:        `validating root: unexpected additional properties ["extra"]`,
			wantFields: []string{"extra"},
			wantDetail: `unexpected additional properties ["extra"]`,
			reason:     "an unexpected property is named",
		},
		{
			name:       "nested in an array",
			msg:        `validating root: validating /properties/items: validating /properties/items/items: validating /properties/items/items/properties/x: type: y has type "string", want "integer"`,
			wantFields: []string{"items[].x"},
			wantDetail: `the value has type "string", want "integer"`,
			reason:     "array items read as []",
		},
		{
			name:       "missing nested",
			msg:        `validating root: validating /properties/items: validating /properties/items/items: required: missing properties: ["x"]`,
			wantFields: []string{"items[].x"}, wantMissing: true,
			wantDetail: `required: missing properties: ["x"]`,
			reason:     "a missing nested property is qualified by its parent",
		},
		{
			name:       "escaped pointer",
			msg:        `validating root: validating /properties/a~1b~0c: type: 1 has type "integer", want "string"`,
			wantFields: []string{"a/b~c"},
			wantDetail: `the value has type "integer", want "string"`,
			reason:     "JSON pointer escapes are undone",
		},
		{
			name:       "property name with a space",
			msg:        `validating root: validating /properties/first name: type: 1 has type "integer", want "string"`,
			wantFields: []string{"first name"},
			wantDetail: `the value has type "integer", want "string"`,
			reason:     "a pointer may contain spaces",
		},
		{
			name:       "composition keywords",
			msg:        `validating root: validating /anyOf/0/properties/a: type: 1 has type "integer", want "string"`,
			wantFields: []string{"a"},
			wantDetail: `the value has type "integer", want "string"`,
			reason:     "anyOf/0 does not name an argument",
		},
		{
			name:       "tuple item",
			msg:        `validating root: validating /properties/p/prefixItems/1: type: 1 has type "integer", want "string"`,
			wantFields: []string{"p[1]"},
			wantDetail: `the value has type "integer", want "string"`,
			reason:     "prefixItems name the position",
		},
		{
			name:       "not an object",
			msg:        `unmarshaling arguments: json: cannot unmarshal array into Go value of type map[string]interface {}`,
			wantFields: []string{"arguments"},
			wantDetail: `the value does not decode`,
			reason:     "a message without a location concerns the arguments as a whole; Go type names never reach the model",
		},
		{
			name:       "empty",
			msg:        ``,
			wantFields: []string{"arguments"},
			wantDetail: "invalid arguments",
			reason:     "an empty message still yields a field and a detail",
		},
		{
			name:       "enum",
			msg:        `validating root: validating /properties/kind: enum: map[a:map[a:1]] does not equal any of: [blog shop]`,
			wantFields: []string{"kind"},
			wantDetail: `the value is not one of the allowed values`,
			reason:     "the validator's Go rendering of the value is replaced",
		},
		{
			name:       "anyOf",
			msg:        "validating root: validating /properties/p: anyOf: did not validate against any of [0xc000123 0xc000456]:\n  x",
			wantFields: []string{"p"},
			wantDetail: `the value matches none of the allowed forms`,
			reason:     "schema pointers printed by the validator never reach the model",
		},
		{
			name:       "multi-line",
			msg:        "validating root: minimum: 0 is less than 1.000000\ngoroutine 1 [running]",
			wantFields: []string{"arguments"},
			wantDetail: `minimum: 0 is less than 1.000000`,
			reason:     "only the first line is kept",
		},
		{
			name:       "long message",
			msg:        "validating root: " + strings.Repeat("é", 200),
			wantFields: []string{"arguments"},
			wantDetail: strings.Repeat("é", 150) + "…",
			reason:     "a server's long message is clipped at a rune boundary",
		},
		{
			name:       "anonymous schema",
			msg:        `validating <anonymous schema>: minimum: 0 is less than 1.000000`,
			wantFields: []string{"arguments"},
			wantDetail: `minimum: 0 is less than 1.000000`,
			reason:     "a schema without a location names no field",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseValidation(tc.msg)
			assert.Equalf(t, tc.wantFields, got.fields, "parseValidation(%q) fields = %q; want %q (%s)", tc.msg, got.fields, tc.wantFields, tc.reason)
			assert.Equalf(t, tc.wantMissing, got.missing, "parseValidation(%q) missing = %v; want %v (%s)", tc.msg, got.missing, tc.wantMissing, tc.reason)
			assert.Equalf(t, tc.wantDetail, got.detail, "parseValidation(%q) detail = %q; want %q (%s)", tc.msg, got.detail, tc.wantDetail, tc.reason)
		})
	}
}

// FuzzParseValidation: the text comes from a server, so any text must give
// a non-empty field and detail without panicking, and the detail is taken
// from the message.
func FuzzParseValidation(f *testing.F) {
	for _, s := range []string{
		`validating root: validating /properties/count: type: x has type "string", want "integer"`,
		`validating root: required: missing properties: ["name" "count"]`,
		`validating root: unexpected additional properties ["extra"]`,
		`validating /properties/a/items/prefixItems/3/$defs/x/properties/b: bad`,
		`validating /properties/: x`,
		`validating /prefixItems`,
		`required: missing properties: ["\"" "\\u00e9"]`,
		"validating a\nb: c",
		``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		got := parseValidation(msg)
		if len(got.fields) == 0 || got.detail == "" {
			t.Fatalf("parseValidation(%q) = %+v; want fields and a detail", msg, got)
		}
		detail := strings.TrimSuffix(got.detail, "…")
		rewritten := strings.HasPrefix(detail, "the value ") || strings.HasPrefix(detail, "no item ")
		if got.detail != "invalid arguments" && !rewritten && !strings.Contains(msg, detail) {
			t.Fatalf("parseValidation(%q) detail = %q; want a part of the message", msg, got.detail)
		}
		if strings.ContainsAny(got.detail, "\r\n") {
			t.Fatalf("parseValidation(%q) detail = %q; want one line", msg, got.detail)
		}
		for _, goism := range []string{"Go value of type", "Go struct field", "interface {}"} {
			if strings.Contains(got.detail, goism) {
				t.Fatalf("parseValidation(%q) detail = %q names Go types", msg, got.detail)
			}
		}
		if len(got.detail) > maxDetail+len("…") {
			t.Fatalf("parseValidation(%q) detail has %d bytes; want at most %d", msg, len(got.detail), maxDetail)
		}
		if utf8.ValidString(msg) && !utf8.ValidString(got.detail) {
			t.Fatalf("parseValidation(%q) detail = %q; want valid UTF-8 from valid UTF-8", msg, got.detail)
		}
	})
}
