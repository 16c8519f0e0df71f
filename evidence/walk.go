package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Walk decodes the JSON document payload and calls fn for every scalar leaf
// with its dotted path and its text, in no particular order. Object keys join
// with "." ("site.owner.id"); arrays are walked transparently, so every
// element of "sites" contributes to "sites.id"; a payload that is itself a
// scalar has the path "". The text of a string is the string without
// quotes, of a number its canonical form ([ScalarText]), of a boolean true
// or false; JSON null is skipped. Walk stops early when fn returns false.
//
// Walk never panics: a payload that is not exactly one JSON document yields
// an error and no call of fn. An empty payload yields no call and no error.
func Walk(payload []byte, fn func(path, text string) bool) error {
	payload = trimJSONSpace(payload)
	if len(payload) == 0 {
		return nil
	}
	if text, ok := simpleScalar(payload); ok {
		fn("", text)
		return nil
	}
	v, err := decode(payload)
	if err != nil {
		return err
	}
	walk("", v, fn)
	return nil
}

var errTrailing = errors.New("evidence: data after the JSON document")

func decode(payload []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

func walk(path string, v any, fn func(path, text string) bool) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if !walk(p, e, fn) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !walk(path, e, fn) {
				return false
			}
		}
		return true
	case string:
		return fn(path, x)
	case json.Number:
		return fn(path, canonicalNumber(string(x)))
	case bool:
		return fn(path, strconv.FormatBool(x))
	}
	return true // nil
}

// ScalarText returns the comparison text of a JSON scalar (see [Walk]) and
// true, or "" and false when raw is null, an object, an array or not JSON.
// Numbers are canonical: an integral value below 2^53 in magnitude prints as
// an integer ("42.0" and "4.2e1" give "42"), other numbers with a fraction
// or exponent print in the shortest form that round-trips, and integers
// written without fraction or exponent keep their digits.
func ScalarText(raw []byte) (string, bool) {
	if text, ok := simpleScalar(trimJSONSpace(raw)); ok {
		return text, true
	}
	v, err := decode(raw)
	if err != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return canonicalNumber(string(x)), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// trimJSONSpace trims the white space JSON allows around a value.
func trimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// simpleScalar returns the text of b, already trimmed, when b is a
// scalar that needs no decoder: a string without escapes, an integer
// written as digits, true or false. It is the fast path of the param
// contract, whose values are mostly of this kind.
func simpleScalar(b []byte) (string, bool) {
	switch {
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		in := b[1 : len(b)-1]
		for _, c := range in {
			if c == '"' || c == '\\' || c < 0x20 {
				return "", false
			}
		}
		if !utf8.Valid(in) {
			return "", false // the decoder replaces invalid bytes
		}
		return string(in), true
	case string(b) == "true" || string(b) == "false":
		return string(b), true
	}
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return string(b), true
}

func canonicalNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Words returns the words of a string leaf, as [Ledger.HasValue] with no
// tool matches them: s split at white space, each piece trimmed of the
// punctuation and symbols at its ends ("(s-1)," gives "s-1"), empty pieces
// dropped, and s itself omitted (it is matched as the whole value). Text
// without spaces, such as Chinese, is one word.
func Words(s string) []string {
	if !strings.ContainsFunc(s, unicode.IsSpace) {
		// One field, the common case of identifiers and codes: no
		// allocation unless trimming leaves a different word.
		w := strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
		if w == "" || w == s {
			return nil
		}
		return []string{w}
	}
	var out []string
	for _, f := range strings.FieldsFunc(s, unicode.IsSpace) {
		w := strings.TrimFunc(f, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
		if w != "" && w != s {
			out = append(out, w)
		}
	}
	return out
}
