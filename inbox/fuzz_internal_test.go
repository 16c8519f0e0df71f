package inbox

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzJSONText: a model's argument value, shown on the page, holds no
// character that is invisible or reverses the text, and is the JSON of
// the same value (the escapes are JSON's own).
func FuzzJSONText(f *testing.F) {
	for _, s := range []string{`"p-alice"`, `{"a":"\u202eevil","b":[1,2,{"c":null}]}`, "\"\u200b\u00a0\ufeff\U000e0041\"", `"<script>"`, `not json`, "\"\xff\"", `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := jsonText(b).String()
		for _, r := range out {
			if odd(r) {
				t.Fatalf("jsonText(%q) = %q holds %U", b, out, r)
			}
		}
		if !json.Valid(b) || !utf8.Valid(b) {
			return
		}
		want, got := decode(t, b), decode(t, []byte(out))
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("jsonText(%q) = %q, which reads as %#v; want %#v", b, out, got, want)
		}
	})
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// FuzzVisible: a name or a text shown as Text holds no odd character, and
// reads back as the text it shows (each escape is the character's code).
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"payee_id", "x\u202ey", "\u2028\u2029\t\r", "a\U0001F600b", "\ufdd0\uffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var back strings.Builder
		for _, p := range visible(s) {
			for _, r := range p.S {
				if odd(r) {
					t.Fatalf("visible(%q) holds %U", s, r)
				}
			}
			if !p.Odd {
				back.WriteString(p.S)
				continue
			}
			u, err := strconv.Unquote(`"` + p.S + `"`)
			if err != nil {
				t.Fatalf("visible(%q): escape %q does not read back: %v", s, p.S, err)
			}
			back.WriteString(u)
		}
		if utf8.ValidString(s) && back.String() != s {
			t.Fatalf("visible(%q) reads back as %q", s, back.String())
		}
	})
}

// FuzzFormToken: no token but the one issued for the person, run and
// ticket is accepted, and none panics.
func FuzzFormToken(f *testing.F) {
	k := formKey{key: bytes.Repeat([]byte{7}, 32), maxAge: time.Hour, now: func() time.Time { return time.Unix(1e9, 0) }}
	id := Identity{Decider: "alice@acme"}
	good := k.issue(id, "run-1", "rgt1.x.y")
	f.Add(good)
	f.Add("rgf1.")
	f.Add(good[:len(good)-1] + "A")
	f.Fuzz(func(t *testing.T, token string) {
		if err := k.check(token, id, "run-1", "rgt1.x.y"); err == nil && token != good {
			t.Fatalf("check(%q) accepted a token that was not issued", token)
		}
	})
}
