package react

import (
	"bytes"
	"encoding/json"
	"io"

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
