package react

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/fingerprint"
)

// holds reports whether the JSON payload of a tool result holds value: a
// scalar value equals the text of some scalar leaf (the comparison rule of
// [evidence.Walk], so "42" matches 42); an object or array value equals,
// canonically, the payload or one of its sub-values. Nothing holds null,
// and a payload that is not JSON holds nothing.
func holds(payload, value []byte) bool {
	if text, ok := evidence.ScalarText(value); ok {
		found := false
		_ = evidence.Walk(payload, func(_, t string) bool {
			found = t == text
			return !found
		})
		return found
	}
	want, err := fingerprint.Canonical(value)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	return subValue(v, want)
}

// holdsAt reports whether the JSON payload holds value at the dotted path
// field (arrays walked: any element; "" is the whole payload). A scalar
// value compares with the field's scalars by text as [holds] does (a
// number by value); an object or array canonically.
func holdsAt(payload []byte, field string, value []byte) bool {
	if text, ok := evidence.ScalarText(value); ok {
		found := false
		_ = evidence.Walk(payload, func(path, t string) bool {
			found = path == field && t == text
			return !found
		})
		return found
	}
	want, err := fingerprint.Canonical(value)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	var path []string
	if field != "" {
		path = strings.Split(field, ".")
	}
	return valueAt(v, path, want)
}

// valueAt reports whether v holds a value canonically equal to want at
// path, arrays on the way walked.
func valueAt(v any, path []string, want []byte) bool {
	if len(path) == 0 {
		if equalCanonical(v, want) {
			return true
		}
		if a, ok := v.([]any); ok { // a field that is an array of objects
			for _, e := range a {
				if equalCanonical(e, want) {
					return true
				}
			}
		}
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		e, ok := x[path[0]]
		return ok && valueAt(e, path[1:], want)
	case []any:
		for _, e := range x {
			if valueAt(e, path, want) {
				return true
			}
		}
	}
	return false
}

// subValue reports whether v or one of its sub-values is canonically equal
// to want (an object or array).
func subValue(v any, want []byte) bool {
	switch x := v.(type) {
	case map[string]any:
		if equalCanonical(x, want) {
			return true
		}
		for _, e := range x {
			if subValue(e, want) {
				return true
			}
		}
	case []any:
		if equalCanonical(x, want) {
			return true
		}
		for _, e := range x {
			if subValue(e, want) {
				return true
			}
		}
	}
	return false
}

func equalCanonical(v any, want []byte) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	c, err := fingerprint.Canonical(b)
	return err == nil && bytes.Equal(c, want)
}

// compact returns the compact form of a JSON value, or a copy of it when it
// is not valid JSON.
func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}
