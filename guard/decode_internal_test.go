package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// decodeSeeds are documents of every kind decodeJSON meets: the fast path
// and each reason to hand a document to encoding/json.
var decodeSeeds = []struct{ reason, doc string }{
	{"a plain object", `{"query":"blog sites in eu-west","page":2}`},
	{"nesting, arrays, literals", ` {"a":[1,-2.5e3,true,false,null,{"b":[]}],"c":{}} `},
	{"repeated keys: the last wins", `{"a":1,"a":2}`},
	{"an escape in a string", `{"a":"x\"y\u00e9"}`},
	{"an escape in a key", `{"\u0061":1}`},
	{"invalid UTF-8 in a string", "{\"a\":\"\xff\"}"},
	{"valid UTF-8 in a string", `{"名":"北京"}`},
	{"a number out of range", `{"a":1e400}`},
	{"a tiny number", `{"a":1e-400}`},
	{"a bad number", `{"a":01}`},
	{"a bad fraction", `{"a":1.}`},
	{"a bad exponent", `{"a":1e}`},
	{"a control character in a string", "{\"a\":\"\x01\"}"},
	{"trailing data", `{} {}`},
	{"a trailing comma", `{"a":1,}`},
	{"a missing colon", `{"a" 1}`},
	{"an unterminated string", `{"a":"x`},
	{"a bare word", `{"a":nul}`},
	{"a scalar document", `"x"`},
	{"an array document", `[1,2]`},
	{"empty", ``},
	{"deep nesting past the fast path", strings.Repeat("[", maxFastDepth+2) + strings.Repeat("]", maxFastDepth+2)},
}

func TestDecodeJSON_AsEncodingJSON(t *testing.T) {
	for _, c := range decodeSeeds {
		checkDecode(t, c.reason, []byte(c.doc))
	}
}

// FuzzDecodeJSON checks that decodeJSON answers as json.Unmarshal into an
// any does, on arbitrary bytes: same value, same error text.
func FuzzDecodeJSON(f *testing.F) {
	for _, c := range decodeSeeds {
		f.Add([]byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, "fuzz", data) })
}

func checkDecode(t *testing.T, reason string, data []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(data, &want)
	got, text, err := decodeJSON(data)
	assert.Equal(t, string(data), text, "%s: decodeJSON(%q) text", reason, data)
	if wantErr != nil {
		if assert.Error(t, err, "%s: decodeJSON(%q) = %v, nil; want error %v", reason, data, got, wantErr) {
			assert.Equal(t, wantErr.Error(), err.Error(), "%s: decodeJSON(%q) error", reason, data)
		}
		return
	}
	if assert.NoError(t, err, "%s: decodeJSON(%q)", reason, data) {
		assert.Equal(t, want, got, "%s: decodeJSON(%q) value", reason, data)
	}
}
