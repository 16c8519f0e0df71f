package tool

import (
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/internal/fastschema"
)

type decodeInner struct {
	X int    `json:"x"`
	Y string `json:"y,omitempty"`
}

type decodeIn struct {
	Q  string            `json:"q"`
	N  int               `json:"n,omitempty"`
	F  float64           `json:"f,omitempty"`
	B  bool              `json:"b,omitempty"`
	P  *string           `json:"p,omitempty"`
	L  []string          `json:"l,omitempty"`
	M  map[string]int    `json:"m,omitempty"`
	S  decodeInner       `json:"s,omitzero"`
	SL []decodeInner     `json:"sl,omitempty"`
	A  any               `json:"a,omitempty"`
	U  uint8             `json:"u,omitempty"`
	MM map[string][]bool `json:"mm,omitempty"`
}

// FuzzDecodeSame: a typed tool decodes arguments its schema surely accepts
// with json.Unmarshal instead of a strict decoder; both must give the same
// value, and fail together.
func FuzzDecodeSame(f *testing.F) {
	for _, s := range []string{
		`{"q":"a"}`, `{"q":"a","n":1,"f":1.5,"b":true,"p":null,"l":["x"],"m":{"k":2},"s":{"x":1},"sl":[{"x":2,"y":"z"}],"a":{"any":[1]},"u":255,"mm":{"k":[true]}}`,
		`{"q":"a","u":256}`, `{"q":"a","n":1.0}`, `{"q":"a","n":1e3}`, `{"Q":"case"}`, `{"q":"a","zz":1}`, `{"q":"a"} {}`,
		`{"q":"\u00e9\ud800"}`, `{"q":"a","q":"b"}`, `{"q":"a","s":{"x":1,"z":2}}`, ` `, `{"q":"a","n":-0}`, `{"q":"a","f":1e308}`,
	} {
		f.Add([]byte(s))
	}
	schema, err := jsonschema.For[decodeIn](nil)
	if err != nil {
		f.Fatal(err)
	}
	fast, ok := fastschema.Compile(schema)
	if !ok {
		f.Fatal("the schema of decodeIn is not compiled")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var viaFast, strict decodeIn
		errFast := decodeArgs(fast, data, &viaFast)
		errStrict := decodeArgs(nil, data, &strict)
		if (errFast == nil) != (errStrict == nil) {
			t.Fatalf("decode(%q): fast path error %v, strict error %v", data, errFast, errStrict)
		}
		if errFast == nil && !reflect.DeepEqual(viaFast, strict) {
			t.Fatalf("decode(%q): fast path %+v, strict %+v", data, viaFast, strict)
		}
	})
}
