package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

type apItem struct {
	ID   int      `json:"id"`
	Tags []string `json:"tags,omitempty"`
}

type apAddr struct {
	City string `json:"city"`
}

type apIn struct {
	Name   string         `json:"name" jsonschema:"the site name"`
	Count  int            `json:"count,omitempty"`
	Items  []apItem       `json:"items,omitempty"`
	Addr   *apAddr        `json:"addr,omitempty"`
	Labels map[string]int `json:"labels,omitempty"`
}

// apTool is create_site with an inferred schema plus an enum on name and a
// minimum on count.
func apTool(tb testing.TB) *tool.Tool {
	tl := tool.New("create_site", "creates a site", func(_ context.Context, in apIn) (string, error) { return in.Name, nil })
	one := 1.0
	tl.InputSchema.Properties["count"].Minimum = &one
	tl.InputSchema.Properties["name"].Enum = []any{"blog", "shop"}
	return catalogued(tb, tl)
}

func apSend(t *testing.T, opts guard.ArgPolicyOptions, tl *tool.Tool, args string) (observation.Observation, *reached) {
	t.Helper()
	r := &reached{}
	obs, err := send(t, invoker.Chain(r.handle, guard.ArgPolicy(opts)), tl, args)
	require.NoError(t, err)
	return obs, r
}

func TestArgPolicy_NotJSON(t *testing.T) {
	tests := []struct{ name, args, detail, reason string }{
		{"garbage", `not json`, "at byte 2: invalid character 'o' in literal null (expecting 'u')", "the decoder's words say what is wrong"},
		{"truncated", `{"name":`, "at byte 8: unexpected end of JSON input", "a cut-off object is not JSON"},
		{"trailing", `{} x`, "at byte 4: invalid character 'x' after top-level value", "one value only"},
		{"array", `["blog"]`, "got an array", "arguments must be an object"},
		{"string", `"blog"`, "got a string", "arguments must be an object"},
		{"number", `42`, "got a number", "arguments must be an object"},
		{"boolean", `true`, "got a boolean", "arguments must be an object"},
		{"null", `null`, "got null", "null is not an object"},
	}
	tl := apTool(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, r := apSend(t, guard.ArgPolicyOptions{}, tl, tt.args)
			assert.Equal(t, outcome.Rejected, obs.Outcome(), "ArgPolicy(%s) = %v; want REJECTED (%s)", tt.args, obs, tt.reason)
			assert.Equal(t, errcode.ArgJSONInvalid, obs.Code())
			assert.Equal(t, "the arguments of create_site are not a JSON object: "+tt.detail, obs.Reason())
			assert.Equal(t, prompt.Default().Text(prompt.NextFixJSON, "tool", "create_site"), obs.Next())
			assert.Zero(t, r.calls, "a rejected call must not reach the tool")
		})
	}
}

func TestArgPolicy_BlankArgsAreEmptyObject(t *testing.T) {
	free := catalogued(t, &tool.Tool{Name: "ping", InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
	for _, args := range []string{"", "  ", "\n"} {
		obs, r := apSend(t, guard.ArgPolicyOptions{}, free, args)
		assert.Equal(t, outcome.Success, obs.Outcome(), "ArgPolicy(%q) = %v; want it passed as {}", args, obs)
		assert.Equal(t, 1, r.calls)
		assert.Equal(t, args, string(r.last.Args), "the call goes down with its original bytes")
	}
	obs, _ := apSend(t, guard.ArgPolicyOptions{}, apTool(t), "")
	assert.Equal(t, errcode.ArgRejected, obs.Code(), "blank args of a tool with required parameters miss them")
	assert.Equal(t, "required argument name of create_site is missing", obs.Reason())
}

func TestArgPolicy_SchemaViolation(t *testing.T) {
	tests := []struct {
		name, args    string
		field, reason string
		expect, why   string
	}{
		{
			"wrong type", `{"name":1}`, "name",
			`argument name of create_site was rejected: the value has type "integer", want "string"`,
			`{"type":"string","enum":["blog","shop"]}`, "the field and its schema are named",
		},
		{
			"not in enum", `{"name":"wiki"}`, "name",
			`argument name of create_site was rejected: the value is not one of the allowed values`,
			`{"type":"string","enum":["blog","shop"]}`, "the allowed values are in the expectation",
		},
		{
			"below minimum", `{"name":"blog","count":0}`, "count",
			`argument count of create_site was rejected: minimum: 0/1 is less than 1.000000`,
			`{"type":"integer","minimum":1}`, "numeric bounds are named",
		},
		{
			"fraction for integer", `{"name":"blog","count":1.5}`, "count",
			`argument count of create_site was rejected: the value has type "number", want "integer"`,
			`{"type":"integer","minimum":1}`, "an integer is expected",
		},
		{
			"nested array item", `{"name":"blog","items":[{"id":1},{"id":"x"}]}`, "items[].id",
			`argument items[].id of create_site was rejected: the value has type "string", want "integer"`,
			`{"type":"integer"}`, "the path walks arrays and objects",
		},
		{
			"nested array of array", `{"name":"blog","items":[{"id":1,"tags":[7]}]}`, "items[].tags[]",
			`argument items[].tags[] of create_site was rejected: the value has type "integer", want "string"`,
			`{"type":"string"}`, "nested arrays are walked too",
		},
		{
			"wrong container", `{"name":"blog","items":{"id":1}}`, "items",
			`argument items of create_site was rejected: the value has type "object", want one of "null, array"`,
			`{"type":["null","array"],"items":{"type":"object","required":["id"]}}`, "an array's expectation shows its items",
		},
		{
			"map value", `{"name":"blog","labels":{"a":"x"}}`, "labels.*",
			`argument labels.* of create_site was rejected: the value has type "string", want "integer"`,
			`{"type":"integer"}`, "additionalProperties values are named with *",
		},
		{
			"missing required", `{"count":2}`, "name",
			`required argument name of create_site is missing`,
			`{"type":"string","enum":["blog","shop"]}`, "a missing property uses REASON_MISSING_ARGUMENT",
		},
		{
			"missing nested required", `{"name":"blog","addr":{}}`, "addr.city",
			`required argument addr.city of create_site is missing`,
			`{"type":"string"}`, "nested required properties are located",
		},
		{
			"missing in array item", `{"name":"blog","items":[{}]}`, "items[].id",
			`required argument items[].id of create_site is missing`,
			`{"type":"integer"}`, "required properties of array items are located",
		},
		{
			"unknown argument", `{"name":"blog","colour":"red"}`, "colour",
			`argument colour of create_site was rejected: unexpected additional properties ["colour"]`,
			`{"propertyNames":{"enum":["addr","count","items","labels","name"]}}`, "the allowed names are listed",
		},
	}
	tl := apTool(t)
	cat := prompt.Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, r := apSend(t, guard.ArgPolicyOptions{}, tl, tt.args)
			require.Equal(t, outcome.Rejected, obs.Outcome(), "ArgPolicy(%s) = %v; want REJECTED (%s)", tt.args, obs, tt.why)
			assert.Equal(t, errcode.ArgRejected, obs.Code())
			assert.Equal(t, tt.reason, obs.Reason(), "reason of ArgPolicy(%s) (%s)", tt.args, tt.why)
			assert.Equal(t, cat.Text(prompt.NextFixArgs, "field", tt.field, "expect", tt.expect, "tool", "create_site"), obs.Next(),
				"next step of ArgPolicy(%s) (%s)", tt.args, tt.why)
			assert.Zero(t, r.calls)
		})
	}
}

func TestArgPolicy_ValidPassesUnchanged(t *testing.T) {
	args := `{ "name" : "blog", "count": 2, "items": [{"id": 1, "tags": ["a"]}], "addr": {"city": "Oslo"}, "labels": {"x": 1} }`
	obs, r := apSend(t, guard.ArgPolicyOptions{}, apTool(t), args)
	assert.Equal(t, outcome.Success, obs.Outcome(), "ArgPolicy(valid) = %v; want it passed", obs)
	require.Equal(t, 1, r.calls)
	assert.Equal(t, args, string(r.last.Args), "accepted arguments reach next byte for byte")
}

func TestArgPolicy_MultipleMissing(t *testing.T) {
	tl := catalogued(t, &tool.Tool{
		Name: "transfer", Func: func(context.Context, tool.Request) (any, error) { return nil, nil },
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"from", "to"},
			Properties: map[string]*jsonschema.Schema{"from": {Type: "string"}, "to": {Type: "string"}}},
	})
	obs, _ := apSend(t, guard.ArgPolicyOptions{}, tl, `{}`)
	assert.Equal(t, "required argument from, to of transfer is missing", obs.Reason())
	assert.Contains(t, obs.Next(), "correct from, to (")
}

func TestArgPolicy_RefsAndCombinators(t *testing.T) {
	// A hand-written schema with $defs, $ref, prefixItems and anyOf: the
	// field path restarts at a definition (the validator reports the
	// definition's path) and falls back to the whole arguments where the
	// path cannot be followed.
	schema := &jsonschema.Schema{
		Type: "object",
		Defs: map[string]*jsonschema.Schema{
			"pos": {Type: "integer", Minimum: ptr(0.0)},
			"obj": {Type: "object", Required: []string{"k"}, Properties: map[string]*jsonschema.Schema{"k": {Ref: "#/$defs/pos"}}},
		},
		Properties: map[string]*jsonschema.Schema{
			"n":    {Ref: "#/$defs/pos"},
			"o":    {Ref: "#/$defs/obj"},
			"pair": {Type: "array", PrefixItems: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}},
			"alt":  {AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}},
			"cond": {If: &jsonschema.Schema{Type: "string"}, Then: &jsonschema.Schema{MinLength: ptr(2)}, Else: &jsonschema.Schema{Type: "integer"}},
			"neg":  {Not: &jsonschema.Schema{Type: "string"}},
			"all":  {AllOf: []*jsonschema.Schema{{Type: "integer"}, {Maximum: ptr(5.0)}}},
		},
		PatternProperties: map[string]*jsonschema.Schema{"^x_": {Type: "boolean"}},
	}
	tl := catalogued(t, &tool.Tool{Name: "t", InputSchema: schema, Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
	tests := []struct{ name, args, field, expect, why string }{
		{"ref", `{"n":-1}`, "", `{"type":"integer","minimum":0}`, "a $ref'd definition is reported at its own path"},
		{"ref required", `{"o":{}}`, "k", `{"type":"integer","minimum":0}`, "a required property of a definition, through $ref"},
		{"prefix items", `{"pair":["a","b"]}`, "pair[1]", `{"type":"integer"}`, "prefixItems are indexed"},
		{"any of", `{"alt":true}`, "alt", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, "anyOf shows its alternatives"},
		{"then", `{"cond":"a"}`, "cond", `{"minLength":2}`, "if/then is followed"},
		{"else", `{"cond":true}`, "cond", `{"type":"integer"}`, "if/else is followed"},
		{"not", `{"neg":"s"}`, "neg", `{"not":{"type":"string"}}`, "not shows what is excluded"},
		{"all of", `{"all":9}`, "all", `{"maximum":5}`, "allOf members are followed"},
		{"pattern", `{"x_a":1}`, "*", `{"type":"boolean"}`, "patternProperties are named with *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, _ := apSend(t, guard.ArgPolicyOptions{}, tl, tt.args)
			require.Equal(t, errcode.ArgRejected, obs.Code(), "ArgPolicy(%s) = %v", tt.args, obs)
			field := tt.field
			if field == "" {
				field = "arguments"
			}
			assert.Equal(t, prompt.Default().Text(prompt.NextFixArgs, "field", field, "expect", tt.expect, "tool", "t"), obs.Next(),
				"ArgPolicy(%s) (%s); reason %q", tt.args, tt.why, obs.Reason())
			assert.NotContains(t, obs.Reason(), "\n", "a reason is one line")
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestArgPolicy_PolicyRefusesField(t *testing.T) {
	opts := guard.ArgPolicyOptions{Policy: func(_ context.Context, call invoker.Call, args map[string]any) error {
		if args["name"] == "shop" {
			return &guard.ArgError{Field: "name", Expect: "a site you own", Detail: "shop belongs to another account"}
		}
		return nil
	}}
	obs, r := apSend(t, opts, apTool(t), `{"name":"shop"}`)
	assert.Equal(t, outcome.Rejected, obs.Outcome())
	assert.Equal(t, errcode.ArgRejected, obs.Code())
	assert.Equal(t, "argument name of create_site was rejected: shop belongs to another account", obs.Reason())
	assert.Equal(t, prompt.Default().Text(prompt.NextFixArgs, "field", "name", "expect", "a site you own", "tool", "create_site"), obs.Next())
	assert.Zero(t, r.calls)

	obs, r = apSend(t, opts, apTool(t), `{"name":"blog"}`)
	assert.Equal(t, outcome.Success, obs.Outcome(), "the policy accepts other values")
	assert.Equal(t, 1, r.calls)
}

func TestArgPolicy_PolicyRefusesWhole(t *testing.T) {
	opts := guard.ArgPolicyOptions{Policy: func(context.Context, invoker.Call, map[string]any) error {
		return fmt.Errorf("wrapped: %w", errors.New("writes are frozen today"))
	}}
	obs, _ := apSend(t, opts, apTool(t), `{"name":"blog"}`)
	assert.Equal(t, errcode.ArgRejected, obs.Code())
	assert.Equal(t, "argument arguments of create_site was rejected: wrapped: writes are frozen today", obs.Reason())
	assert.Equal(t, prompt.Default().Text(prompt.NextFixArgs, "field", "arguments", "expect", "wrapped: writes are frozen today", "tool", "create_site"), obs.Next())

	// An ArgError without a field or expectation names the arguments and
	// repeats its detail.
	opts.Policy = func(context.Context, invoker.Call, map[string]any) error { return &guard.ArgError{Detail: "too many"} }
	obs, _ = apSend(t, opts, apTool(t), `{"name":"blog"}`)
	assert.Equal(t, prompt.Default().Text(prompt.NextFixArgs, "field", "arguments", "expect", "too many", "tool", "create_site"), obs.Next())
	assert.Equal(t, "argument : too many", (&guard.ArgError{Detail: "too many"}).Error())
}

func TestArgPolicy_PassesWhatIsNotItsJob(t *testing.T) {
	r := &reached{}
	h := invoker.Chain(r.handle, guard.ArgPolicy(guard.ArgPolicyOptions{}))
	obs, err := h(context.Background(), invoker.Call{ID: "c1", Name: "unknown", Args: json.RawMessage(`garbage`)})
	require.NoError(t, err)
	assert.Equal(t, outcome.Success, obs.Outcome(), "a call without a tool is the invoker's to answer")

	// A tool outside a catalog has no resolved schema: JSON is still
	// checked, the schema is not.
	loose := &tool.Tool{Name: "loose", InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"x"}}}
	obs, _ = apSend(t, guard.ArgPolicyOptions{}, loose, `{}`)
	assert.Equal(t, outcome.Success, obs.Outcome(), "no resolved schema, no schema check")
	obs, _ = apSend(t, guard.ArgPolicyOptions{}, loose, `[]`)
	assert.Equal(t, errcode.ArgJSONInvalid, obs.Code())
}

func TestArgPolicy_LongDetailClipped(t *testing.T) {
	long := strings.Repeat("é", 400)
	opts := guard.ArgPolicyOptions{Policy: func(context.Context, invoker.Call, map[string]any) error { return errors.New(long) }}
	obs, _ := apSend(t, opts, apTool(t), `{"name":"blog"}`)
	assert.Less(t, len(obs.Reason()), 400, "a long detail is clipped")
	assert.True(t, strings.HasSuffix(obs.Reason(), "…"))
	assert.True(t, utf8.ValidString(obs.Reason()), "clipping keeps UTF-8 valid")
}

func TestArgPolicy_Chinese(t *testing.T) {
	zh := prompt.For(prompt.Chinese)
	obs, _ := apSend(t, guard.ArgPolicyOptions{Catalog: zh}, apTool(t), `{"count":2}`)
	assert.Equal(t, zh.Text(prompt.ReasonMissingArgument, "field", "name", "tool", "create_site"), obs.Reason())
	assert.Equal(t, zh.Text(prompt.NextFixArgs, "field", "name", "expect", `{"type":"string","enum":["blog","shop"]}`, "tool", "create_site"), obs.Next())
	obs, _ = apSend(t, guard.ArgPolicyOptions{Catalog: zh}, apTool(t), `[`)
	assert.Equal(t, zh.Text(prompt.NextFixJSON, "tool", "create_site"), obs.Next())
}

// FuzzArgPolicy: arbitrary bytes as arguments never panic and are always
// classified: passed on (valid for the schema), or REJECTED with
// ARG_JSON_INVALID or ARG_REJECTED and a next step.
func FuzzArgPolicy(f *testing.F) {
	for _, s := range []string{`{"name":"blog"}`, `{"name":1}`, `{}`, `[]`, `{"name":"blog","items":[{"id":"x"}]}`,
		`{"name":"blog","addr":{}}`, `{"x":1}`, "", `{"name":"blog","count":0}`, "\xff", `{"name":"blog","labels":{"a":"b"}}`} {
		f.Add([]byte(s))
	}
	tl := apTool(f)
	r := &reached{}
	h := invoker.Chain(r.handle, guard.ArgPolicy(guard.ArgPolicyOptions{}))
	f.Fuzz(func(t *testing.T, args []byte) {
		obs, err := h(context.Background(), invoker.Call{ID: "c", Name: tl.Name, Args: args, Tool: tl})
		if err != nil {
			t.Fatalf("ArgPolicy(%q) error %v; want an observation", args, err)
		}
		switch obs.Outcome() {
		case outcome.Success:
			var in apIn
			if err := json.Unmarshal(args, &in); err != nil && strings.TrimSpace(string(args)) != "" {
				t.Fatalf("ArgPolicy(%q) passed arguments that do not decode: %v", args, err)
			}
		case outcome.Rejected:
			if c := obs.Code(); c != errcode.ArgJSONInvalid && c != errcode.ArgRejected {
				t.Fatalf("ArgPolicy(%q) = %v; want ARG_JSON_INVALID or ARG_REJECTED", args, obs)
			}
			if obs.Next() == "" || obs.Reason() == "" {
				t.Fatalf("ArgPolicy(%q) = %v without reason or next step", args, obs)
			}
		default:
			t.Fatalf("ArgPolicy(%q) = %v; want SUCCESS or REJECTED", args, obs)
		}
	})
}

func ExampleArgPolicy() {
	type in struct {
		Name string `json:"name"`
	}
	createSite := tool.New("create_site", "creates a site", func(_ context.Context, in in) (string, error) { return "created " + in.Name, nil })
	tool.MustCatalog(createSite) // resolves the schema the guard validates against

	h := invoker.Chain(invoker.New(nil), guard.ArgPolicy(guard.ArgPolicyOptions{}))
	for _, args := range []string{`{"name":"blog"}`, `{"title":"blog"}`, `{}`, `"blog"`} {
		obs, _ := h(context.Background(), invoker.Call{ID: "c1", Name: "create_site", Args: json.RawMessage(args), Tool: createSite})
		fmt.Println(obs)
	}
	// Output:
	// SUCCESS: create_site succeeded
	// REJECTED ARG_REJECTED: argument title of create_site was rejected: unexpected additional properties ["title"]. Next: correct title ({"propertyNames":{"enum":["name"]}}) and call create_site again; if you cannot, ask the user with builtin_node_follow_up or call builtin_node_fail with the reason
	// REJECTED ARG_REJECTED: required argument name of create_site is missing. Next: correct name ({"type":"string"}) and call create_site again; if you cannot, ask the user with builtin_node_follow_up or call builtin_node_fail with the reason
	// REJECTED ARG_JSON_INVALID: the arguments of create_site are not a JSON object: got a string. Next: send the arguments of create_site again as one JSON object that matches its schema
}
