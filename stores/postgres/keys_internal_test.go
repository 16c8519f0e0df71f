package postgres

import "testing"

// keys forgets a key once no Begin uses it and no claim of this process
// holds it (a long-lived Store sees unboundedly many keys), and never while
// another Begin of the key still uses its lock.
func TestKeys_ForgetsReleasedKeys(t *testing.T) {
	var ks keys
	for i := range 3 {
		a := ks.acquire("k")
		b := ks.acquire("k")
		if a != b {
			t.Fatalf("round %d: two Begins of one key got two locks", i)
		}
		ks.release("k", a)
		if ks.m["k"] != b {
			t.Fatalf("round %d: the key was forgotten while a Begin still used it", i)
		}
		ks.release("k", b)
		if len(ks.m) != 0 {
			t.Fatalf("round %d: %d keys kept after every Begin released them; want 0", i, len(ks.m))
		}
	}
	h := ks.acquire("held")
	h.held, h.token = true, 7
	ks.release("held", h)
	if ks.m["held"] != h {
		t.Fatal("a key whose claim this process holds was forgotten")
	}
}
