package tool_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/tool"
)

func TestClipDetail(t *testing.T) {
	tests := []struct {
		name, in, want, reason string
	}{
		{"short", "disk full", "disk full", "a short line is kept"},
		{"trimmed", "  disk full \t", "disk full", "surrounding space goes"},
		{"first line", "disk full\ngoroutine 1 [running]:\nmain.main()", "disk full", "a stack trace after the first line goes"},
		{"carriage return", "disk full\r\nmore", "disk full", "CRLF ends the line too"},
		{"control characters", "a\x00b\x1bc", "a b c", "control characters become spaces"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb", "invalid bytes become U+FFFD"},
		{"exact limit", strings.Repeat("x", tool.MaxDetail), strings.Repeat("x", tool.MaxDetail), "MaxDetail bytes are kept whole"},
		{"over the limit", strings.Repeat("x", tool.MaxDetail+1), strings.Repeat("x", tool.MaxDetail) + "…", "one byte more is cut"},
		{"rune boundary", strings.Repeat("é", tool.MaxDetail), strings.Repeat("é", tool.MaxDetail/2) + "…", "a cut never splits a rune"},
		{"empty", "", "", "nothing stays nothing"},
	}
	for _, tc := range tests {
		got := tool.ClipDetail(tc.in)
		assert.Equalf(t, tc.want, got, "ClipDetail(%s) = %q; want %q (%s)", tc.name, got, tc.want, tc.reason)
		assert.Truef(t, utf8.ValidString(got), "ClipDetail(%s) = %q is not valid UTF-8", tc.name, got)
		assert.LessOrEqualf(t, len(got), tool.MaxDetail+len("…"), "ClipDetail(%s) has %d bytes", tc.name, len(got))
	}
}

func TestDetailOf(t *testing.T) {
	secret := errors.New("postgres://app:hunter2@db/orders")
	tests := []struct {
		name       string
		err        error
		want       string
		wantOK     bool
		reason     string
		wantSecret bool // errors.Is(err, secret) holds
	}{
		{"plain", secret, "", false, "a plain error carries nothing for the model", true},
		{"wrapped plain", fmt.Errorf("query: %w", secret), "", false, "wrapping adds nothing", true},
		{"WithDetail", tool.WithDetail(secret, "the database is down"), "the database is down", true, "the marked detail", true},
		{"WithDetail nil err", tool.WithDetail(nil, "no stock"), "no stock", true, "a detail without a cause", false},
		{"WithDetail wrapped", fmt.Errorf("h: %w", tool.WithDetail(secret, "down")), "down", true, "found through wrapping", true},
		{"Error message", tool.NotFound("order %s", "A1"), "order A1", true, "a typed error's message", false},
		{"Error without message", tool.Unreachable(secret), "", false, "a typed error without message carries nothing", true},
		{"outermost wins", tool.WithDetail(tool.NotFound("inner"), "outer"), "outer", true, "the first detail of the chain wins", false},
		{"empty outer, inner found", tool.WithDetail(tool.NotFound("inner"), " "), "inner", true, "an empty detail is skipped", false},
		{"joined", errors.Join(secret, tool.WithDetail(nil, "joined")), "joined", true, "errors.Join trees are searched", true},
		{"nil", nil, "", false, "nil carries nothing", false},
		{"typed nil Error", (*tool.Error)(nil), "", false, "a typed nil does not panic", false},
	}
	for _, tc := range tests {
		got, ok := tool.DetailOf(tc.err)
		assert.Equalf(t, tc.want, got, "DetailOf(%s) = %q; want %q (%s)", tc.name, got, tc.want, tc.reason)
		assert.Equalf(t, tc.wantOK, ok, "DetailOf(%s) ok = %v; want %v (%s)", tc.name, ok, tc.wantOK, tc.reason)
		assert.Equalf(t, tc.wantSecret, errors.Is(tc.err, secret), "errors.Is(%s, secret): the cause stays in the chain", tc.name)
	}
	assert.Equal(t, "the database is down: postgres://app:hunter2@db/orders", tool.WithDetail(secret, "the database is down").Error(),
		"Error() keeps the cause for the log")
}

type jsonTarget struct {
	Count int      `json:"count"`
	Price float64  `json:"price"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Items []struct {
		X int `json:"x"`
	} `json:"items"`
}

func TestJSONDetail(t *testing.T) {
	decode := func(s string) error {
		var v jsonTarget
		return json.Unmarshal([]byte(s), &v)
	}
	strict := func(s string) error {
		var v jsonTarget
		d := json.NewDecoder(strings.NewReader(s))
		d.DisallowUnknownFields()
		return d.Decode(&v)
	}
	tests := []struct {
		name, want, reason string
		err                error
	}{
		{"wrong type", "field count: want an integer, got a string", "names the field and both JSON types", decode(`{"count":"x"}`)},
		{"nested", "field items.x: want an integer, got a string", "the path of a nested field", decode(`{"items":[{"x":"y"}]}`)},
		{"out of range", "field price: the number 1e400 is out of range", "a float64 overflow, without Go type names", decode(`{"price":1e400}`)},
		{"fraction for integer", "field count: want an integer, got the number 1.5", "a fraction where an integer is wanted", decode(`{"count":1.5}`)},
		{"object for string", "field name: want a string, got an object", "objects", decode(`{"name":{}}`)},
		{"array element", "field tags: want a string, got a number", "array elements name their array", decode(`{"tags":[1]}`)},
		{"whole value", "want an object, got an array", "the top-level value", decode(`[1]`)},
		{"syntax", "at byte 2: invalid character ']' looking for beginning of object key string", "the offset and the decoder's words", decode(`{]`)},
		{"truncated", "at byte 9: unexpected end of JSON input", "unterminated input", decode(`{"count":`)},
		{"unknown field", `unknown field "colour"`, "a field the tool does not have", strict(`{"colour":1}`)},
		{"stream end", "the arguments are incomplete", "a decoder that ran out of input", strict(`{"count":`)},
		{"other", "the arguments do not decode", "anything else says only that", errors.New("reflect: call of reflect.Value.Set on zero Value")},
		{"nil", "", "no error, no detail", nil},
	}
	for _, tc := range tests {
		got := tool.JSONDetail(tc.err)
		assert.Equalf(t, tc.want, got, "JSONDetail(%s: %v) = %q; want %q (%s)", tc.name, tc.err, got, tc.want, tc.reason)
		for _, goism := range []string{"Go value", "Go struct", "jsonTarget", "float64", "json: "} {
			assert.NotContainsf(t, got, goism, "JSONDetail(%s) = %q names Go internals", tc.name, got)
		}
	}
}

func TestSchemaDetail(t *testing.T) {
	tests := []struct {
		name, in, want, reason string
	}{
		{"type", `type: map[a:map[a:1]] has type "object", want "string"`, `the value has type "object", want "string"`, "the Go rendering of the value goes"},
		{"type list", `type: [1 2] has type "array", want one of "null, string"`, `the value has type "array", want one of "null, string"`, "a list of types is kept"},
		{"enum", `enum: map[a:1] does not equal any of: [blog shop]`, "the value is not one of the allowed values", "the allowed values are in the next step, from the schema"},
		{"const", `const: 2 does not equal 1`, "the value is not the required constant", "const"},
		{"anyOf", "anyOf: did not validate against any of [0xc000123 0xc000456]:\n  x", "the value matches none of the allowed forms", "schema pointers go"},
		{"oneOf none", `oneOf: did not validate against any of [0xc0001]`, "the value matches none of the allowed forms", "oneOf, none"},
		{"oneOf both", `oneOf: validated against both 0xc01 and 0xc02`, "the value matches more than one of the allowed forms", "oneOf, several"},
		{"not", `not: validated against 0xc01`, "the value has a form that is not allowed", "not"},
		{"contains", `contains: [1 2] does not have an item matching 0xc01`, "no item has the required form", "contains"},
		{"minimum", `minimum: 0 is less than 1.000000`, `minimum: 0 is less than 1.000000`, "numbers are JSON already"},
		{"maxLength", `maxLength: "abcdef" contains 6 Unicode code points, more than 3`, `maxLength: "abcdef" contains 6 Unicode code points, more than 3`, "the model's own string is kept"},
		{"decode error", `unmarshaling arguments: json: cannot unmarshal array into Go value of type map[string]interface {}`, "the value does not decode", "Go type names go"},
		{"no keyword", `something odd`, `something odd`, "unknown text is kept"},
		{"multi-line", "minimum: 0 is less than 1\ngoroutine 1", "minimum: 0 is less than 1", "first line only"},
	}
	for _, tc := range tests {
		got := tool.SchemaDetail(tc.in)
		assert.Equalf(t, tc.want, got, "SchemaDetail(%s) = %q; want %q (%s)", tc.name, got, tc.want, tc.reason)
		for _, goism := range []string{"map[", "0xc0", "interface {}", "Go value"} {
			assert.NotContainsf(t, got, goism, "SchemaDetail(%s) = %q renders Go values", tc.name, got)
		}
	}
}

func TestArgsErrorDetail(t *testing.T) {
	var v struct {
		N int `json:"n"`
	}
	err := &tool.ArgsError{Tool: "t", Err: json.Unmarshal([]byte(`{"n":"x"}`), &v)}
	assert.Equal(t, "field n: want an integer, got a string", err.Detail())
	assert.Contains(t, err.Error(), "Go struct field", "Error keeps the decoder's words for the log")
	assert.Equal(t, "the arguments do not decode", (&tool.ArgsError{Tool: "t"}).Detail(), "a nil cause")
	assert.Equal(t, "tool t: arguments do not decode", (&tool.ArgsError{Tool: "t"}).Error(), "a nil cause does not panic")
}
