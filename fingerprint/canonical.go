package fingerprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/reactguard/reactguard/internal/jsonvalid"
)

// ErrInvalidJSON is wrapped by every error [Canonical], [AppendCanonical]
// and [Of] return: the input is not one well-formed JSON value.
var ErrInvalidJSON = errors.New("fingerprint: invalid JSON")

// MaxDepth is the deepest nesting of arrays and objects accepted; deeper
// input is refused with [ErrInvalidJSON] rather than exhausting the stack.
const MaxDepth = 10000

// SyntaxError describes where the input stopped being JSON. It wraps
// [ErrInvalidJSON].
type SyntaxError struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Msg says what was expected there.
	Msg string
}

// Error returns "fingerprint: invalid JSON at offset N: msg".
func (e *SyntaxError) Error() string {
	return "fingerprint: invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Unwrap returns [ErrInvalidJSON].
func (e *SyntaxError) Unwrap() error { return ErrInvalidJSON }

// Canonical returns the canonical form of the JSON value in args (see the
// package documentation for the rules). Two inputs that differ only in
// object key order, insignificant whitespace, string escaping, duplicate
// keys or the spelling of numerically equal numbers have the same
// canonical form, and Canonical(Canonical(x)) equals Canonical(x). Input that is not exactly one JSON value, empty input
// included, yields an error wrapping [ErrInvalidJSON] and no bytes. It never
// panics and is safe for concurrent use.
func Canonical(args json.RawMessage) ([]byte, error) {
	out, err := AppendCanonical(nil, args)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendCanonical appends the canonical form of args to dst and returns the
// extended slice, like [strconv.AppendInt]. On error it returns dst
// unchanged in length and an error wrapping [ErrInvalidJSON].
func AppendCanonical(dst, args []byte) ([]byte, error) {
	c := getCanon()
	out, err := c.run(dst, args)
	putCanon(c)
	return out, err
}

// member is one object member written to the output: the canonical quoted
// key is out[start:keyEnd], the whole member out[start:end].
type member struct{ start, keyEnd, end int }

// canon is the reusable state of one canonicalisation.
type canon struct {
	in      []byte
	pos     int
	out     []byte
	members []member // a stack shared by nested objects
	scratch []byte
	ofBuf   []byte // Of's output buffer, kept across uses
	depth   int
}

var canonPool = sync.Pool{New: func() any { return new(canon) }}

func getCanon() *canon { return canonPool.Get().(*canon) }

// maxPooled bounds the buffers kept for reuse so that one huge input does
// not pin its memory.
const maxPooled = 256 << 10

func putCanon(c *canon) {
	c.in, c.out = nil, nil
	if cap(c.scratch) > maxPooled {
		c.scratch = nil
	}
	if cap(c.members) > maxPooled/16 {
		c.members = nil
	}
	canonPool.Put(c)
}

func (c *canon) run(dst, in []byte) ([]byte, error) {
	c.in, c.pos, c.out, c.depth = in, 0, dst, 0
	c.members = c.members[:0]
	n := len(dst)
	c.skipSpace()
	if c.pos >= len(c.in) {
		return dst[:n], c.fail("expected a JSON value, found the end of the input")
	}
	if err := c.value(); err != nil {
		return dst[:n], err
	}
	c.skipSpace()
	if c.pos < len(c.in) {
		return dst[:n], c.fail("unexpected data after the JSON value")
	}
	return c.out, nil
}

func (c *canon) fail(msg string) error { return &SyntaxError{Offset: c.pos, Msg: msg} }

func (c *canon) skipSpace() { c.pos = jsonvalid.SkipSpace(c.in, c.pos) }

func (c *canon) value() error {
	if c.pos >= len(c.in) {
		return c.fail("expected a JSON value, found the end of the input")
	}
	switch b := c.in[c.pos]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		return c.str()
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return c.fail("expected a JSON value")
}

func (c *canon) literal(lit string) error {
	if len(c.in)-c.pos < len(lit) || string(c.in[c.pos:c.pos+len(lit)]) != lit {
		return c.fail("expected " + lit)
	}
	c.out = append(c.out, lit...)
	c.pos += len(lit)
	return nil
}

// number validates a JSON number and writes its canonical form (see
// appendNumber).
func (c *canon) number() error {
	in := c.in
	i := c.pos
	neg := false
	if in[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && in[i] >= '1' && in[i] <= '9':
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	default:
		c.pos = i
		return c.fail("expected a digit")
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(in) && in[i] == '.' {
		i++
		if i >= len(in) || !isDigit(in[i]) {
			c.pos = i
			return c.fail("expected a digit after the decimal point")
		}
		fracStart = i
		for i < len(in) && isDigit(in[i]) {
			i++
		}
		fracEnd = i
	}
	expNeg := false
	expStart, expEnd := i, i
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			expNeg = in[i] == '-'
			i++
		}
		if i >= len(in) || !isDigit(in[i]) {
			c.pos = i
			return c.fail("expected a digit in the exponent")
		}
		expStart = i
		for i < len(in) && isDigit(in[i]) {
			i++
		}
		expEnd = i
	}
	c.pos = i
	c.appendNumber(neg, in[intStart:intEnd], in[fracStart:fracEnd], expNeg, in[expStart:expEnd])
	return nil
}

// appendNumber writes the canonical form of the number
// (-)int.frac e(-)exp, whose digit strings were validated: one text per
// numeric value, exactly (no floating-point rounding, whatever the number
// of digits or the size of the exponent). The value is D × 10^E with D the
// significant digits (no leading or trailing zeros); with p = len(D) + E,
// the position of the decimal point, it is written as ECMAScript writes
// numbers (Number::toString), but with every digit kept:
//
//	zero (any sign, any exponent)   0
//	E >= 0 and p <= 21              D followed by E zeros        1, 100, 123000
//	0 < p <= 21                     D with a point after p digits 1.5, 12.25
//	-6 < p <= 0                     0. then -p zeros, then D      0.001, 0.0625
//	otherwise                       d.ddd e(p-1)                 1e21, 1.5e-7, 9e999999999999999999999
//
// with a leading minus sign for a negative value. The form is a JSON
// number and canonical itself, so canonicalising it again gives it back.
func (c *canon) appendNumber(neg bool, intPart, frac []byte, expNeg bool, exp []byte) {
	l := len(intPart) + len(frac)
	digit := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	lead := 0
	for lead < l && digit(lead) == '0' {
		lead++
	}
	if lead == l {
		c.out = append(c.out, '0')
		return
	}
	last := l
	for digit(last-1) == '0' {
		last--
	}
	n := last - lead
	adj := (l - last) - len(frac) // E = exponent + adj
	appendDigits := func(from, to int) {
		for k := from; k < to; k++ {
			c.out = append(c.out, digit(k))
		}
	}
	if neg {
		c.out = append(c.out, '-')
	}
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	if len(exp) > 18 {
		// |exponent| >= 10^18: p is far outside every fixed form (adj is
		// bounded by the input's length). Exact scientific form.
		e, _ := new(big.Int).SetString(string(exp), 10)
		if expNeg {
			e.Neg(e)
		}
		e.Add(e, big.NewInt(int64(adj+n-1)))
		c.scientific(appendDigits, lead, last)
		c.out = e.Append(c.out, 10)
		return
	}
	var e int64
	for _, b := range exp {
		e = e*10 + int64(b-'0')
	}
	if expNeg {
		e = -e
	}
	bigE := e + int64(adj)
	p := int64(n) + bigE
	switch {
	case bigE >= 0 && p <= 21:
		appendDigits(lead, last)
		for range bigE {
			c.out = append(c.out, '0')
		}
	case p > 0 && p <= 21:
		appendDigits(lead, lead+int(p))
		c.out = append(c.out, '.')
		appendDigits(lead+int(p), last)
	case p > -6 && p <= 0:
		c.out = append(c.out, '0', '.')
		for range -p {
			c.out = append(c.out, '0')
		}
		appendDigits(lead, last)
	default:
		c.scientific(appendDigits, lead, last)
		c.out = strconv.AppendInt(c.out, p-1, 10)
	}
}

// scientific writes the significant digits as d.ddd followed by "e"; the
// caller appends the exponent.
func (c *canon) scientific(appendDigits func(from, to int), lead, last int) {
	appendDigits(lead, lead+1)
	if last-lead > 1 {
		c.out = append(c.out, '.')
		appendDigits(lead+1, last)
	}
	c.out = append(c.out, 'e')
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func (c *canon) enter() error {
	c.depth++
	if c.depth > MaxDepth {
		return c.fail("nesting deeper than " + strconv.Itoa(MaxDepth))
	}
	return nil
}

func (c *canon) array() error {
	if err := c.enter(); err != nil {
		return err
	}
	c.pos++ // '['
	c.out = append(c.out, '[')
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		c.depth--
		return nil
	}
	for {
		c.skipSpace()
		if err := c.value(); err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.in) {
			return c.fail("expected , or ] in an array")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			c.depth--
			return nil
		default:
			return c.fail("expected , or ] in an array")
		}
	}
}

func (c *canon) object() error {
	if err := c.enter(); err != nil {
		return err
	}
	c.pos++ // '{'
	objStart := len(c.out)
	c.out = append(c.out, '{')
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		c.depth--
		return nil
	}
	base := len(c.members)
	sorted := true
	for {
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return c.fail("expected a string key in an object")
		}
		m := member{start: len(c.out)}
		if err := c.str(); err != nil {
			return err
		}
		m.keyEnd = len(c.out)
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return c.fail("expected : after an object key")
		}
		c.pos++
		c.out = append(c.out, ':')
		c.skipSpace()
		if err := c.value(); err != nil {
			return err
		}
		m.end = len(c.out)
		if sorted && len(c.members) > base {
			prev := c.members[len(c.members)-1]
			if bytes.Compare(c.out[prev.start:prev.keyEnd], c.out[m.start:m.keyEnd]) >= 0 {
				sorted = false // out of order, or a duplicate key
			}
		}
		c.members = append(c.members, m)
		c.skipSpace()
		if c.pos >= len(c.in) {
			return c.fail("expected , or } in an object")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
			continue
		case '}':
			c.pos++
		default:
			return c.fail("expected , or } in an object")
		}
		break
	}
	if !sorted {
		c.reorder(objStart, c.members[base:])
	}
	c.out = append(c.out, '}')
	c.members = c.members[:base]
	c.depth--
	return nil
}

// reorder rewrites the members of the object starting at objStart in
// ascending key order, keeping only the last of duplicate keys (the value a
// JSON decoder keeps).
func (c *canon) reorder(objStart int, ms []member) {
	c.scratch = append(c.scratch[:0], c.out[objStart:]...)
	src := c.scratch
	for i := range ms {
		ms[i].start -= objStart
		ms[i].keyEnd -= objStart
		ms[i].end -= objStart
	}
	slices.SortStableFunc(ms, func(a, b member) int {
		return bytes.Compare(src[a.start:a.keyEnd], src[b.start:b.keyEnd])
	})
	c.out = append(c.out[:objStart], '{')
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && bytes.Equal(src[m.start:m.keyEnd], src[ms[i+1].start:ms[i+1].keyEnd]) {
			continue // a later duplicate wins
		}
		if !first {
			c.out = append(c.out, ',')
		}
		first = false
		c.out = append(c.out, src[m.start:m.end]...)
	}
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes a string copies unchanged: printable ASCII other
// than the quote and the backslash.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// str parses a JSON string and writes it in canonical form: only ", \ and
// control characters are escaped (\b \f \n \r \t or \u00xx), everything else
// is literal UTF-8; invalid UTF-8 and lone surrogates become U+FFFD.
func (c *canon) str() error {
	c.pos++ // opening quote
	c.out = append(c.out, '"')
	in := c.in
	for {
		// Copy the longest run that needs no attention.
		start := c.pos
		for c.pos < len(in) && plain[in[c.pos]] {
			c.pos++
		}
		c.out = append(c.out, in[start:c.pos]...)
		if c.pos >= len(in) {
			return c.fail("unterminated string")
		}
		switch b := in[c.pos]; {
		case b == '"':
			c.pos++
			c.out = append(c.out, '"')
			return nil
		case b < 0x20:
			return c.fail("control character in a string")
		case b == '\\':
			if err := c.escape(); err != nil {
				return err
			}
		default: // b >= utf8.RuneSelf
			r, size := utf8.DecodeRune(in[c.pos:])
			if r == utf8.RuneError && size == 1 {
				c.out = utf8.AppendRune(c.out, utf8.RuneError)
			} else {
				c.out = append(c.out, in[c.pos:c.pos+size]...)
			}
			c.pos += size
		}
	}
}

func (c *canon) escape() error {
	in := c.in
	if c.pos+1 >= len(in) {
		c.pos = len(in)
		return c.fail("unterminated escape")
	}
	e := in[c.pos+1]
	c.pos += 2
	switch e {
	case '"', '\\':
		c.out = append(c.out, '\\', e)
	case '/':
		c.out = append(c.out, '/')
	case 'b', 'f', 'n', 'r', 't':
		c.out = append(c.out, '\\', e)
	case 'u':
		r, ok := c.hex4()
		if !ok {
			return c.fail("expected four hex digits after \\u")
		}
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if c.pos+1 < len(in) && in[c.pos] == '\\' && in[c.pos+1] == 'u' {
				save := c.pos
				c.pos += 2
				var ok2 bool
				r2, ok2 = c.hex4()
				if !ok2 {
					return c.fail("expected four hex digits after \\u")
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					r2 = -2 // consumed
				} else {
					c.pos = save // not a pair: the second escape stands alone
				}
			}
			if r2 != -2 {
				r = utf8.RuneError
			}
		}
		c.appendRune(r)
	default:
		c.pos--
		return c.fail("invalid escape character")
	}
	return nil
}

func (c *canon) hex4() (rune, bool) {
	var r rune
	for range 4 {
		if c.pos >= len(c.in) {
			return 0, false
		}
		b := c.in[c.pos]
		var v byte
		switch {
		case b >= '0' && b <= '9':
			v = b - '0'
		case b >= 'a' && b <= 'f':
			v = b - 'a' + 10
		case b >= 'A' && b <= 'F':
			v = b - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
		c.pos++
	}
	return r, true
}

// appendRune writes a decoded rune in canonical form.
func (c *canon) appendRune(r rune) {
	switch {
	case r == '"' || r == '\\':
		c.out = append(c.out, '\\', byte(r))
	case r == '\b':
		c.out = append(c.out, '\\', 'b')
	case r == '\f':
		c.out = append(c.out, '\\', 'f')
	case r == '\n':
		c.out = append(c.out, '\\', 'n')
	case r == '\r':
		c.out = append(c.out, '\\', 'r')
	case r == '\t':
		c.out = append(c.out, '\\', 't')
	case r < 0x20:
		c.out = append(c.out, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
	default:
		c.out = utf8.AppendRune(c.out, r)
	}
}
