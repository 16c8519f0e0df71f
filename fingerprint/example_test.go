package fingerprint_test

import (
	"fmt"

	"github.com/reactguard/reactguard/fingerprint"
)

func ExampleCanonical() {
	out, err := fingerprint.Canonical([]byte(`{ "b": [1, 2.50, {"y": true, "x": null}], "a": "caf\u00e9 \/" }`))
	fmt.Println(string(out), err)
	// Output: {"a":"café /","b":[1,2.5,{"x":null,"y":true}]} <nil>
}

func ExampleOf() {
	a, _ := fingerprint.Of("create_site", []byte(`{"name": "shop", "region": "eu"}`))
	b, _ := fingerprint.Of("create_site", []byte(`{"region":"eu","name":"shop"}`))
	c, _ := fingerprint.Of("delete_site", []byte(`{"region":"eu","name":"shop"}`))
	fmt.Println(a == b, a == c, len(a))
	_, err := fingerprint.Of("create_site", []byte(`{"name":`))
	fmt.Println(err)
	// Output:
	// true false 32
	// fingerprint: invalid JSON at offset 8: expected a JSON value, found the end of the input
}
