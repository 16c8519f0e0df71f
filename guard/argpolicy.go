package guard

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/internal/fastschema"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// ArgPolicyFunc is a host's own check of a call's arguments, run by
// [ArgPolicy] after they parsed as a JSON object and passed the tool's
// input schema. args is the decoded object (numbers are float64); the
// function must not keep or change it. It returns nil to accept the call,
// an [*ArgError] to refuse one field (naming it and what it expects), or
// any other error to refuse the arguments as a whole; the error text (its
// first line, clipped by tool.ClipDetail) becomes the detail of the
// ARG_REJECTED reason the model reads, so it must not carry secrets. An
// ArgPolicyFunc must be safe for concurrent use.
type ArgPolicyFunc func(ctx context.Context, call invoker.Call, args map[string]any) error

// ArgError is the refusal of one argument by an [ArgPolicyFunc].
type ArgError struct {
	// Field is the dotted path of the refused argument ("amount",
	// "items[].id"); empty means the arguments as a whole.
	Field string
	// Expect says what the field must hold ("at most 1000"); it becomes
	// {expect} of the next step. Empty means Detail is used.
	Expect string
	// Detail says what is wrong with the value; it becomes {detail} of the
	// reason.
	Detail string
}

// Error returns "argument <field>: <detail>".
func (e *ArgError) Error() string { return "argument " + e.Field + ": " + e.Detail }

// ArgPolicyOptions configures [ArgPolicy]. The zero value is ready to use:
// schema checks only, English texts.
type ArgPolicyOptions struct {
	// Catalog renders reasons and next steps; nil means English.
	Catalog *prompt.Catalog
	// Policy, when set, is asked about every call whose arguments passed
	// the schema. Nil accepts them all.
	Policy ArgPolicyFunc
	// Cache is how many argument texts that passed a tool's schema the
	// guard remembers per resolved schema, so that the very same bytes are
	// neither decoded nor validated again: 0 means [DefaultArgCache], a
	// negative value remembers none. Texts longer than [MaxCachedArgs]
	// bytes are never remembered. Failures are never remembered.
	Cache int
}

// DefaultArgCache is how many passed argument texts [ArgPolicy] remembers
// per resolved schema when [ArgPolicyOptions.Cache] is 0.
const DefaultArgCache = 256

// MaxCachedArgs is the length in bytes of the longest argument text
// [ArgPolicy] remembers as passed.
const MaxCachedArgs = 4 << 10

// maxCachedSchemas bounds the schemas the arg policy remembers passed
// arguments for; past it, it forgets them all (tools made per session, as
// adapters do, must not pin memory forever).
const maxCachedSchemas = 1024

// wholeArgs names the arguments as a whole in {field}.
const wholeArgs = "arguments"

// maxDetail bounds the validator's text quoted in a reason.
const maxDetail = 300

// ArgPolicy returns the arg-policy guard, the outermost of [Default]. It
// checks the raw arguments of every call that has a tool:
//
//   - arguments that are not JSON, or not a JSON object: REJECTED
//     ARG_JSON_INVALID, next step NEXT_FIX_JSON, the detail in JSON words
//     (tool.JSONDetail: "at byte 7: …", "the number 1e400 is out of
//     range"). Empty or blank arguments
//     count as {} (models send either for a tool without parameters);
//   - an object that fails the tool's resolved input schema
//     (tool.Tool.Resolved, validated by github.com/google/jsonschema-go):
//     REJECTED ARG_REJECTED. The reason names the failing field as a
//     dotted path ("items[].id") with the validator's words rewritten by
//     tool.SchemaDetail (no Go rendering of values or schemas), or uses
//     REASON_MISSING_ARGUMENT for a missing required property; the next
//     step NEXT_FIX_ARGS names the field and what it expects: the
//     constraints of its schema as compact JSON, or for an argument the
//     schema does not allow, the allowed names;
//   - a Policy refusal: REJECTED ARG_REJECTED, naming the [ArgError]'s
//     field, or "arguments" for a plain error.
//
// Calls without a tool, or whose tool was not added to a catalog (no
// resolved schema), skip the schema check; calls without a tool pass
// through untouched (the invoker answers them). Accepted calls reach next
// unchanged, with their original bytes.
//
// Schemas of the common subset (objects of typed properties, required
// names, additionalProperties, items, string enums: what jsonschema.For
// infers from a Go struct) are also compiled into a reader of the raw
// bytes that answers "surely valid" without decoding them; when it is not
// sure, the full path decides, so no verdict changes (package internal/fastschema; fuzzed
// against the full path). Without a Policy, an accepted call is then
// neither decoded nor validated by jsonschema-go.
//
// Argument texts that passed a schema are remembered, byte for byte, per
// resolved schema (up to [ArgPolicyOptions.Cache] of them, a random one
// forgotten when full): the same bytes against the same schema skip
// decoding and validation, which is sound because validation is a pure
// function of the two. Policy is asked on every call all the same (it is
// the host's and may depend on the call), with the arguments decoded
// anew. It never panics on model input and is safe for concurrent use.
func ArgPolicy(opts ArgPolicyOptions) invoker.Interceptor {
	return newArgPolicy(opts).intercept
}

func newArgPolicy(opts ArgPolicyOptions) *argPolicy {
	ap := &argPolicy{cat: opts.Catalog, policy: opts.Policy}
	if opts.Cache >= 0 {
		ap.passed = &passedArgs{size: opts.Cache, schemas: make(map[*jsonschema.Resolved]map[string]struct{})}
		if ap.passed.size == 0 {
			ap.passed.size = DefaultArgCache
		}
	}
	return ap
}

type argPolicy struct {
	cat    *prompt.Catalog
	policy ArgPolicyFunc
	passed *passedArgs // nil when disabled
	fast   fastschema.Cache
}

// passedArgs remembers argument texts that passed a resolved schema.
type passedArgs struct {
	size    int // texts per schema
	mu      sync.RWMutex
	schemas map[*jsonschema.Resolved]map[string]struct{}
}

// has reports whether args passed rs before. A nil p has nothing.
func (p *passedArgs) has(rs *jsonschema.Resolved, args []byte) bool {
	if p == nil || len(args) > MaxCachedArgs {
		return false
	}
	p.mu.RLock()
	_, ok := p.schemas[rs][string(args)]
	p.mu.RUnlock()
	return ok
}

// add remembers that the argument text key passed rs, forgetting a random
// text of rs when it holds size of them already, and every schema's texts
// when it holds maxCachedSchemas schemas. A nil p remembers nothing.
func (p *passedArgs) add(rs *jsonschema.Resolved, key string) {
	if p == nil || len(key) > MaxCachedArgs {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	texts := p.schemas[rs]
	if texts == nil {
		if len(p.schemas) >= maxCachedSchemas {
			clear(p.schemas)
		}
		texts = make(map[string]struct{})
		p.schemas[rs] = texts
	}
	if len(texts) >= p.size {
		for k := range texts { // map order is random: a random victim
			delete(texts, k)
			break
		}
	}
	texts[key] = struct{}{}
}

func (ap *argPolicy) intercept(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
	t := call.Tool
	if t == nil {
		return next(ctx, call)
	}
	rs := t.Resolved()
	if rs != nil && ap.policy == nil {
		if f := ap.fast.Of(rs); f != nil && f.Valid(call.Args) {
			return next(ctx, call) // surely valid (internal/fastschema)
		}
	}
	known := rs != nil && ap.passed.has(rs, call.Args)
	if known && ap.policy == nil {
		return next(ctx, call) // these bytes passed this schema before
	}
	var args map[string]any
	if !isBlank(call.Args) {
		var v any
		if err := json.Unmarshal(call.Args, &v); err != nil {
			return ap.notJSON(call, tool.JSONDetail(err)), nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return ap.notJSON(call, "got "+jsonKind(v)), nil
		}
		args = m
	} else {
		args = map[string]any{}
	}
	if rs != nil && !known {
		if err := rs.Validate(args); err != nil {
			return ap.schemaViolation(call, err), nil
		}
		ap.passed.add(rs, string(call.Args))
	}
	if ap.policy != nil {
		if err := ap.policy(ctx, call, args); err != nil {
			return ap.refused(call, err), nil
		}
	}
	return next(ctx, call)
}

func (ap *argPolicy) notJSON(call invoker.Call, detail string) observation.Observation {
	return observation.Rejected(errcode.ArgJSONInvalid,
		ap.cat.Reason(errcode.ArgJSONInvalid, "tool", call.Name, "detail", detail),
		ap.cat.Text(prompt.NextFixJSON, "tool", call.Name))
}

func (ap *argPolicy) refused(call invoker.Call, err error) observation.Observation {
	field, expect, detail := wholeArgs, "", err.Error()
	var ae *ArgError
	if errors.As(err, &ae) {
		if ae.Field != "" {
			field = ae.Field
		}
		expect, detail = ae.Expect, ae.Detail
	}
	detail = tool.ClipDetail(detail)
	if expect == "" {
		expect = detail
	}
	return ap.rejectField(call, field, expect, ap.cat.Reason(errcode.ArgRejected, "field", field, "tool", call.Name, "detail", detail))
}

func (ap *argPolicy) rejectField(call invoker.Call, field, expect, reason string) observation.Observation {
	return observation.Rejected(errcode.ArgRejected, reason,
		ap.cat.Text(prompt.NextFixArgs, "field", field, "expect", expect, "tool", call.Name))
}

// schemaViolation turns a validator error into ARG_REJECTED. The validator
// reports "validating <schema path>: ... <keyword>: <detail>"; the deepest
// schema path locates the field, the keyword says what failed.
func (ap *argPolicy) schemaViolation(call invoker.Call, verr error) observation.Observation {
	path, detail := splitValidation(verr.Error())
	root := call.Tool.InputSchema
	field, sub := locate(root, path)

	if names, ok := strings.CutPrefix(detail, "required: missing properties: "); ok {
		missing := quotedList(names)
		if len(missing) > 0 {
			fields := make([]string, len(missing))
			for i, m := range missing {
				fields[i] = join(field, m)
			}
			fieldText := ap.cat.List(fields)
			expect := expectOf(root, property(root, sub, missing[0]))
			return ap.rejectField(call, fieldText, expect,
				ap.cat.Text(prompt.ReasonMissingArgument, "field", fieldText, "tool", call.Name))
		}
	}
	if names, ok := strings.CutPrefix(detail, "unexpected additional properties "); ok {
		extra := quotedList(names)
		if len(extra) > 0 {
			fields := make([]string, len(extra))
			for i, m := range extra {
				fields[i] = join(field, m)
			}
			fieldText := ap.cat.List(fields)
			return ap.rejectField(call, fieldText, expectNames(root, sub),
				ap.cat.Reason(errcode.ArgRejected, "field", fieldText, "tool", call.Name, "detail", tool.ClipDetail(detail)))
		}
	}
	if field == "" {
		field = wholeArgs
	}
	return ap.rejectField(call, field, expectOf(root, sub),
		ap.cat.Reason(errcode.ArgRejected, "field", field, "tool", call.Name, "detail", tool.ClipDetail(tool.SchemaDetail(detail))))
}

// splitValidation returns the deepest schema path of a jsonschema-go
// validation error ("root" or a JSON pointer) and the text after it.
func splitValidation(msg string) (path, detail string) {
	const prefix = "validating "
	path, detail = "root", msg
	for strings.HasPrefix(detail, prefix) {
		rest := detail[len(prefix):]
		i := strings.Index(rest, ": ")
		if i < 0 {
			break
		}
		path, detail = rest[:i], rest[i+2:]
	}
	// anyOf and oneOf list each alternative's failure on further lines;
	// the first line says what failed.
	if i := strings.IndexByte(detail, '\n'); i >= 0 {
		detail = strings.TrimSuffix(detail[:i], ":")
	}
	return path, detail
}

// locate walks root along a schema path (a JSON pointer such as
// /properties/items/items/properties/id) and returns the matching argument
// path ("items[].id") and the schema found there (nil when the walk leaves
// the schema, in which case the field path is as far as it got).
func locate(root *jsonschema.Schema, path string) (string, *jsonschema.Schema) {
	s := root
	field := ""
	if path == "root" || path == "" || !strings.HasPrefix(path, "/") {
		return "", root
	}
	segs := strings.Split(path[1:], "/")
	for i := 0; i < len(segs) && s != nil; i++ {
		seg := segs[i]
		arg := func() (string, bool) {
			if i+1 >= len(segs) {
				return "", false
			}
			i++
			return segs[i], true
		}
		switch seg {
		case "properties":
			name, ok := arg()
			if !ok {
				return field, nil
			}
			field = join(field, name)
			s = s.Properties[name]
		case "patternProperties":
			pat, ok := arg()
			if !ok {
				return field, nil
			}
			field = join(field, "*")
			s = s.PatternProperties[pat]
		case "additionalProperties":
			field = join(field, "*")
			s = s.AdditionalProperties
		case "items":
			field += "[]"
			s = s.Items
		case "prefixItems", "allOf", "anyOf", "oneOf":
			n, ok := arg()
			idx, err := strconv.Atoi(n)
			if !ok || err != nil {
				return field, nil
			}
			list := map[string][]*jsonschema.Schema{"prefixItems": s.PrefixItems, "allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf}[seg]
			if idx < 0 || idx >= len(list) {
				return field, nil
			}
			if seg == "prefixItems" {
				field += "[" + n + "]"
			}
			s = list[idx]
		case "$defs", "definitions":
			name, ok := arg()
			if !ok {
				return field, nil
			}
			// A definition is reached through a $ref from somewhere the
			// path does not tell: the field path restarts there.
			field = ""
			if seg == "$defs" {
				s = s.Defs[name]
			} else {
				s = s.Definitions[name]
			}
		case "then":
			s = s.Then
		case "else":
			s = s.Else
		case "if":
			s = s.If
		case "not":
			s = s.Not
		case "additionalItems":
			field += "[]"
			s = s.AdditionalItems
		default:
			return field, nil
		}
	}
	return field, s
}

// property returns the schema of property name of object schema s,
// following a local $ref.
func property(root, s *jsonschema.Schema, name string) *jsonschema.Schema {
	s = deref(root, s)
	if s == nil {
		return nil
	}
	return s.Properties[name]
}

// deref follows a local "#/$defs/x" or "#/definitions/x" reference of s.
func deref(root, s *jsonschema.Schema) *jsonschema.Schema {
	for range 8 { // a bounded number of hops: reference cycles end here
		if s == nil || s.Ref == "" {
			return s
		}
		switch {
		case strings.HasPrefix(s.Ref, "#/$defs/"):
			s = root.Defs[strings.TrimPrefix(s.Ref, "#/$defs/")]
		case strings.HasPrefix(s.Ref, "#/definitions/"):
			s = root.Definitions[strings.TrimPrefix(s.Ref, "#/definitions/")]
		default:
			return s
		}
	}
	return s
}

// expectOf renders what a schema requires as compact JSON of its
// constraint keywords (documentation and nested property schemas left
// out), e.g. {"type":"integer","minimum":1}. A nil schema expects nothing
// in particular: "{}" would tell the model nothing, so the text says the
// schema.
func expectOf(root, s *jsonschema.Schema) string {
	s = deref(root, s)
	if s == nil {
		return "see the schema of the tool"
	}
	r := constraints(s)
	if s.Items != nil {
		r.Items = constraints(deref(root, s.Items))
	}
	b, err := json.Marshal(r)
	if err != nil || string(b) == "{}" || string(b) == "true" {
		return "see the schema of the tool"
	}
	return clip(string(b))
}

// constraints returns a copy of s with only its own constraint keywords,
// the alternatives of anyOf, oneOf, allOf and not reduced one level.
func constraints(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	return &jsonschema.Schema{
		Type: s.Type, Types: s.Types, Enum: s.Enum, Const: s.Const,
		MultipleOf: s.MultipleOf, Minimum: s.Minimum, Maximum: s.Maximum,
		ExclusiveMinimum: s.ExclusiveMinimum, ExclusiveMaximum: s.ExclusiveMaximum,
		MinLength: s.MinLength, MaxLength: s.MaxLength, Pattern: s.Pattern, Format: s.Format,
		MinItems: s.MinItems, MaxItems: s.MaxItems, UniqueItems: s.UniqueItems,
		MinProperties: s.MinProperties, MaxProperties: s.MaxProperties, Required: s.Required,
		AnyOf: reduceAll(s.AnyOf), OneOf: reduceAll(s.OneOf), AllOf: reduceAll(s.AllOf),
		Not: shallow(s.Not),
	}
}

// reduceAll reduces each schema of a combinator to its own keywords.
func reduceAll(ss []*jsonschema.Schema) []*jsonschema.Schema {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*jsonschema.Schema, len(ss))
	for i, s := range ss {
		out[i] = shallow(s)
	}
	return out
}

// shallow is constraints without nested combinators.
func shallow(s *jsonschema.Schema) *jsonschema.Schema {
	c := constraints(s)
	if c != nil {
		c.AnyOf, c.OneOf, c.AllOf, c.Not = nil, nil, nil, nil
	}
	return c
}

// expectNames renders the argument names object schema s allows, as the
// JSON Schema keyword that says so: {"propertyNames":{"enum":[...]}}.
func expectNames(root, s *jsonschema.Schema) string {
	s = deref(root, s)
	names := []any{}
	if s != nil {
		for _, n := range slices.Sorted(maps.Keys(s.Properties)) {
			names = append(names, n)
		}
	}
	b, err := json.Marshal(&jsonschema.Schema{PropertyNames: &jsonschema.Schema{Enum: names}})
	if err != nil {
		return "see the schema of the tool"
	}
	return clip(string(b))
}

// quotedList parses the validator's %q rendering of a []string:
// ["a" "b"].
func quotedList(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "[")
	var out []string
	for {
		s = strings.TrimLeft(s, " ")
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return out
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return out
		}
		out = append(out, v)
		s = s[len(q):]
	}
}

// join appends name to a dotted field path.
func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// clip bounds text quoted to the model to maxDetail bytes.
func clip(s string) string { return clipTo(s, maxDetail) }

// clipTo cuts s to at most n bytes at a rune boundary, marking the cut
// with an ellipsis.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a non-object value"
}

// isBlank reports whether b holds only JSON whitespace.
func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}
