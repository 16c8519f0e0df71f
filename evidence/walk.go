package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
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
	if len(bytes.TrimSpace(payload)) == 0 {
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
