package printkey

import (
	"encoding/hex"
	"strings"
	"testing"
)

const fp = "0123456789abcdef0123456789abcdef"

func TestParse(t *testing.T) {
	tests := []struct {
		fp  string
		ok  bool
		why string
	}{
		{fp, true, "fingerprint.Of's form"},
		{"ffffffffffffffffffffffffffffffff", true, "all f"},
		{strings.ToUpper(fp), false, "upper case is another fingerprint, not the same key"},
		{fp[:31], false, "short"},
		{fp + "0", false, "long"},
		{fp[:31] + "g", false, "not hex"},
		{fp[:30] + "é", false, "not ASCII"},
		{"", false, "empty"},
	}
	for _, tt := range tests {
		k, ok := Parse(tt.fp)
		if ok != tt.ok {
			t.Errorf("%s: Parse(%q) ok = %v; want %v", tt.why, tt.fp, ok, tt.ok)
		}
		if ok && hex.EncodeToString(k[:]) != tt.fp {
			t.Errorf("%s: Parse(%q) = %x", tt.why, tt.fp, k)
		}
	}
}

func TestSet(t *testing.T) {
	s := NewSet(8)
	steps := []struct {
		fp    string
		added bool
		why   string
	}{
		{fp, true, "a new key"},
		{fp, false, "the same key again"},
		{strings.ToUpper(fp), true, "its upper case is another fingerprint"},
		{strings.ToUpper(fp), false, "and is kept as one"},
		{"host-7", true, "a host's own fingerprint"},
		{"host-7", false, "again"},
		{"ffffffffffffffffffffffffffffffff", true, "another key"},
	}
	for _, st := range steps {
		if got := s.Add(st.fp); got != st.added {
			t.Errorf("%s: Add(%q) = %v; want %v", st.why, st.fp, got, st.added)
		}
		if !s.Has(st.fp) {
			t.Errorf("%s: Has(%q) = false after Add", st.why, st.fp)
		}
	}
	if s.Len() != 4 {
		t.Errorf("Len = %d; want 4", s.Len())
	}
	for _, absent := range []string{"fedcba98765432100123456789abcdef", "host-8", ""} {
		if s.Has(absent) {
			t.Errorf("Has(%q) = true; never added", absent)
		}
	}
	var zero Set
	if zero.Has(fp) || zero.Has("x") || zero.Len() != 0 {
		t.Error("the zero Set is not empty")
	}
	if !zero.Add("x") || !zero.Has("x") {
		t.Error("the zero Set does not take a fingerprint")
	}
}

// FuzzParse holds Parse to hex: a string has a key exactly when it is 32
// lower-case hex digits, and the key is what they spell.
func TestDigests(t *testing.T) {
	d := NewDigests(8)
	steps := []struct {
		fp      string
		digest  uint64
		changed bool
		why     string
	}{
		{fp, 1, true, "a new key"},
		{fp, 1, false, "the same key, the same digest"},
		{fp, 2, true, "the same key, another digest"},
		{fp, 2, false, "and it is kept"},
		{strings.ToUpper(fp), 2, true, "its upper case is another fingerprint"},
		{"host-7", 0, true, "a host's own fingerprint, digest 0"},
		{"host-7", 0, false, "again"},
		{"host-7", 5, true, "another digest"},
	}
	for _, st := range steps {
		if got := d.Swap(st.fp, st.digest); got != st.changed {
			t.Errorf("%s: Swap(%q, %d) = %v; want %v", st.why, st.fp, st.digest, got, st.changed)
		}
	}
	if d.Len() != 3 {
		t.Errorf("Len = %d; want 3", d.Len())
	}
	d.Clear()
	if d.Len() != 0 {
		t.Errorf("Len after Clear = %d; want 0", d.Len())
	}
	if !d.Swap(fp, 2) || !d.Swap("host-7", 5) {
		t.Error("after Clear every fingerprint is new again")
	}
	var zero Digests
	if zero.Len() != 0 || !zero.Swap("x", 0) || zero.Swap("x", 0) {
		t.Error("the zero Digests does not work")
	}
	zero.Clear()
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{fp, strings.ToUpper(fp), fp[:31], "", fp[:31] + "G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := Parse(s)
		want := len(s) == 32 && strings.Trim(s, "0123456789abcdef") == ""
		if ok != want {
			t.Fatalf("Parse(%q) ok = %v; want %v", s, ok, want)
		}
		if ok && hex.EncodeToString(k[:]) != s {
			t.Fatalf("Parse(%q) = %x", s, k)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, ok := Parse(fp); !ok {
			b.Fatal("not parsed")
		}
	}
}
