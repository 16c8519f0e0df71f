package react

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/internal/jsonvalid"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// OutputsOf returns the output contract of the struct type T, for
// [Node].Outputs: one [Output] per property of the JSON Schema that
// github.com/google/jsonschema-go infers for T, exactly as [tool.New]
// infers a tool's input schema — a field's key is its encoding/json name,
// it is Required unless tagged omitempty or omitzero, its Description is
// its `jsonschema:"…"` tag — with the property's schema as the output's
// Schema, so that builtin_output_set refuses a value of the wrong type
// (REJECTED OUTPUT_VALUE_INVALID) before it checks the value's source,
// which it checks as for any output. A field's `accepts:"user,tool_result"`
// tag sets the source types it accepts (the names of [SourceType]); none
// means the default (a tool result or the user's words). A field's
// `tool:"…"` and `field:"…"` tags set the output's [Output].Tool and
// [Output].Field: which tool's result, and which field of it, a tool_result
// value must be (the run's goal is met through a tool_result output only
// when one of them is set). Read the outputs back with [OutputsAs].
//
//	type Refund struct {
//		OrderID string  `json:"order_id" jsonschema:"the refunded order" accepts:"user,tool_result"`
//		Amount  float64 `json:"amount" accepts:"tool_result" tool:"lookup" field:"amount"`
//		Note    string  `json:"note,omitempty" accepts:"model"`
//	}
//	node := react.Node{Outputs: react.OutputsOf[Refund](), …}
//	…
//	refund, err := react.OutputsAs[Refund](res)
//
// OutputsOf panics when no schema can be inferred for T, when T is not a
// struct type, or when an accepts tag names no source type: programming
// errors, as tool.New panics for a tool's arguments.
func OutputsOf[T any]() []Output {
	outs, err := outputsOf(reflect.TypeFor[T]())
	if err != nil {
		panic(fmt.Sprintf("react.OutputsOf[%s]: %v", reflect.TypeFor[T](), err))
	}
	return outs
}

func outputsOf(rt reflect.Type) ([]Output, error) {
	st := rt
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a struct type: outputs are the fields of a struct", rt)
	}
	schema, err := jsonschema.ForType(st, nil)
	if err != nil {
		return nil, err
	}
	tags, err := outputTags(st)
	if err != nil {
		return nil, err
	}
	keys := slices.Clone(schema.PropertyOrder)
	for k := range schema.Properties {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	outs := make([]Output, 0, len(keys))
	for _, k := range keys {
		p := schema.Properties[k]
		t := tags[k]
		o := Output{Key: k, Description: p.Description, Required: slices.Contains(schema.Required, k), Accepts: t.accepts, Field: t.field, Tool: t.tool, Schema: p}
		outs = append(outs, o)
	}
	return outs, nil
}

// outputTag is what a struct field's tags say of its output.
type outputTag struct {
	accepts     []SourceType
	tool, field string
}

// outputTags reads the accepts, tool and field tags of st's fields, by
// JSON name.
func outputTags(st reflect.Type) (map[string]outputTag, error) {
	out := map[string]outputTag{}
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if j, _, _ := strings.Cut(f.Tag.Get("json"), ","); j != "" {
			name = j
		}
		t := outputTag{tool: f.Tag.Get("tool"), field: f.Tag.Get("field")}
		if tag, ok := f.Tag.Lookup("accepts"); ok {
			for s := range strings.SplitSeq(tag, ",") {
				src, err := ParseSourceType(strings.TrimSpace(s))
				if err != nil {
					return nil, fmt.Errorf("field %s: accepts tag: %w", f.Name, err)
				}
				t.accepts = append(t.accepts, src)
			}
		}
		out[name] = t
	}
	return out, nil
}

// ErrOutputMissing is wrapped by the [OutputError] of [OutputsAs] for a
// required field whose output the run did not set.
var ErrOutputMissing = errors.New("react: required output not set")

// OutputError is the error of [OutputsAs]: which output (its key, the
// field's JSON name) did not decode, and why.
type OutputError struct {
	Key string
	Err error
}

func (e *OutputError) Error() string { return fmt.Sprintf("react: output %q: %v", e.Key, e.Err) }

// Unwrap returns the cause.
func (e *OutputError) Unwrap() error { return e.Err }

// OutputsAs decodes the outputs of res into a T, the struct type the node's
// outputs were declared from ([OutputsOf]). Every value was checked when it
// was set, against its schema and against its source; OutputsAs decodes
// them as encoding/json does, field by field, and returns an
// [*OutputError] naming the first output that does not decode into its
// field (a node declared from another type, say), that T does not have,
// or that T requires and the run did not set ([ErrOutputMissing]; a run
// that is not Finished may not have set every required output).
func OutputsAs[T any](res Result) (T, error) {
	var v T
	rt := reflect.TypeFor[T]()
	st := rt
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	schema, err := jsonschema.ForType(st, nil)
	if err != nil {
		return v, fmt.Errorf("react: OutputsAs[%s]: %w", rt, err)
	}
	for _, k := range schema.Required {
		if _, ok := res.Outputs[k]; !ok {
			return v, &OutputError{Key: k, Err: ErrOutputMissing}
		}
	}
	keys := make([]string, 0, len(res.Outputs))
	for k := range res.Outputs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := schema.Properties[k]; !ok {
			return v, &OutputError{Key: k, Err: fmt.Errorf("%s has no field for it", st)}
		}
		one := []byte(`{` + jsonString(k) + `:` + string(res.Outputs[k].Value) + `}`)
		dec := json.NewDecoder(bytes.NewReader(one))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				err = fmt.Errorf("cannot decode %s into %s", clipValue(res.Outputs[k].Value), te.Type)
			}
			return v, &OutputError{Key: k, Err: err}
		}
	}
	return v, nil
}

// jsonString returns s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// clipValue returns a JSON value for an error message, cut past 64 bytes.
func clipValue(v json.RawMessage) string {
	if len(v) > 64 {
		return string(v[:64]) + "…"
	}
	return string(v)
}

// typedOutput is a declared output with a schema, resolved.
type typedOutput struct {
	resolved *jsonschema.Resolved
	typ      string // the schema's type, for the model
}

// resolveOutputs resolves the schemas of node's typed outputs, once per
// schema value.
func (l *Loop) resolveOutputs(node Node) (map[string]typedOutput, error) {
	var out map[string]typedOutput
	for _, o := range node.Outputs {
		if o.Schema == nil {
			continue
		}
		var rs *jsonschema.Resolved
		if v, ok := l.outSchemas.Load(o.Schema); ok {
			rs = v.(*jsonschema.Resolved)
		} else {
			var err error
			if rs, err = o.Schema.Resolve(nil); err != nil {
				return nil, fmt.Errorf("%w %q: schema of output %s: %w", ErrInvalidNode, node.Name, o.Key, err)
			}
			l.outSchemas.Store(o.Schema, rs)
		}
		if out == nil {
			out = make(map[string]typedOutput)
		}
		out[o.Key] = typedOutput{resolved: rs, typ: schemaType(o.Schema)}
	}
	return out, nil
}

// schemaType names the JSON type(s) a schema admits, for the model: null
// is left out beside another type (a Go slice or pointer may be null),
// and an array names its items' type.
func schemaType(s *jsonschema.Schema) string {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) > 1 {
		types = slices.DeleteFunc(slices.Clone(types), func(t string) bool { return t == "null" })
	}
	switch {
	case len(types) == 0:
		return "any"
	case len(types) == 1 && types[0] == "array" && s.Items != nil && schemaType(s.Items) != "any":
		return "array of " + schemaType(s.Items)
	}
	return strings.Join(types, " or ")
}

// outputList describes the node's outputs for the system prompt: each
// key, its type when it has a schema, whether it is required, and its
// description.
func (r *run) outputList() string {
	items := make([]string, 0, len(r.node.Outputs))
	for _, o := range r.node.Outputs {
		var b strings.Builder
		b.WriteString(o.Key)
		var attrs []string
		if t, ok := r.typed[o.Key]; ok {
			attrs = append(attrs, t.typ)
		}
		if o.Required {
			attrs = append(attrs, "required")
		}
		if len(attrs) > 0 {
			b.WriteString(" (" + strings.Join(attrs, ", ") + ")")
		}
		if d := strings.TrimSpace(o.Description); d != "" {
			b.WriteString(": " + d)
		}
		items = append(items, b.String())
	}
	return strings.Join(items, "; ")
}

// checkType refuses a value of a typed output that does not match its
// schema: REJECTED OUTPUT_VALUE_INVALID.
func (r *run) checkType(key, value string) *tool.Rejection {
	t, ok := r.typed[key]
	if !ok {
		return nil
	}
	var v any
	detail := ""
	if !jsonvalid.Valid([]byte(value)) {
		detail = "not JSON"
	} else if err := json.Unmarshal([]byte(value), &v); err != nil {
		detail = err.Error()
	} else if err := t.resolved.Validate(v); err != nil {
		detail = err.Error()
	} else if n := nonInteger(value, t.resolved.Schema()); n != "" {
		detail = n + " is not written as an integer in range"
	}
	if detail == "" {
		return nil
	}
	return tool.Reject(errcode.OutputValueInvalid,
		r.cat.Reason(errcode.OutputValueInvalid, "key", key, "type", t.typ, "detail", tool.ClipDetail(detail)),
		r.cat.Text(prompt.NextOutputType, "key", key, "type", t.typ))
}

// nonInteger returns the first number of the JSON value that schema s
// wants as an integer and that is not written as one that fits 64 bits
// (1.0, 1e3, 2^64): JSON Schema admits them as integers, Go's decoder
// does not, and an output's value must decode into its field. "" when
// there is none.
func nonInteger(value string, s *jsonschema.Schema) string {
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return ""
	}
	return nonIntegerIn(v, s)
}

func nonIntegerIn(v any, s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	switch x := v.(type) {
	case json.Number:
		if !admits(s, "integer") || admits(s, "number") {
			return ""
		}
		var err error
		if s.Minimum != nil && *s.Minimum >= 0 {
			_, err = strconv.ParseUint(x.String(), 10, 64)
		} else {
			_, err = strconv.ParseInt(x.String(), 10, 64)
		}
		if err != nil {
			return x.String()
		}
	case []any:
		for _, e := range x {
			if n := nonIntegerIn(e, s.Items); n != "" {
				return n
			}
		}
	case map[string]any:
		for k, e := range x {
			ps := s.Properties[k]
			if ps == nil {
				ps = s.AdditionalProperties
			}
			if n := nonIntegerIn(e, ps); n != "" {
				return n
			}
		}
	}
	return ""
}

// admits reports whether s names the JSON type t.
func admits(s *jsonschema.Schema, t string) bool {
	return s.Type == t || slices.Contains(s.Types, t)
}
