package runstoretest

import (
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/runstore"
)

type claimsCase struct {
	name string
	run  func(t *testing.T, c runstore.Claims, run string)
}

// RunClaims runs the [runstore.Claims] contract tests as subtests of t, each
// with a store from newClaims.
func RunClaims(t *testing.T, newClaims func() runstore.Claims) {
	t.Helper()
	for _, c := range claimsCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newClaims(), "run/"+t.Name())
		})
	}
}

var claimsCases = []claimsCase{
	{"ClaimOnce", claimOnce},
	{"ReleaseFrees", releaseFrees},
	{"ReleaseUnclaimedIsNoOp", releaseUnclaimed},
	{"IdsAreIsolated", claimIdsAreIsolated},
	{"ClaimIsAtomic", claimIsAtomic},
}

func claimOnce(t *testing.T, c runstore.Claims, run string) {
	ok, err := c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatalf("Claim(%q, s1) = false; want true for a fresh id", run)
	}
	for i := range 2 {
		ok, err = c.Claim(bg, run, "s1")
		must(t, err)
		if ok {
			t.Fatalf("Claim(%q, s1) #%d after it was claimed = true; want false (a snapshot is resumed once)", run, i+2)
		}
	}
}

func releaseFrees(t *testing.T, c runstore.Claims, run string) {
	ok, err := c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatal("Claim(s1) = false; want true")
	}
	must(t, c.Release(bg, run, "s1"))
	ok, err = c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatal("Claim(s1) after Release = false; want true (a released snapshot may be resumed again)")
	}
}

func releaseUnclaimed(t *testing.T, c runstore.Claims, run string) {
	must(t, c.Release(bg, run, "never-claimed"))
	ok, err := c.Claim(bg, run, "never-claimed")
	must(t, err)
	if !ok {
		t.Fatal("Claim after releasing an unclaimed id = false; want true")
	}
}

func claimIdsAreIsolated(t *testing.T, c runstore.Claims, run string) {
	ok, err := c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatal("Claim(s1) = false; want true")
	}
	for _, tt := range []struct{ run, id, why string }{
		{run, "s2", "another snapshot of the same run"},
		{run + "/other", "s1", "the same snapshot id in another run"},
	} {
		ok, err := c.Claim(bg, tt.run, tt.id)
		must(t, err)
		if !ok {
			t.Fatalf("Claim(%q, %q) = false; want true (%s)", tt.run, tt.id, tt.why)
		}
	}
}

func claimIsAtomic(t *testing.T, c runstore.Claims, run string) {
	var won atomic.Int32
	parallel(t, func(int) error {
		ok, err := c.Claim(bg, run, "s1")
		if ok {
			won.Add(1)
		}
		return err
	})
	if n := won.Load(); n != 1 {
		t.Fatalf("%d concurrent Claim(s1) calls: %d succeeded; want exactly 1", Concurrency, n)
	}
}
