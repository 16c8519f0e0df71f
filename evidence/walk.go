package evidence

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reactguard/reactguard/internal/jsonvalid"
)

// Walk reads the JSON document payload and calls fn for every scalar leaf
// with its dotted path and its text, in no particular order. Object keys join
// with "." ("site.owner.id"); arrays are walked transparently, so every
// element of "sites" contributes to "sites.id"; a payload that is itself a
// scalar has the path "". The text of a string is the string without
// quotes (escapes resolved, invalid UTF-8 replaced by U+FFFD, as
// encoding/json decodes it), of a number its canonical form
// ([ScalarText]), of a boolean true or false; JSON null is skipped. A key
// repeated in one object contributes the leaves of every occurrence. Walk
// stops early when fn returns false.
//
// Walk reads the document in place, without decoding it into Go values:
// the texts are substrings of one copy of the payload (one allocation),
// except for strings with escapes and for nested paths. It never panics: a
// payload that is not exactly one JSON document yields an error and no
// call of fn. An empty payload yields no call and no error.
func Walk(payload []byte, fn func(path, text string) bool) error {
	payload = jsonvalid.TrimSpace(payload)
	if len(payload) == 0 {
		return nil
	}
	if text, ok := simpleScalar(payload); ok {
		fn("", text)
		return nil
	}
	if !jsonvalid.Valid(payload) {
		return errInvalid
	}
	return walkValid(payload, fn)
}

// walkValid is [Walk] for a payload known to be one JSON document.
func walkValid(payload []byte, fn func(path, text string) bool) error {
	payload = jsonvalid.TrimSpace(payload)
	if len(payload) == 0 {
		return nil
	}
	if text, ok := simpleScalar(payload); ok {
		fn("", text)
		return nil
	}
	w := walker{s: string(payload)}
	w.value("", fn)
	return nil
}

var errInvalid = errors.New("evidence: the payload is not exactly one JSON document")

// walker reads a document that json.Valid accepted.
type walker struct {
	s    string
	i    int
	stop bool
}

func (w *walker) space() { w.i = jsonvalid.SkipSpace(w.s, w.i) }

func (w *walker) emit(fn func(path, text string) bool, path, text string) {
	if !fn(path, text) {
		w.stop = true
	}
}

// value reads the value at w.i, which starts with no space before it. fn
// is a parameter, not a field, so that a caller's closure does not escape.
func (w *walker) value(path string, fn func(path, text string) bool) {
	switch c := w.s[w.i]; c {
	case '{':
		w.i++
		w.space()
		if w.s[w.i] == '}' {
			w.i++
			return
		}
		for !w.stop {
			w.space()
			key := w.str()
			w.space()
			w.i++ // ':'
			w.space()
			p := key
			if path != "" {
				p = path + "." + key
			}
			w.value(p, fn)
			w.space()
			if w.s[w.i] == '}' {
				w.i++
				return
			}
			w.i++ // ','
		}
	case '[':
		w.i++
		w.space()
		if w.s[w.i] == ']' {
			w.i++
			return
		}
		for !w.stop {
			w.space()
			w.value(path, fn)
			w.space()
			if w.s[w.i] == ']' {
				w.i++
				return
			}
			w.i++ // ','
		}
	case '"':
		w.emit(fn, path, w.str())
	case 't':
		w.i += len("true")
		w.emit(fn, path, "true")
	case 'f':
		w.i += len("false")
		w.emit(fn, path, "false")
	case 'n':
		w.i += len("null")
	default:
		start := w.i
		for w.i < len(w.s) && isNumberByte(w.s[w.i]) {
			w.i++
		}
		w.emit(fn, path, canonicalNumber(w.s[start:w.i]))
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// str reads the string at w.i and returns its text: a substring of the
// document when it has no escapes and is valid UTF-8, else what
// encoding/json decodes it to.
func (w *walker) str() string {
	start := w.i
	end, escaped := jsonvalid.StringEnd(w.s, w.i)
	w.i = end
	in := w.s[start+1 : end-1]
	if !escaped && utf8.ValidString(in) {
		return in
	}
	var out string
	_ = json.Unmarshal([]byte(w.s[start:w.i]), &out) // a valid JSON string
	return out
}

// ScalarText returns the comparison text of a JSON scalar (see [Walk]) and
// true, or "" and false when raw is null, an object, an array or not JSON.
// Numbers are canonical: an integral value below 2^53 in magnitude prints as
// an integer ("42.0" and "4.2e1" give "42"), other numbers with a fraction
// or exponent print in the shortest form that round-trips, and integers
// written without fraction or exponent keep their digits.
func ScalarText(raw []byte) (string, bool) {
	raw = jsonvalid.TrimSpace(raw)
	if text, ok := simpleScalar(raw); ok {
		return text, true
	}
	if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' || raw[0] == 'n' || !jsonvalid.Valid(raw) {
		return "", false
	}
	var text string
	w := walker{s: string(raw)}
	w.value("", func(_, t string) bool { text = t; return false })
	return text, true
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
