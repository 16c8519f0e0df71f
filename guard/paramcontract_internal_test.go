package guard

import (
	"strings"
	"testing"
)

// FuzzEqualFoldBytes checks the param contract's allocation-free key match
// against strings.EqualFold, which encoding/json's field matching follows.
func FuzzEqualFoldBytes(f *testing.F) {
	// The ASCII bounds of case folding: A and Z fold, @ ([ before a) and [
	// ({ after z) do not; and bytes at utf8.RuneSelf.
	for _, p := range [][2]string{{"site_id", "Site_ID"}, {"k", "\u212a"}, {"s", "\u017f"}, {"", ""}, {"a", "ab"}, {"é", "É"},
		{"A", "a"}, {"a", "A"}, {"Z", "z"}, {"z", "Z"}, {"@", "`"}, {"`", "@"}, {"[", "{"}, {"{", "["}, {"\x80", "\x81"}, {"\x7f", "\x80"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, b, s string) {
		if got, want := equalFoldBytes([]byte(b), s), strings.EqualFold(b, s); got != want {
			t.Fatalf("equalFoldBytes(%q, %q) = %v; want %v", b, s, got, want)
		}
	})
}
