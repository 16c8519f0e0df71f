package fastschema

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFrom builds a schema of the fast subset (and sometimes beyond it)
// from fuzz bytes.
func schemaFrom(b []byte, depth int) *jsonschema.Schema {
	next := func() byte {
		if len(b) == 0 {
			return 0
		}
		c := b[0]
		b = b[1:]
		return c
	}
	s := &jsonschema.Schema{}
	types := []string{"", "object", "string", "integer", "number", "boolean", "array", "null"}
	if c := next(); c%9 == 8 {
		s.Types = []string{"null", types[1+int(c/9)%7]}
	} else {
		s.Type = types[int(c)%len(types)]
	}
	flags := next()
	if flags&1 != 0 && depth < 3 {
		s.Properties = map[string]*jsonschema.Schema{}
		for _, name := range []string{"a", "b", "é"}[:1+int(next())%3] {
			s.Properties[name] = schemaFrom(b, depth+1)
			b = b[min(len(b), 3):]
		}
	}
	if flags&2 != 0 {
		s.Required = []string{"a", "b", "c"}[:int(next())%4]
	}
	if flags&4 != 0 {
		s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	} else if flags&8 != 0 && depth < 3 {
		s.AdditionalProperties = schemaFrom(b, depth+1)
	}
	if flags&16 != 0 && depth < 3 {
		s.Items = schemaFrom(b, depth+1)
	}
	if flags&32 != 0 {
		s.Enum = []any{"x", "y\"", "é"}[:1+int(next())%3]
	}
	if flags&64 != 0 {
		min := float64(next() % 4)
		s.MinLength = ptrInt(int(min)) // outside the subset: never compiled
	}
	if flags&128 != 0 {
		bound := func() *float64 {
			c := next()
			if c%3 == 0 {
				return nil
			}
			x := float64(int8(c)) / 4
			return &x
		}
		s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum = bound(), bound(), bound(), bound()
	}
	return s
}

func ptrInt(n int) *int { return &n }

// FuzzSound: whatever the fast path accepts, the full path — decode
// the arguments, require an object, validate with jsonschema-go — accepts
// too. (The converse is not required: the fast path may defer.)
func FuzzSound(f *testing.F) {
	for _, seed := range []struct{ schema, doc string }{
		{"\x01\x03\x02\x02", `{"a":"x","b":1}`},
		{"\x01\x07\x01", `{"a":1,"a":2}`},
		{"\x01\x13\x03", `{"a":[1,2.5,1e400]}`},
		{"\x01\x21", `{"a":"y\""}`},
		{"\x01\x0b\x02", `{"zz":{"q":null}}`},
		{"\x00", ` `},
		{"\x01\x01\x02", `{"\u0061":"x"}`},
		{"\x03", `{"a":12345678901234567890}`},
		{"\x01\x81\x02\x03\x08\x04\x05", `{"a":1,"b":0.5}`},
	} {
		f.Add([]byte(seed.schema), []byte(seed.doc))
	}
	f.Fuzz(func(t *testing.T, sb, doc []byte) {
		root := schemaFrom(sb, 0)
		fs, ok := compile(root, 0)
		if !ok || fs == nil || !fs.Valid(doc) {
			return
		}
		rs, err := root.Resolve(nil)
		if err != nil {
			t.Fatalf("the fast path compiled a schema jsonschema-go cannot resolve: %v", err)
		}
		raw := bytes.TrimSpace(doc)
		if len(raw) == 0 {
			raw = []byte("{}")
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("fast path accepted %q, which does not decode: %v", doc, err)
		}
		if _, isObject := v.(map[string]any); !isObject {
			t.Fatalf("fast path accepted %q, which is not an object", doc)
		}
		if err := rs.Validate(v); err != nil {
			sj, _ := json.Marshal(root)
			t.Fatalf("fast path accepted %q under %s; jsonschema-go refuses it: %v", doc, sj, err)
		}
	})
}

// The fast path takes what it exists for: the schemas jsonschema.For infers
// from Go structs, with the arguments models send most.
func TestCoversInferredSchemas(t *testing.T) {
	type inner struct {
		X int `json:"x"`
	}
	type in struct {
		Q string         `json:"q"`
		N int            `json:"n,omitempty"`
		P *string        `json:"p,omitempty"`
		L []string       `json:"l,omitempty"`
		F float64        `json:"f"`
		B bool           `json:"b"`
		M map[string]int `json:"m"`
		S inner          `json:"s"`
	}
	s, err := jsonschema.For[in](nil)
	if err != nil {
		t.Fatal(err)
	}
	fs, ok := compile(s, 0)
	if !ok || fs == nil {
		t.Fatal("the schema of a plain Go struct is not compiled")
	}
	for _, tt := range []struct {
		doc  string
		want bool
		why  string
	}{
		{`{"q":"blog","f":1.5,"b":true,"m":{"a":1},"s":{"x":2}}`, true, "every kind of property"},
		{` {"q":"日本","n":-3,"p":null,"l":["a","b"],"f":2,"b":false,"m":{},"s":{"x":0}} `, true, "optional ones, null pointer, unicode"},
		{`{"q":"blog","f":1,"b":true,"m":{},"s":{}}`, false, "a nested required property is missing"},
		{`{"q":"blog","f":1,"b":true,"m":{},"s":{"x":1},"extra":1}`, false, "an additional property"},
		{`{"q":1,"f":1,"b":true,"m":{},"s":{"x":1}}`, false, "a wrong type"},
		{`{"q":"a","q":"b","f":1,"b":true,"m":{},"s":{"x":1}}`, false, "a repeated key defers"},
		{`{"q":"a","f":1e400,"b":true,"m":{},"s":{"x":1}}`, false, "a number beyond float64 defers"},
		{`{"q":"a\u0041","f":1,"b":true,"m":{},"s":{"x":1.5}}`, false, "a fraction for an integer"},
		{`[1]`, false, "not an object"},
		{`{"q":`, false, "not JSON"},
	} {
		if got := fs.Valid([]byte(tt.doc)); got != tt.want {
			t.Errorf("Valid(%s) = %v; want %v (%s)", tt.doc, got, tt.want, tt.why)
		}
	}
	for _, outside := range []*jsonschema.Schema{
		{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string", MinLength: ptrInt(1)}}},
		{Type: "object", AnyOf: []*jsonschema.Schema{{Type: "object"}}},
		{Type: "object", Enum: []any{1.0}},
		{Type: "thing"},
	} {
		if _, ok := compile(outside, 0); ok {
			b, _ := json.Marshal(outside)
			t.Errorf("compile(%s) = ok; want it refused (outside the subset)", b)
		}
	}
}

// Cache.Of gives each resolved schema its own compiled form however
// lookups of different schemas interleave (it keeps the last one asked
// for), nil for a schema outside the subset, and stays right past
// MaxCached, where it forgets what it held.
func TestCacheInterleaved(t *testing.T) {
	resolve := func(s *jsonschema.Schema) *jsonschema.Resolved {
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	str := resolve(&jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"q": {Type: "string"}}, Required: []string{"q"}})
	num := resolve(&jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}, Required: []string{"n"}})
	odd := resolve(&jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"s": {Type: "string", Pattern: "^a"}}})
	var c Cache
	for round := range 3 {
		for _, rs := range []*jsonschema.Resolved{str, str, num, str, odd, odd, num} {
			f := c.Of(rs)
			switch rs {
			case str:
				if f == nil || !f.Valid([]byte(`{"q":"x"}`)) || f.Valid([]byte(`{"n":1}`)) {
					t.Fatalf("round %d: the string schema's compiled form is wrong", round)
				}
			case num:
				if f == nil || !f.Valid([]byte(`{"n":1}`)) || f.Valid([]byte(`{"q":"x"}`)) {
					t.Fatalf("round %d: the integer schema's compiled form is wrong", round)
				}
			case odd:
				if f != nil {
					t.Fatalf("round %d: a pattern is outside the subset, got a compiled form", round)
				}
			}
		}
		if round == 1 {
			for range MaxCached { // fill the cache past its bound
				c.Of(resolve(&jsonschema.Schema{Type: "object"}))
			}
		}
	}
}
