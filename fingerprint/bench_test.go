package fingerprint_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reactguard/reactguard/fingerprint"
)

// argsOfSize returns a realistic arguments object (unsorted keys, nested
// objects, arrays, numbers, escapes) of about n bytes.
func argsOfSize(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"query": "sites in \"eu-west\"", "limit": 50, "items": [`)
	for i := 0; b.Len() < n-64; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"name": "site-%d", "id": %d, "tags": ["a", "b\u00e9"], "ok": true}`, i, i*7)
	}
	b.WriteString(`], "filter": {"z": null, "region": "eu"}}`)
	if !json.Valid([]byte(b.String())) {
		panic("invalid benchmark args")
	}
	return []byte(b.String())
}

func BenchmarkOf(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		args := argsOfSize(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fingerprint.Of("list_sites", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCanonical(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		args := argsOfSize(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			buf := make([]byte, 0, 2*len(args))
			for b.Loop() {
				var err error
				if buf, err = fingerprint.AppendCanonical(buf[:0], args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
