package fingerprint_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/fingerprint"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want, reason string
	}{
		{"sorted keys", `{"b":1,"a":2}`, `{"a":2,"b":1}`, "object keys are sorted"},
		{"whitespace", " {\n\t\"a\" : [ 1 , 2 ] }\r\n", `{"a":[1,2]}`, "insignificant whitespace is removed"},
		{"nested", `{"z":{"d":1,"c":[{"f":1,"e":2}]},"a":0}`, `{"a":0,"z":{"c":[{"e":2,"f":1}],"d":1}}`, "nested objects are sorted too"},
		{"duplicate keys", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`, "the last duplicate wins, as in encoding/json"},
		{"duplicate keys sorted", `{"a":1,"a":2}`, `{"a":2}`, "adjacent duplicates are detected"},
		{"numbers by value", `[1.0,1,-0,1e5,1E+5,0.5e-3]`, `[1,1,0,100000,100000,0.0005]`, "numerically equal numbers are written alike, exactly"},
		{"literals", `[true,false,null]`, `[true,false,null]`, "literals are kept"},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`, "empty containers survive"},
		{"unicode escape", `"caf\u00e9"`, `"café"`, "\\u escapes of printable runes become UTF-8"},
		{"utf8 kept", `"日本"`, `"日本"`, "UTF-8 is preserved"},
		{"slash", `"a\/b"`, `"a/b"`, "an escaped slash is unescaped"},
		{"short escapes", `"\b\f\n\r\t\"\\"`, `"\b\f\n\r\t\"\\"`, "short escapes stay short"},
		{"control escape", `"\u0001\u001F"`, `"\u0001\u001f"`, "other control characters use lower-case \\u00xx"},
		{"escaped quote form", `"\u0022\u005c"`, `"\"\\"`, "quote and backslash use their short escapes"},
		{"escaped newline", `"\u000a"`, `"\n"`, "a \\u-escaped newline becomes \\n"},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`, "a surrogate pair becomes one rune"},
		{"lone high surrogate", `"\ud83dx"`, "\"\ufffdx\"", "a lone surrogate becomes U+FFFD"},
		{"lone low surrogate", `"\ude00"`, "\"\ufffd\"", "a lone low surrogate becomes U+FFFD"},
		{"high then non-low", `"\ud83d\u0041"`, "\"\ufffdA\"", "a high surrogate not followed by a low one stands alone"},
		{"invalid utf8", "\"a\xffb\"", "\"a\ufffdb\"", "invalid UTF-8 becomes U+FFFD"},
		{"del kept", "\"\x7f\"", "\"\x7f\"", "DEL is not a control character in JSON"},
		{"key escapes", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`, "keys are compared after canonical escaping"},
		{"scalar", ` 42 `, `42`, "any JSON value is accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fingerprint.Canonical([]byte(tt.in))
			require.NoError(t, err, "Canonical(%q): %s", tt.in, tt.reason)
			assert.Equal(t, tt.want, string(got), "Canonical(%q) = %q; want %q (%s)", tt.in, got, tt.want, tt.reason)
			again, err := fingerprint.Canonical(got)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again), "Canonical is not idempotent on %q", tt.in)
		})
	}
}

func TestCanonical_Invalid(t *testing.T) {
	tests := []struct {
		name, in, reason string
		offset           int
	}{
		{"empty", ``, "no value at all", 0},
		{"blank", `   `, "whitespace only", 3},
		{"truncated object", `{"a":`, "the value is missing", 5},
		{"trailing data", `{} {}`, "exactly one value", 3},
		{"bare word", `hello`, "not a literal", 0},
		{"bad literal", `tru`, "truncated literal", 0},
		{"single quotes", `{'a':1}`, "keys must be double-quoted", 1},
		{"missing colon", `{"a" 1}`, "a colon separates key and value", 5},
		{"trailing comma", `[1,]`, "no value after the comma", 3},
		{"trailing comma object", `{"a":1,}`, "no key after the comma", 7},
		{"bad separator", `[1;2]`, "elements are separated by commas", 2},
		{"bad object separator", `{"a":1;}`, "members are separated by commas", 6},
		{"leading zero", `01`, "no leading zeros", 1},
		{"lone minus", `-`, "a minus needs digits", 1},
		{"dot without digits", `1.`, "a fraction needs digits", 2},
		{"exponent without digits", `1e+`, "an exponent needs digits", 3},
		{"plus sign", `+1`, "no leading plus", 0},
		{"unterminated string", `"abc`, "strings must be closed", 4},
		{"raw control", "\"a\nb\"", "raw control characters are invalid", 2},
		{"bad escape", `"\x"`, "unknown escape", 2},
		{"short unicode", `"\u12"`, "four hex digits", 5},
		{"bad unicode", `"\u12zz"`, "four hex digits", 5},
		{"bad second unicode", `"\ud83d\uzzzz"`, "the second escape is checked too", 9},
		{"unterminated escape", `"\`, "escape at the end", 2},
		{"unterminated array", `[1`, "arrays must be closed", 2},
		{"unterminated object", `{"a":1`, "objects must be closed", 6},
		{"unterminated empty object", `{`, "objects must be closed", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fingerprint.Canonical([]byte(tt.in))
			require.Error(t, err, "Canonical(%q) = %q, nil; want an error (%s)", tt.in, got, tt.reason)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, fingerprint.ErrInvalidJSON)
			var se *fingerprint.SyntaxError
			require.True(t, errors.As(err, &se))
			assert.Equal(t, tt.offset, se.Offset, "Canonical(%q) offset = %d; want %d (%v)", tt.in, se.Offset, tt.offset, err)
			assert.False(t, json.Valid([]byte(tt.in)), "test input %q is valid JSON", tt.in)
		})
	}
}

func TestCanonical_Depth(t *testing.T) {
	ok := strings.Repeat("[", fingerprint.MaxDepth) + strings.Repeat("]", fingerprint.MaxDepth)
	_, err := fingerprint.Canonical([]byte(ok))
	require.NoError(t, err, "nesting of exactly MaxDepth is accepted")
	deep := strings.Repeat(`{"a":`, fingerprint.MaxDepth+1)
	_, err = fingerprint.Canonical([]byte(deep))
	require.ErrorIs(t, err, fingerprint.ErrInvalidJSON, "nesting beyond MaxDepth is refused")
}

func TestAppendCanonical_KeepsPrefix(t *testing.T) {
	dst := []byte("prefix:")
	out, err := fingerprint.AppendCanonical(dst, []byte(`{"b":1,"a":2}`))
	require.NoError(t, err)
	assert.Equal(t, `prefix:{"a":2,"b":1}`, string(out))

	out, err = fingerprint.AppendCanonical(dst, []byte(`{"b":`))
	require.Error(t, err)
	assert.Equal(t, "prefix:", string(out), "AppendCanonical on error returns dst unchanged")
}

func TestOf(t *testing.T) {
	base, err := fingerprint.Of("t", []byte(`{"a":1,"b":[1,2]}`))
	require.NoError(t, err)
	require.Len(t, base, fingerprint.Size)

	tests := []struct {
		name, tool, args string
		same             bool
		reason           string
	}{
		{"identical", "t", `{"a":1,"b":[1,2]}`, true, "same call"},
		{"key order", "t", `{"b":[1,2],"a":1}`, true, "key order does not matter"},
		{"whitespace", "t", "{ \"a\" : 1 ,\n \"b\" : [ 1 , 2 ] }", true, "whitespace does not matter"},
		{"escaping", "t", `{"\u0061":1,"b":[1,2]}`, true, "escaping does not matter"},
		{"other tool", "u", `{"a":1,"b":[1,2]}`, false, "the tool name is part of the identity"},
		{"other value", "t", `{"a":2,"b":[1,2]}`, false, "values matter"},
		{"array order", "t", `{"a":1,"b":[2,1]}`, false, "array order matters"},
		{"name boundary", "t{", `"a":1,"b":[1,2]}`, false, "the tool name is length-prefixed (no ambiguity at the boundary)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fingerprint.Of(tt.tool, []byte(tt.args))
			if tt.name == "name boundary" {
				require.Error(t, err) // the remaining args are not JSON; the point is no collision
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.same, got == base, "Of(%q, %q) == Of(t, base) is %v; want %v (%s)", tt.tool, tt.args, got == base, tt.same, tt.reason)
		})
	}
}

func TestOf_BlankArgsAreEmptyObject(t *testing.T) {
	want, err := fingerprint.Of("t", []byte(`{}`))
	require.NoError(t, err)
	for _, in := range []string{"", " ", "\n\t"} {
		got, err := fingerprint.Of("t", []byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, got, "Of(t, %q) = %q; want Of(t, {}) = %q", in, got, want)
	}
}

func TestOf_Invalid(t *testing.T) {
	got, err := fingerprint.Of("t", []byte(`{"a"`))
	assert.Empty(t, got)
	assert.ErrorIs(t, err, fingerprint.ErrInvalidJSON)
}

func TestOf_LargeInputNotPooled(t *testing.T) {
	// A large input must work and must not break later small ones.
	big := `{"k":"` + strings.Repeat("x", 512<<10) + `","a":1}`
	a, err := fingerprint.Of("t", []byte(big))
	require.NoError(t, err)
	b, err := fingerprint.Of("t", []byte(big))
	require.NoError(t, err)
	assert.Equal(t, a, b)
	c, err := fingerprint.Canonical([]byte(`{"b":1,"a":` + big + `}`))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(c, []byte(`{"a":{"a":1,"k":"xxx`)))
}

// FuzzCanonical: arbitrary bytes never panic; valid JSON always
// canonicalises, idempotently, to valid JSON with the same meaning; invalid
// JSON is always refused.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,null,{"d":"x","c":1.5e3}]}`, `{"a":1,"a":2}`, `"\ud83d\ude00\u0000\/"`,
		"\"\xff\"", `[]`, `{}`, `-0.0e-0`, `{"`, `[1,`, "", " ", `"\ud800\ud800"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := fingerprint.Canonical(in)
		valid := json.Valid(in)
		if !valid {
			if err == nil {
				t.Fatalf("Canonical(%q) = %q, nil; want an error for invalid JSON", in, out)
			}
			return
		}
		if err != nil {
			// Only the depth limit may refuse valid JSON.
			if !strings.Contains(err.Error(), "nesting") {
				t.Fatalf("Canonical(%q) error %v; want success for valid JSON", in, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Canonical(%q) = %q, which is not valid JSON", in, out)
		}
		again, err := fingerprint.Canonical(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Canonical(Canonical(%q)) = %q, %v; want %q", in, again, err, out)
		}
		a, aerr := decodeNumbers(in)
		if aerr == nil {
			b, err := decodeNumbers(out)
			if err != nil {
				t.Fatalf("decode(Canonical(%q)): %v", in, err)
			}
			if !sameMeaning(a, b) {
				t.Fatalf("Canonical(%q) = %q changes the meaning", in, out)
			}
		}
		if _, err := fingerprint.Of("t", in); err != nil {
			t.Fatalf("Of(t, %q): %v", in, err)
		}
	})
}

// decodeNumbers decodes one JSON value keeping numbers as json.Number.
func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// sameMeaning compares two decoded values; numbers compare by their
// correctly rounded float64 value (±Inf past the range, so that the
// comparison never needs the exact value of a huge exponent: exactness is
// FuzzNumberClasses' job), which holds -0 and 0 equal.
func sameMeaning(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameMeaning(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameMeaning(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, _ := strconv.ParseFloat(string(x), 64)
		fy, _ := strconv.ParseFloat(string(y), 64)
		return fx == fy
	default:
		return a == b
	}
}

// TestNumberClasses: numbers that are numerically equal have one
// canonical form, exactly, and numbers that differ anywhere (beyond
// float64's precision, or only in an exponent of 10^18 and more) do not.
func TestNumberClasses(t *testing.T) {
	classes := []struct {
		name   string
		same   []string
		want   string
		reason string
	}{
		{"one", []string{"1", "1.0", "1.00", "1e0", "10E-1", "0.1e1", "1E+0", "100e-2", "0.001e3", "1e-0"}, "1", "the issue's case: integers, decimals and exponents"},
		{"zero", []string{"0", "-0", "0.0", "-0.0e-5", "0e99", "0e1000000000000000000000"}, "0", "every zero, of any sign and exponent"},
		{"hundred", []string{"100", "1e2", "1E+2", "10e1", "1000e-1"}, "100", "an integer with trailing zeros"},
		{"fraction", []string{"1.5", "15e-1", "0.15e1", "1.50", "150e-2"}, "1.5", "a decimal fraction"},
		{"negative", []string{"-1.5", "-15e-1", "-0.150e1"}, "-1.5", "the sign is kept"},
		{"small", []string{"0.000001", "1e-6", "0.1e-5"}, "0.000001", "up to six zeros after the point stay fixed"},
		{"smaller", []string{"0.0000001", "1e-7", "10e-8"}, "1e-7", "from seven on, scientific"},
		{"large", []string{"100000000000000000000", "1e20"}, "100000000000000000000", "21 digits stay fixed"},
		{"larger", []string{"1000000000000000000000", "1e21", "10e20"}, "1e21", "from 22 digits on, scientific"},
		{"beyond 2^53", []string{"9007199254740993", "9007199254740993.0", "9.007199254740993e15"}, "9007199254740993", "exact: no float64 rounding"},
		{"long fraction", []string{"0.30000000000000000000000000001", "3.0000000000000000000000000001e-1"}, "0.30000000000000000000000000001", "every digit kept"},
		{"huge exponent", []string{"1e1000000000000000000000", "10e999999999999999999999", "0.1e1000000000000000000001"}, "1e1000000000000000000000", "exponents beyond int64 are exact too"},
		{"tiny exponent", []string{"1.23e-1000000000000000000005", "123e-1000000000000000000007"}, "1.23e-1000000000000000000005", "negative huge exponents"},
	}
	for _, tc := range classes {
		for _, in := range tc.same {
			got, err := fingerprint.Canonical([]byte(in))
			require.NoErrorf(t, err, "Canonical(%s)", in)
			assert.Equalf(t, tc.want, string(got), "Canonical(%s) = %s; want %s (%s: %s)", in, got, tc.want, tc.name, tc.reason)
			fa, err := fingerprint.Of("t", []byte(`{"n":`+in+`}`))
			require.NoError(t, err)
			fb, err := fingerprint.Of("t", []byte(`{"n":`+tc.want+`}`))
			require.NoError(t, err)
			assert.Equalf(t, fa, fb, "Of(n=%s) != Of(n=%s): equal numbers must fingerprint the same", in, tc.want)
		}
	}
	different := [][2]string{
		{"9007199254740993", "9007199254740992"},
		{"1", "1.0000000000000000000000000001"},
		{"1e1000000000000000000000", "1e1000000000000000000001"},
		{"0.1", "0.10000000000000001"},
		{"1", "-1"},
		{"1", `"1"`},
	}
	for _, d := range different {
		a, _ := fingerprint.Canonical([]byte(d[0]))
		b, _ := fingerprint.Canonical([]byte(d[1]))
		assert.NotEqualf(t, string(a), string(b), "Canonical(%s) = Canonical(%s) = %s; want different numbers kept apart", d[0], d[1], a)
	}
}

// FuzzNumberClasses proves the equality classes of numbers: one value
// (mant × 10^exp) written five ways — scientific, with a decimal point,
// with leading zeros, with trailing zeros, with padded exponent digits and
// either exponent letter — has one canonical form; that form denotes the
// same value exactly (compared as big.Rat); and the next value (mant+1)
// has another.
func FuzzNumberClasses(f *testing.F) {
	f.Add(uint64(1), uint8(0), int16(0), uint8(0), false, false)
	f.Add(uint64(15), uint8(1), int16(-8), uint8(3), true, true)
	f.Add(uint64(9007199254740993), uint8(5), int16(300), uint8(7), false, true)
	f.Add(uint64(0), uint8(2), int16(-30000), uint8(1), true, false)
	f.Fuzz(func(t *testing.T, mant uint64, point uint8, exp int16, pad uint8, neg, upper bool) {
		m := strconv.FormatUint(mant, 10)
		sign := ""
		if neg {
			sign = "-"
		}
		e := "e"
		if upper {
			e = "E"
		}
		expText := func(x int) string {
			if x >= 0 && upper {
				return "+" + strconv.Itoa(x)
			}
			return strconv.Itoa(x)
		}
		x := int(exp)
		k := int(point) % (len(m) + 1)
		withPoint := m[:len(m)-k] + "." + m[len(m)-k:]
		switch {
		case k == 0:
			withPoint = m + ".0"
		case k == len(m):
			withPoint = "0." + m
		}
		zeros := strings.Repeat("0", int(pad%8))
		trailing := m + zeros
		if mant == 0 {
			trailing = "0.0" + zeros // JSON has no leading zeros: 00 is not a number
		}
		spellings := []string{
			sign + m + e + expText(x),
			sign + withPoint + e + expText(x+k),
			sign + "0." + zeros + m + e + expText(x+len(m)+len(zeros)),
			sign + trailing + e + expText(x-len(zeros)),
			sign + m + e + strings.Replace(expText(x), strconv.Itoa(abs(x)), zeros+strconv.Itoa(abs(x)), 1),
		}
		want, err := fingerprint.Canonical([]byte(spellings[0]))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", spellings[0], err)
		}
		for _, s := range spellings[1:] {
			got, err := fingerprint.Canonical([]byte(s))
			if err != nil {
				t.Fatalf("Canonical(%s): %v", s, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Canonical(%s) = %s; Canonical(%s) = %s: the same number must have one form", s, got, spellings[0], want)
			}
		}
		in, ok1 := new(big.Rat).SetString(spellings[0])
		out, ok2 := new(big.Rat).SetString(string(want))
		if !ok1 || !ok2 || in.Cmp(out) != 0 {
			t.Fatalf("Canonical(%s) = %s denotes another value", spellings[0], want)
		}
		if mant < math.MaxUint64 {
			next := sign + strconv.FormatUint(mant+1, 10) + e + expText(x)
			other, err := fingerprint.Canonical([]byte(next))
			if err != nil {
				t.Fatalf("Canonical(%s): %v", next, err)
			}
			if bytes.Equal(other, want) {
				t.Fatalf("Canonical(%s) = Canonical(%s) = %s: different numbers must stay apart", next, spellings[0], want)
			}
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
