package fingerprint_test

import (
	"bytes"
	"encoding/json"
	"errors"
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
		{"numbers as written", `[1.0,1,-0,1e5,1E+5,0.5e-3]`, `[1.0,1,-0,1e5,1E+5,0.5e-3]`, "numbers are validated, not reformatted"},
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
		var a, b any
		if json.Unmarshal(in, &a) == nil {
			if err := json.Unmarshal(out, &b); err != nil {
				t.Fatalf("Unmarshal(Canonical(%q)): %v", in, err)
			}
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) {
				t.Fatalf("Canonical(%q) = %q changes the meaning: %s vs %s", in, out, ja, jb)
			}
		}
		if _, err := fingerprint.Of("t", in); err != nil {
			t.Fatalf("Of(t, %q): %v", in, err)
		}
	})
}
