package tool

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDetail is the longest detail, in bytes, that reaches the model in a
// reason text: a longer one is cut at a rune boundary and ends with "…"
// (see [ClipDetail]).
const MaxDetail = 300

// ClipDetail returns s as a detail for the model: its first line (a
// multi-line text such as a stack trace is cut at the first line break),
// with surrounding white space and control characters removed, cut to at
// most [MaxDetail] bytes at a rune boundary (the cut is marked with "…").
// Invalid UTF-8 becomes U+FFFD.
func ClipDetail(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) <= MaxDetail {
		return s
	}
	n := MaxDetail
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// detailed is the error [WithDetail] returns.
type detailed struct {
	err    error
	detail string
}

func (e *detailed) Error() string {
	if e.err == nil {
		return e.detail
	}
	return e.detail + ": " + e.err.Error()
}

func (e *detailed) Unwrap() error { return e.err }

// WithDetail returns err marked with detail, a text the tool wrote for the
// model: the default invoker classifies the call by err's chain as usual
// (a timeout stays TOOL_TIMEOUT, a refused connection TOOL_UNREACHABLE)
// and puts detail, clipped by [ClipDetail], into the reason the model
// reads. err itself never reaches the model; it goes to the log and the
// observer. A nil err is allowed (the failure is then TOOL_ERROR with
// detail). Write the detail for the model: it must not carry secrets.
func WithDetail(err error, detail string) error {
	return &detailed{err: err, detail: detail}
}

// DetailOf returns the detail for the model that err carries: the first,
// in err's chain, of a [WithDetail] detail and a non-empty [Error.Message],
// clipped by [ClipDetail]. It reports false when the chain carries none
// (every other error text is for the log only, never for the model). A
// typed nil *Error ends the search; a panic in another error's own Unwrap
// is not recovered.
func DetailOf(err error) (string, bool) {
	for err != nil {
		switch e := err.(type) { //nolint:errorlint // walks the chain by hand, in order
		case *detailed:
			if d := ClipDetail(e.detail); d != "" {
				return d, true
			}
		case *Error:
			if e == nil {
				return "", false
			}
			if d := ClipDetail(e.Message); d != "" {
				return d, true
			}
		}
		switch u := err.(type) { //nolint:errorlint // walks the chain by hand
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if d, ok := DetailOf(e); ok {
					return d, true
				}
			}
			return "", false
		default:
			return "", false
		}
	}
	return "", false
}

// JSONDetail describes for the model why JSON arguments did not decode
// into a Go value, without Go type or field names: "at byte 12: invalid
// character '}' …" for malformed JSON, "field count: want an integer, got
// a string" or "field amount: the number 1e400 is out of range" for a
// value of the wrong JSON type, "unknown field \"colour\"" for a field the
// target does not have, "the arguments are incomplete" for truncated
// input. Any other error gets "the arguments do not decode". The result is
// clipped by [ClipDetail]. A nil err gives "".
func JSONDetail(err error) string {
	if err == nil {
		return ""
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return ClipDetail("at byte " + strconv.FormatInt(syn.Offset, 10) + ": " + syn.Error())
	case errors.As(err, &typ):
		return ClipDetail(typeDetail(typ))
	case errors.Is(err, errTrailing):
		return errTrailing.Error()
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "json: unknown field "):
		return ClipDetail(strings.TrimPrefix(msg, "json: "))
	case strings.Contains(msg, "unexpected end of JSON input"), strings.Contains(msg, "unexpected EOF"):
		return "the arguments are incomplete"
	}
	return "the arguments do not decode"
}

// typeDetail describes an UnmarshalTypeError with JSON words only.
func typeDetail(e *json.UnmarshalTypeError) string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString("field " + e.Field + ": ")
	}
	want := jsonKindOf(e.Type)
	got, literal, _ := strings.Cut(e.Value, " ") // "number 1e400", "string", "object"
	if got == "number" && literal != "" && (want == "a number" || want == "an integer") {
		if want == "an integer" && strings.ContainsAny(literal, ".eE") {
			b.WriteString("want an integer, got the number " + literal)
		} else {
			b.WriteString("the number " + literal + " is out of range")
		}
		return b.String()
	}
	b.WriteString("want " + want + ", got " + article(got))
	return b.String()
}

// jsonKindOf names the JSON type a Go type decodes from.
func jsonKindOf(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	default: // interfaces, channels, funcs, …: no JSON type of their own
		return "another value"
	}
}

// article prefixes a JSON type name with its article.
func article(kind string) string {
	switch kind {
	case "":
		return "another value"
	case "array", "object", "integer":
		return "an " + kind
	case "null":
		return "null"
	}
	return "a " + kind
}

// SchemaDetail rewrites the keyword message of a
// github.com/google/jsonschema-go validation error (the text after its
// "validating <schema>: " prefixes) for the model. The validator prints
// the offending value and schemas with Go's %v ("map[a:1]", "[0xc…]"),
// which say nothing to a model and leak Go internals: the messages of the
// keywords type, enum, const, anyOf, oneOf, not and contains are replaced
// by JSON-only words ("has type \"object\", want \"string\"", "is not one
// of the allowed values", …); every other message (minimum, maxLength,
// pattern, required, additional properties, …) quotes only numbers and
// the model's own strings and is kept. A message that names Go types (a
// decoding error passed on, "cannot unmarshal … into Go value of type …")
// becomes "the value does not decode". Only the first line is kept; the
// result is not clipped to a length (use [ClipDetail] where one applies).
func SchemaDetail(msg string) string {
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	if strings.Contains(msg, "Go value of type") || strings.Contains(msg, "Go struct field") || strings.Contains(msg, "interface {}") {
		return "the value does not decode"
	}
	keyword, rest, ok := strings.Cut(msg, ": ")
	if !ok {
		return msg
	}
	switch keyword {
	case "type":
		if i := strings.LastIndex(rest, " has type "); i >= 0 {
			return "the value" + rest[i:]
		}
		return "the value has the wrong type"
	case "enum":
		return "the value is not one of the allowed values"
	case "const":
		return "the value is not the required constant"
	case "anyOf":
		return "the value matches none of the allowed forms"
	case "oneOf":
		if strings.HasPrefix(rest, "validated against both") {
			return "the value matches more than one of the allowed forms"
		}
		return "the value matches none of the allowed forms"
	case "not":
		return "the value has a form that is not allowed"
	case "contains":
		return "no item has the required form"
	}
	return msg
}
