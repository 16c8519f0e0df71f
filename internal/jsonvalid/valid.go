// Package jsonvalid reports whether bytes are one JSON value, exactly as
// encoding/json's Valid does, in one pass over the bytes, without
// allocating (up to 64 levels of nesting) and without the per-byte
// function calls of encoding/json's scanner.
//
// The hot path of a guarded call checks small JSON documents several
// times (the model's arguments, the encoded result); this is the check it
// uses. The differential fuzz test FuzzValid holds it to encoding/json.
package jsonvalid

// maxDepth is encoding/json's nesting limit: a document nested deeper is
// not valid.
const maxDepth = 10000

// Byte classes of the string scanner.
const (
	plain   = 0
	stop    = 1 // '"', '\\' or a control character
	hexBits = 2 // a hexadecimal digit
)

// class holds the byte classes: which bytes end the plain run of a
// string, and which are hexadecimal digits.
var class = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = stop
	}
	t['"'], t['\\'] = stop, stop
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] |= hexBits
	}
	return t
}()

// Valid reports whether data is a valid JSON encoding, as json.Valid
// does: one value, optionally surrounded by white space; strings may hold
// any byte but the unescaped control characters, '"' and '\\' (invalid
// UTF-8 included, as encoding/json accepts it); at most 10,000 levels of
// nesting.
func Valid(data []byte) bool {
	v := validator{b: data}
	v.space()
	if !v.value() {
		return false
	}
	v.space()
	return v.i == len(v.b)
}

// validator reads data once. Open arrays and objects are kept as a stack
// of bits (1 for an object), in a word for the first 64 levels and in a
// slice beyond.
type validator struct {
	b     []byte
	i     int
	depth int
	bits  uint64
	deep  []bool // levels 65 and beyond
}

func (v *validator) space() { v.i = SkipSpace(v.b, v.i) }

// SkipSpace returns the index of the first byte of s at or after i that is
// not JSON white space (space, tab, line feed, carriage return); len(s)
// when there is none. The package's readers of JSON share it.
func SkipSpace[T ~string | ~[]byte](s T, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// TrimSpace returns b without the JSON white space around it (a loop:
// bytes.Trim with a cut set builds the set at every call).
func TrimSpace(b []byte) []byte {
	b = b[SkipSpace(b, 0):]
	for len(b) > 0 {
		switch b[len(b)-1] {
		case ' ', '\t', '\n', '\r':
			b = b[:len(b)-1]
		default:
			return b
		}
	}
	return b
}

// StringEnd returns the index just past the closing quote of the JSON
// string whose opening quote is s[i], and whether the string has an escape.
// s must hold a complete string there, as in a document Valid accepted.
// The package's readers of JSON share it.
func StringEnd[T ~string | ~[]byte](s T, i int) (end int, escaped bool) {
	for i++; s[i] != '"'; i++ {
		if s[i] == '\\' {
			escaped = true
			i++
		}
	}
	return i + 1, escaped
}

// push opens a level; it reports false past the nesting limit.
func (v *validator) push(object bool) bool {
	v.depth++
	if v.depth > maxDepth {
		return false
	}
	if v.depth <= 64 {
		bit := uint64(1) << (v.depth - 1)
		if object {
			v.bits |= bit
		} else {
			v.bits &^= bit
		}
		return true
	}
	v.deep = append(v.deep, object)
	return true
}

// inObject reports whether the innermost open level is an object.
func (v *validator) inObject() bool {
	if v.depth <= 64 {
		return v.bits&(uint64(1)<<(v.depth-1)) != 0
	}
	return v.deep[len(v.deep)-1]
}

// pop closes the innermost level.
func (v *validator) pop() {
	if v.depth > 64 {
		v.deep = v.deep[:len(v.deep)-1]
	}
	v.depth--
}

// value reads one value (nested ones included) at v.i, which is past
// white space.
func (v *validator) value() bool {
	for {
		// A value starts here.
		if v.i >= len(v.b) {
			return false
		}
		switch c := v.b[v.i]; c {
		case '{':
			v.i++
			if !v.push(true) {
				return false
			}
			v.space()
			if v.i < len(v.b) && v.b[v.i] == '}' {
				v.i++
				v.pop()
				break // a complete value: go on after it
			}
			if !v.key() {
				return false
			}
			continue // the first member's value
		case '[':
			v.i++
			if !v.push(false) {
				return false
			}
			v.space()
			if v.i < len(v.b) && v.b[v.i] == ']' {
				v.i++
				v.pop()
				break
			}
			continue // the first element
		case '"':
			if !v.str() {
				return false
			}
		case 't':
			if !v.literal("true") {
				return false
			}
		case 'f':
			if !v.literal("false") {
				return false
			}
		case 'n':
			if !v.literal("null") {
				return false
			}
		default:
			if !v.number() {
				return false
			}
		}
		// A value ended: close the levels it completes, until one goes on.
		for {
			if v.depth == 0 {
				return true
			}
			v.space()
			if v.i >= len(v.b) {
				return false
			}
			c := v.b[v.i]
			v.i++
			if v.inObject() {
				if c == '}' {
					v.pop()
					continue
				}
				if c != ',' {
					return false
				}
				v.space()
				if !v.key() {
					return false
				}
			} else {
				if c == ']' {
					v.pop()
					continue
				}
				if c != ',' {
					return false
				}
				v.space()
			}
			break // the next value
		}
	}
}

// key reads a member's key and its colon at v.i, and the white space
// after them.
func (v *validator) key() bool {
	if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
		return false
	}
	v.space()
	if v.i >= len(v.b) || v.b[v.i] != ':' {
		return false
	}
	v.i++
	v.space()
	return true
}

// str reads the string at v.i (its opening quote).
func (v *validator) str() bool {
	b := v.b
	i := v.i + 1
	for {
		for i < len(b) && class[b[i]]&stop == 0 {
			i++
		}
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '"':
			v.i = i + 1
			return true
		case '\\':
			i++
			if i >= len(b) {
				return false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(b) || class[b[i+1]]&class[b[i+2]]&class[b[i+3]]&class[b[i+4]]&hexBits == 0 {
					return false
				}
				i += 5
			default:
				return false
			}
		default: // a control character
			return false
		}
	}
}

// literal reads the literal lit at v.i.
func (v *validator) literal(lit string) bool {
	if len(v.b)-v.i < len(lit) || string(v.b[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

// number reads the number at v.i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *validator) number() bool {
	b, i := v.b, v.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	v.i = i
	return true
}

// digits returns the end of the run of decimal digits at i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
