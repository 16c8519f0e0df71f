package jsonvalid

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	deep := func(n int, open, mid, close string) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	tests := []struct {
		doc  string
		want bool
		why  string
	}{
		{``, false, "no value"},
		{`  `, false, "white space alone"},
		{`{}`, true, "the empty object"},
		{` {"a" : [1, -2.5e+3, "x", true, false, null, {}] } `, true, "every kind of value, spaced"},
		{`{"a":1,}`, false, "a trailing comma in an object"},
		{`[1,]`, false, "a trailing comma in an array"},
		{`{"a"}`, false, "a key without a value"},
		{`{1:2}`, false, "a key that is no string"},
		{`[1 2]`, false, "no comma"},
		{`01`, false, "a leading zero"},
		{`-`, false, "a sign alone"},
		{`1.`, false, "no digit after the point"},
		{`1e`, false, "no digit in the exponent"},
		{`1e+`, false, "a sign alone in the exponent"},
		{`-0.0E-0`, true, "every part of a number"},
		{`+1`, false, "a plus sign"},
		{`.5`, false, "no integer part"},
		{`tru`, false, "a cut literal"},
		{`nul`, false, "a cut null"},
		{`truex`, false, "a literal with more after it"},
		{`"\u00e9\n\"\\\/\b\f\r\t"`, true, "every escape"},
		{`"\u00zz"`, false, "a bad unicode escape"},
		{`"\u12"`, false, "a cut unicode escape"},
		{`"\x"`, false, "an unknown escape"},
		{"\"\x01\"", false, "a control character in a string"},
		{"\"\x7f\xff\"", true, "DEL and invalid UTF-8: encoding/json accepts both"},
		{`"abc`, false, "an unclosed string"},
		{`[`, false, "an unclosed array"},
		{`[1`, false, "an array cut after a value"},
		{`{"a":1`, false, "an object cut after a value"},
		{`{"a":1,`, false, "an object cut after a comma"},
		{`{"a":1,2:3}`, false, "a second key that is no string"},
		{`{"a" 1}`, false, "no colon"},
		{`{"a":`, false, "an object cut after a colon"},
		{`"\`, false, "a string cut in an escape"},
		{`"\u00e9`, false, "a string cut after a unicode escape"},
		{`[1}`, false, "an array closed as an object"},
		{`fals`, false, "a cut false"},
		{`{"a":1]`, false, "an object closed as an array"},
		{`{"a":[}`, false, "mismatched brackets"},
		{`]`, false, "a close without an open"},
		{`{} {}`, false, "two values"},
		{deep(10000, "[", "", "]"), true, "nesting at the limit"},
		{deep(10001, "[", "", "]"), false, "nesting past the limit"},
		{deep(10000, `{"a":`, "1", "}"), true, "objects nested at the limit"},
		{deep(10001, `{"a":`, "1", "}"), false, "objects nested past the limit"},
		{deep(70, "[", "", "]") + "]", false, "one close too many past 64 levels"},
		{deep(65, `[{"a":`, "1", "}]"), true, "arrays and objects mixed past 64 levels"},
	}
	for _, tt := range tests {
		got := Valid([]byte(tt.doc))
		if got != tt.want {
			t.Errorf("%s: Valid(%.40q) = %v, want %v", tt.why, tt.doc, got, tt.want)
		}
		if json.Valid([]byte(tt.doc)) != tt.want {
			t.Errorf("%s: the table disagrees with json.Valid on %.40q", tt.why, tt.doc)
		}
	}
}

func TestValidAllocs(t *testing.T) {
	doc := []byte(`{"q":"c0_0_1","n":[1,2,{"x":null}],"s":"\u00e9"}`)
	if n := testing.AllocsPerRun(100, func() { Valid(doc) }); n != 0 {
		t.Errorf("Valid allocates %v times; want 0 under 64 levels", n)
	}
}

// FuzzValid holds Valid to encoding/json: the same answer for any bytes.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,"x",true,null,{"b":-1.5e3}]}`, `"\u00e9\n"`, `[[[]]]`, `01`, "\"\xff\"", `{"a":1,}`, ` 1 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v; json.Valid says %v", data, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	docs := map[string][]byte{
		"args":   []byte(`{"q":"c12_3_456"}`),
		"result": []byte(`{"found":"c12_3_456","score":9,"tags":["a","b"],"ok":true}`),
	}
	for name, doc := range docs {
		b.Run(name+"/jsonvalid", func(b *testing.B) {
			for b.Loop() {
				Valid(doc)
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			for b.Loop() {
				json.Valid(doc)
			}
		})
	}
}

func TestTrimSpace(t *testing.T) {
	tests := []struct{ in, want, why string }{
		{" \t\r\n{}\n\r\t ", "{}", "every JSON white space, both ends"},
		{"{ }", "{ }", "space inside stays"},
		{"   ", "", "only space"},
		{"", "", "empty"},
		{"\u00a0{}", "\u00a0{}", "a non-breaking space is not JSON white space"},
		{"\v1\f", "\v1\f", "nor are vertical tab and form feed"},
	}
	for _, tt := range tests {
		if got := string(TrimSpace([]byte(tt.in))); got != tt.want {
			t.Errorf("%s: TrimSpace(%q) = %q; want %q", tt.why, tt.in, got, tt.want)
		}
	}
}

func TestStringEnd(t *testing.T) {
	tests := []struct {
		s       string
		i, end  int
		escaped bool
		why     string
	}{
		{`"ab"`, 0, 4, false, "plain"},
		{`x:"ab",`, 2, 6, false, "from an index, stopping at the closing quote"},
		{`"a\"b"`, 0, 6, true, "an escaped quote does not close"},
		{`"a\\"`, 0, 5, true, "an escaped backslash does not escape the quote"},
		{`""`, 0, 2, false, "empty"},
		{`"\u00e9"`, 0, 8, true, "a unicode escape"},
	}
	for _, tt := range tests {
		end, esc := StringEnd(tt.s, tt.i)
		if end != tt.end || esc != tt.escaped {
			t.Errorf("%s: StringEnd(%q, %d) = %d, %v; want %d, %v", tt.why, tt.s, tt.i, end, esc, tt.end, tt.escaped)
		}
		if end, esc := StringEnd([]byte(tt.s), tt.i); end != tt.end || esc != tt.escaped {
			t.Errorf("%s: on bytes, %d, %v", tt.why, end, esc)
		}
	}
}
