// Package fastschema answers "surely valid" for JSON arguments under the
// JSON Schemas most tools have, reading the raw bytes in place, without
// decoding them into Go values.
//
// Most tool schemas are objects of typed properties, required names and
// no additional properties (what jsonschema.For infers from a Go struct),
// and most arguments a model sends pass them. [Compile] turns such a schema
// into a [Schema] whose [Schema.Valid] says true only when decoding the
// arguments with encoding/json and validating them with
// github.com/google/jsonschema-go would accept them. It is a shortcut, not
// a validator: when it cannot be sure (a keyword it does not know, an
// escaped key, a number at the edge of float64, a repeated key, any
// violation) it says false, and the caller takes its full path, which
// also writes the precise refusal. So it never changes a verdict; the
// differential fuzz test FuzzSound holds it to that.
package fastschema

import (
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/internal/jsonvalid"
)

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

// Schema is a schema of the supported subset, compiled. It is immutable
// and safe for concurrent use; a nil *Schema accepts any value where it
// stands for a property or an item.
type Schema struct {
	types    uint8 // allowed types; 0 means any
	props    map[string]int
	propSch  []*Schema // nil entries accept anything
	required uint64    // bits of props that must be present
	noAddl   bool      // additionalProperties: false
	addl     *Schema   // schema of additional properties (nil: any)
	items    *Schema   // schema of array items (nil: any)
	enum     []string  // allowed strings (enum of strings only)
	// bounds of a number (nil: none), compared as jsonschema-go compares
	// them with the decoded float64
	min, max, exMin, exMax *float64
}

// fastKeywords are the fields of jsonschema.Schema the fast path
// understands (the keywords it checks, and pure annotations). A schema with
// any other field set is not compiled.
var fastKeywords = map[string]bool{
	"Schema": true, "Comment": true, "Title": true, "Description": true, "Default": true,
	"Deprecated": true, "ReadOnly": true, "WriteOnly": true, "Examples": true, "PropertyOrder": true,
	"Type": true, "Types": true, "Enum": true, "Properties": true, "Required": true,
	"AdditionalProperties": true, "Items": true,
	"Minimum": true, "Maximum": true, "ExclusiveMinimum": true, "ExclusiveMaximum": true,
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

// Compile compiles s, or returns false when s uses anything outside the
// subset.
func Compile(s *jsonschema.Schema) (*Schema, bool) {
	f, ok := compile(s, 0)
	if !ok || f == nil {
		return nil, false
	}
	return f, true
}

// compile compiles s at depth, or returns false when s uses anything
// outside the subset.
func compile(s *jsonschema.Schema, depth int) (*Schema, bool) {
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
	f := &Schema{}
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
	f.min, f.max, f.exMin, f.exMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	if len(s.Properties)+len(s.Required) > 0 {
		f.props = make(map[string]int, len(s.Properties))
		for name, ps := range s.Properties {
			c, ok := compile(ps, depth+1)
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
			c, ok := compile(a, depth+1)
			if !ok {
				return nil, false
			}
			f.addl = c
		}
	}
	if s.Items != nil {
		c, ok := compile(s.Items, depth+1)
		if !ok {
			return nil, false
		}
		f.items = c
	}
	return f, true
}

// MaxCached bounds the schemas a [Cache] holds; past it, it forgets them
// all (tools made per session, as adapters do, must not pin memory
// forever).
const MaxCached = 1024

// Cache remembers the compiled form of resolved schemas. Its zero value is
// ready to use; it is safe for concurrent use.
type Cache struct {
	mu   sync.RWMutex
	m    map[*jsonschema.Resolved]*cached
	last atomic.Pointer[cached] // the last schema asked for: calls repeat a tool
}

// cached is the compiled form of one resolved schema (f nil: not
// compilable).
type cached struct {
	rs *jsonschema.Resolved
	f  *Schema
}

// Of returns the compiled form of rs's schema, or nil when it is outside
// the subset.
func (c *Cache) Of(rs *jsonschema.Resolved) *Schema {
	if e := c.last.Load(); e != nil && e.rs == rs {
		return e.f
	}
	c.mu.RLock()
	e, ok := c.m[rs]
	c.mu.RUnlock()
	if ok {
		c.last.Store(e)
		return e.f
	}
	f, _ := Compile(rs.Schema())
	e = &cached{rs: rs, f: f}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= MaxCached {
		c.m = make(map[*jsonschema.Resolved]*cached)
	}
	c.m[rs] = e
	c.last.Store(e)
	return f
}

// Valid reports whether raw is surely a JSON object that f accepts, as
// decoding it with encoding/json and validating the result with
// jsonschema-go would. Blank arguments (empty or white space) are the
// empty object, as tools receive them.
func (f *Schema) Valid(raw []byte) bool {
	raw = jsonvalid.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if raw[0] != '{' || !jsonvalid.Valid(raw) {
		return false
	}
	r := fastReader{b: raw}
	return r.value(f) && r.i == len(raw)
}

// fastReader reads a document jsonvalid.Valid (so json.Valid) accepted.
type fastReader struct {
	b []byte
	i int
}

func (r *fastReader) space() { r.i = jsonvalid.SkipSpace(r.b, r.i) }

// str reads the string at r.i and returns its raw contents and whether it
// has no escapes.
func (r *fastReader) str() ([]byte, bool) {
	start := r.i + 1
	end, escaped := jsonvalid.StringEnd(r.b, r.i)
	r.i = end
	return r.b[start : end-1], !escaped
}

// value checks the value at r.i against f (nil accepts anything) and moves
// past it.
func (r *fastReader) value(f *Schema) bool {
	var got uint8
	switch r.b[r.i] {
	case '{':
		got = jsObject
	case '[':
		got = jsArray
	case '"':
		got = jsString
	case 't', 'f':
		got = jsBoolean
	case 'n':
		got = jsNull
	default:
		var x float64
		got, x = r.number(f != nil && f.bounded())
		if got == 0 {
			return false // beyond float64: decoding refuses it
		}
		if f != nil && !f.within(x) {
			return false
		}
	}
	if f != nil && (f.types != 0 && f.types&got == 0 || f.enum != nil && got != jsString) {
		return false // a string enum accepts strings only
	}
	switch got {
	case jsObject:
		return r.object(f)
	case jsArray:
		var items *Schema
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

// bounded reports whether f bounds numbers.
func (f *Schema) bounded() bool {
	return f.min != nil || f.max != nil || f.exMin != nil || f.exMax != nil
}

// within reports whether x keeps f's bounds.
func (f *Schema) within(x float64) bool {
	return (f.min == nil || x >= *f.min) && (f.max == nil || x <= *f.max) &&
		(f.exMin == nil || x > *f.exMin) && (f.exMax == nil || x < *f.exMax)
}

// number reads the number at r.i and returns jsInteger or jsNumber as
// jsonschema-go types its float64 (0 when decoding it into a float64
// fails), and, when value is set, that float64.
func (r *fastReader) number(value bool) (uint8, float64) {
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
	if digitsOnly && len(tok) <= 15 && !value {
		return jsInteger, 0
	}
	x, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, 0
	}
	if _, frac := math.Modf(x); frac == 0 {
		return jsInteger, x
	}
	return jsNumber, x
}

// object checks the object at r.i.
func (r *fastReader) object(f *Schema) bool {
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
			var vs *Schema
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
func (f *Schema) prop(key []byte) (int, bool) {
	if f == nil || f.props == nil {
		return 0, false
	}
	i, ok := f.props[string(key)]
	return i, ok
}
