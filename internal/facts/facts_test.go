package facts_test

import (
	"bytes"
	"testing"

	"github.com/reactguard/reactguard/internal/facts"
)

// Facts of different kinds or parts never share a hash: the parts are
// length-prefixed, so ("ab", "c") and ("a", "bc") differ.
func TestFactsAreDistinct(t *testing.T) {
	all := [][]byte{
		facts.Tool("list"), facts.Any("list"),
		facts.Value("list", "sites.id", "s-1"), facts.Value("list", "sites", ".id s-1"),
		facts.Value("ab", "c", ""), facts.Value("a", "bc", ""),
	}
	for i := range all {
		if len(all[i]) != facts.Size {
			t.Fatalf("fact %d has %d bytes; want %d", i, len(all[i]), facts.Size)
		}
		for j := range i {
			if bytes.Equal(all[i], all[j]) {
				t.Fatalf("facts %d and %d share a hash", i, j)
			}
		}
	}
}

// Of gives the facts evidence.Memory indexes: the tool, each leaf under
// its path, each text and word at any path; none for a payload that is
// not JSON.
func TestOf(t *testing.T) {
	got := facts.Of("list", []byte(`{"sites":[{"id":"s-1","name":"my blog"}]}`))
	for _, want := range [][]byte{
		facts.Tool("list"), facts.Value("list", "sites.id", "s-1"), facts.Value("list", "sites.name", "my blog"),
		facts.Any("s-1"), facts.Any("my blog"), facts.Any("blog"),
	} {
		found := false
		for _, g := range got {
			found = found || bytes.Equal(g, want)
		}
		if !found {
			t.Errorf("Of(list, payload) lacks a fact %x", want)
		}
	}
}
