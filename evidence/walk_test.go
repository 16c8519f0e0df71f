package evidence_test

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"testing"

	"github.com/reactguard/reactguard/evidence"
)

// refWalk is the reference Walk: decode into Go values with encoding/json
// (numbers as json.Number), then visit every scalar. It is what Walk did
// before it read documents in place; FuzzWalk holds the two equal.
func refWalk(payload []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	var out []string
	var visit func(path string, v any)
	visit = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				visit(p, e)
			}
		case []any:
			for _, e := range x {
				visit(path, e)
			}
		case string:
			out = append(out, path+"="+x)
		case json.Number:
			text, _ := evidence.ScalarText([]byte(x))
			out = append(out, path+"="+text)
		case bool:
			out = append(out, path+"="+strconv.FormatBool(x))
		}
	}
	visit("", v)
	slices.Sort(out)
	return out, true
}

// hasRepeatedKey reports whether some object of the valid document b
// repeats a key (decoding keeps only the last occurrence; Walk keeps all).
func hasRepeatedKey(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		keys   map[string]bool
		object bool
		isKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.isKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.isKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.object {
				top.isKey = true
			}
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, isKey: true})
			continue
		case json.Delim('['):
			if top != nil && top.object {
				top.isKey = true
			}
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].isKey = true
			}
			continue
		}
		if top != nil && top.object {
			top.isKey = true
		}
	}
}

// FuzzWalk: Walk reads in place what decoding reads, leaf for leaf: the
// same paths and texts (a key repeated in an object adds the leaves of its
// earlier occurrences, which decoding drops), and an error exactly when the
// payload is not one JSON document.
func FuzzWalk(f *testing.F) {
	for _, s := range []string{
		`{"sites":[{"id":"s-1"},{"id":2}]}`, `[[[]]]`, `"x"`, `1e999`, `{"a.b":{"c":null}}`,
		`{"a":"\u0000"}`, `{`, `{"":""}`, `[1,2,3] x`, `-0.0`, `{"a":1,"a":2}`,
		`{"k\u00e9y":"v\"al\\ue"}`, "{\"a\":\"\xff\xfe\"}", `{"a":"\ud800"}`, ` [ 1 , { "b" : [ true , false , null ] } ] `,
		`{"n":12345678901234567890,"f":1.5e-7,"i":-0,"e":1E2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var got []string
		err := evidence.Walk(payload, func(path, text string) bool {
			got = append(got, path+"="+text)
			return true
		})
		slices.Sort(got)
		trimmed := bytes.Trim(payload, " \t\r\n")
		want, ok := refWalk(trimmed)
		switch {
		case len(trimmed) == 0:
			if err != nil || len(got) > 0 {
				t.Fatalf("Walk(empty) = %v, %v; want nothing", got, err)
			}
		case !ok:
			if err == nil || len(got) > 0 {
				t.Fatalf("Walk(%q) = %v, %v; want an error and no leaf", payload, got, err)
			}
		case err != nil:
			t.Fatalf("Walk(%q) = %v; want the leaves %v", payload, err, want)
		case hasRepeatedKey(trimmed):
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Fatalf("Walk(%q) lacks %q (decoding has it): %v", payload, w, got)
				}
			}
		case !slices.Equal(got, want):
			t.Fatalf("Walk(%q) =\n%v\nwant (decoding)\n%v", payload, got, want)
		}
	})
}
