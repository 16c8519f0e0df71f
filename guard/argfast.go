package guard

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// The arg policy's fast path. Most tool schemas are objects of typed
// properties, required names and no additional properties (what
// jsonschema.For infers from a Go struct); most arguments a model sends
// pass them. For such schemas the guard compiles a [fastSchema] that reads
// the raw argument bytes in place and answers "surely valid" without
// decoding them into Go values. It is only a shortcut: when it cannot be
// sure (a keyword it does not know, an escaped key, a number at the edge of
// float64, a repeated key, any violation), the guard takes the full path —
// decode, validate with github.com/google/jsonschema-go — which also writes
// the precise refusal. So the fast path never changes a verdict; a
// differential fuzz test (FuzzArgFastSound) holds it to that: whatever it
// accepts, decoding and jsonschema-go accept.

// JSON types as bits.
const (
	jsNull uint8 = 1 << iota
	jsBoolean
	jsObject
	jsArray
	jsNumber
	jsString
	jsInteger
)

var jsTypeBits = map[string]uint8{
	"null": jsNull, "boolean": jsBoolean, "object": jsObject, "array": jsArray,
	"number": jsNumber | jsInteger, "string": jsString, "integer": jsInteger,
}

// fastSchema is a schema of the supported subset, compiled.
type fastSchema struct {
	types    uint8 // allowed types; 0 means any
	props    map[string]int
	propSch  []*fastSchema // nil entries accept anything
	required uint64        // bits of props that must be present
	noAddl   bool          // additionalProperties: false
	addl     *fastSchema   // schema of additional properties (nil: any)
	items    *fastSchema   // schema of array items (nil: any)
	enum     []string      // allowed strings (enum of strings only)
}

// fastKeywords are the fields of jsonschema.Schema the fast path
// understands (the keywords it checks, and pure annotations). A schema with
// any other field set is not compiled.
var fastKeywords = map[string]bool{
	"Schema": true, "Comment": true, "Title": true, "Description": true, "Default": true,
	"Deprecated": true, "ReadOnly": true, "WriteOnly": true, "Examples": true, "PropertyOrder": true,
	"Type": true, "Types": true, "Enum": true, "Properties": true, "Required": true,
	"AdditionalProperties": true, "Items": true,
}

// falseSchema reports whether s is the schema false, which jsonschema-go
// holds as {"not":{}}.
func falseSchema(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(c).IsZero()
}

// compileFast compiles s, or returns false when s uses anything outside the
// subset.
func compileFast(s *jsonschema.Schema, depth int) (*fastSchema, bool) {
	if s == nil {
		return nil, true
	}
	if depth > 16 {
		return nil, false
	}
	v := reflect.ValueOf(*s)
	for i := range v.NumField() {
		if !v.Field(i).IsZero() && !fastKeywords[v.Type().Field(i).Name] {
			return nil, false
		}
	}
	f := &fastSchema{}
	types := s.Types
	if s.Type != "" {
		types = append(types, s.Type)
	}
	for _, t := range types {
		bits, ok := jsTypeBits[t]
		if !ok {
			return nil, false
		}
		f.types |= bits
	}
	for _, e := range s.Enum {
		str, ok := e.(string)
		if !ok {
			return nil, false
		}
		f.enum = append(f.enum, str)
	}
	if s.Enum != nil && len(f.enum) == 0 {
		return nil, false // an empty enum accepts nothing: let the validator say so
	}
	if len(s.Properties)+len(s.Required) > 0 {
		f.props = make(map[string]int, len(s.Properties))
		for name, ps := range s.Properties {
			c, ok := compileFast(ps, depth+1)
			if !ok {
				return nil, false
			}
			f.props[name] = len(f.propSch)
			f.propSch = append(f.propSch, c)
		}
		for _, name := range s.Required {
			i, ok := f.props[name]
			if !ok {
				if s.AdditionalProperties != nil {
					// A required name that is no property is validated by
					// additionalProperties (refused outright when it is
					// false): leave that to the validator.
					return nil, false
				}
				i = len(f.propSch)
				f.props[name] = i
				f.propSch = append(f.propSch, nil)
			}
			if i >= 64 {
				return nil, false
			}
			f.required |= 1 << i
		}
		if len(f.propSch) > 64 {
			return nil, false
		}
	}
	if a := s.AdditionalProperties; a != nil {
		if falseSchema(a) {
			f.noAddl = true
		} else {
			c, ok := compileFast(a, depth+1)
			if !ok {
				return nil, false
			}
			f.addl = c
		}
	}
	if s.Items != nil {
		c, ok := compileFast(s.Items, depth+1)
		if !ok {
			return nil, false
		}
		f.items = c
	}
	return f, true
}

// fastSchemas caches the compiled schemas of resolved schemas.
type fastSchemas struct {
	mu sync.RWMutex
	m  map[*jsonschema.Resolved]*fastSchema // nil value: not compilable
}

// of returns the compiled form of rs's schema s, or nil.
func (c *fastSchemas) of(rs *jsonschema.Resolved, s *jsonschema.Schema) *fastSchema {
	c.mu.RLock()
	f, ok := c.m[rs]
	c.mu.RUnlock()
	if ok {
		return f
	}
	f, compiled := compileFast(s, 0)
	if !compiled || f == nil {
		f = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = make(map[*jsonschema.Resolved]*fastSchema)
	}
	c.m[rs] = f
	return f
}

// validArgs reports whether the raw arguments are surely a JSON object that
// f accepts, as the full path would decode and validate them. Blank
// arguments are the empty object.
func (f *fastSchema) validArgs(raw []byte) bool {
	raw = bytes.Trim(raw, " \t\r\n")
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return false
	}
	r := fastReader{b: raw}
	return r.value(f) && r.i == len(raw)
}

// fastReader reads a document json.Valid accepted.
type fastReader struct {
	b []byte
	i int
}

func (r *fastReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\r', '\n':
			r.i++
		default:
			return
		}
	}
}

// str reads the string at r.i and returns its raw contents and whether it
// has no escapes.
func (r *fastReader) str() ([]byte, bool) {
	start := r.i + 1
	r.i++
	plain := true
	for r.b[r.i] != '"' {
		if r.b[r.i] == '\\' {
			plain = false
			r.i++
		}
		r.i++
	}
	r.i++
	return r.b[start : r.i-1], plain
}

// value checks the value at r.i against f (nil accepts anything) and moves
// past it.
func (r *fastReader) value(f *fastSchema) bool {
	var got uint8
	switch c := r.b[r.i]; {
	case c == '{':
		got = jsObject
	case c == '[':
		got = jsArray
	case c == '"':
		got = jsString
	case c == 't' || c == 'f':
		got = jsBoolean
	case c == 'n':
		got = jsNull
	default:
		got = r.number()
		if got == 0 {
			return false // beyond float64: decoding refuses it
		}
	}
	if f != nil && (f.types != 0 && f.types&got == 0 || f.enum != nil && got != jsString) {
		return false // a string enum accepts strings only
	}
	switch got {
	case jsObject:
		return r.object(f)
	case jsArray:
		var items *fastSchema
		if f != nil {
			items = f.items
		}
		r.i++
		r.space()
		if r.b[r.i] == ']' {
			r.i++
			return true
		}
		for {
			r.space()
			if !r.value(items) {
				return false
			}
			r.space()
			if r.b[r.i] == ']' {
				r.i++
				return true
			}
			r.i++ // ','
		}
	case jsString:
		s, plain := r.str()
		if f == nil || f.enum == nil {
			return true
		}
		if !plain {
			return false // the decoded string is needed
		}
		for _, e := range f.enum {
			if string(s) == e {
				return true
			}
		}
		return false
	case jsBoolean:
		if r.b[r.i] == 't' {
			r.i += len("true")
		} else {
			r.i += len("false")
		}
	case jsNull:
		r.i += len("null")
	}
	return true // a boolean, null or a number (read by r.number)
}

// number reads the number at r.i and returns jsInteger or jsNumber as
// jsonschema-go types its float64, or 0 when decoding it into a float64
// fails.
func (r *fastReader) number() uint8 {
	start := r.i
	digitsOnly := true
	for r.i < len(r.b) {
		c := r.b[r.i]
		if c >= '0' && c <= '9' || c == '-' {
			r.i++
			continue
		}
		if c == '.' || c == 'e' || c == 'E' || c == '+' {
			digitsOnly = false
			r.i++
			continue
		}
		break
	}
	tok := r.b[start:r.i]
	if digitsOnly && len(tok) <= 15 {
		return jsInteger
	}
	x, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0
	}
	if _, frac := math.Modf(x); frac == 0 {
		return jsInteger
	}
	return jsNumber
}

// object checks the object at r.i.
func (r *fastReader) object(f *fastSchema) bool {
	r.i++
	r.space()
	var seen uint64
	if r.b[r.i] != '}' {
		for {
			r.space()
			key, plain := r.str()
			if !plain {
				return false // the decoded key is needed
			}
			r.space()
			r.i++ // ':'
			r.space()
			var vs *fastSchema
			switch idx, known := f.prop(key); {
			case known:
				if seen&(1<<idx) != 0 {
					return false // a repeated key: decoding keeps the last one
				}
				seen |= 1 << idx
				vs = f.propSch[idx]
			case f != nil && f.noAddl:
				return false
			case f != nil:
				vs = f.addl
			}
			if !r.value(vs) {
				return false
			}
			r.space()
			if r.b[r.i] == '}' {
				break
			}
			r.i++ // ','
		}
	}
	r.i++
	return f == nil || seen&f.required == f.required
}

// prop returns the index of property key of f.
func (f *fastSchema) prop(key []byte) (int, bool) {
	if f == nil || f.props == nil {
		return 0, false
	}
	i, ok := f.props[string(key)]
	return i, ok
}
