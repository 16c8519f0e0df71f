package guard

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// maxFastDepth is the deepest nesting decodeJSON decodes itself; deeper
// documents go to encoding/json, which has its own limit.
const maxFastDepth = 64

// decodeJSON returns what json.Unmarshal(data, &v) with v of type any
// gives — the same value (objects as map[string]any, arrays as []any,
// numbers as float64), the same error — and the text of data as a string.
//
// Documents of the common kind (strings without escapes, numbers that fit a
// float64, nesting up to maxFastDepth) are decoded without encoding/json's
// reflection: data is converted to a string once, and every string of the
// document is a substring of it, so the whole document costs that string,
// one allocation per object or array, and one per string or number value
// boxed in an interface. Any other document — one with escapes in a
// string, invalid UTF-8, a number out of range, or a syntax error — is
// handed to json.Unmarshal, so results and error texts are the same by
// construction. The text is "" when data is empty.
func decodeJSON(data []byte) (any, string, error) {
	d := fastDecoder{s: string(data)}
	d.space()
	if v, ok := d.value(0); ok {
		if d.space(); d.i == len(d.s) {
			return v, d.s, nil
		}
	}
	var v any
	err := json.Unmarshal(data, &v)
	return v, d.s, err
}

// fastDecoder decodes the common kind of JSON document; every method
// reports false when the document needs encoding/json.
type fastDecoder struct {
	s string
	i int
}

func (d *fastDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) || depth > maxFastDepth {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		return s, true
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

func (d *fastDecoder) literal(lit string) bool {
	if len(d.s)-d.i < len(lit) || d.s[d.i:d.i+len(lit)] != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// str decodes a string without escapes and of valid UTF-8, the opening
// quote at d.i.
func (d *fastDecoder) str() (string, bool) {
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.s); j++ {
		switch c := d.s[j]; {
		case c == '"':
			s := d.s[start:j]
			if !ascii && !utf8.ValidString(s) {
				return "", false // encoding/json replaces invalid bytes
			}
			d.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// number decodes a number of JSON's grammar into a float64, as
// encoding/json does.
func (d *fastDecoder) number() (any, bool) {
	s, i := d.s, d.i
	start := i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return nil, false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return nil, false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	f, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil {
		return nil, false // out of range: encoding/json reports it
	}
	d.i = i
	return f, true
}

func (d *fastDecoder) object(depth int) (any, bool) {
	d.i++ // '{'
	m := make(map[string]any)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v // the last of repeated keys wins, as in encoding/json
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *fastDecoder) array(depth int) (any, bool) {
	d.i++ // '['
	a := make([]any, 0)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			d.space()
		case ']':
			d.i++
			return a, true
		default:
			return nil, false
		}
	}
}
