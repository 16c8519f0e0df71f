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
	n := nonce()
	for _, c := range claimsCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newClaims(), "run/"+t.Name()+"/"+n)
		})
	}
}

var claimsCases = []claimsCase{
	{"ClaimOnce", claimOnce},
	{"ReleaseFrees", releaseFrees},
	{"ReleaseUnclaimedIsNoOp", releaseUnclaimed},
	{"IdsAreIsolated", claimIdsAreIsolated},
	{"ClaimIsAtomic", claimIsAtomic},
	{"SettledIsFinal", settledIsFinal},
	{"SettleIsIdempotent", settleIsIdempotent},
	{"ReleaseOfSettledIsNoOp", releaseOfSettled},
	{"SettleUnclaimed", settleUnclaimed},
	{"SettleIdsAreIsolated", settleIdsAreIsolated},
	{"SettleRacingClaims", settleRacingClaims},
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

func settledIsFinal(t *testing.T, c runstore.Claims, run string) {
	ok, err := c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatal("Claim(s1) = false; want true")
	}
	must(t, c.Settle(bg, run, "s1"))
	for i := range 2 {
		ok, err = c.Claim(bg, run, "s1")
		must(t, err)
		if ok {
			t.Fatalf("Claim(s1) #%d after Settle = true; want false (a settled claim is final)", i+1)
		}
	}
}

func settleIsIdempotent(t *testing.T, c runstore.Claims, run string) {
	ok, err := c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatal("Claim(s1) = false; want true")
	}
	for i := range 3 {
		if err := c.Settle(bg, run, "s1"); err != nil {
			t.Fatalf("Settle(s1) #%d = %v; want nil (settling again is a no-op)", i+1, err)
		}
	}
	ok, err = c.Claim(bg, run, "s1")
	must(t, err)
	if ok {
		t.Fatal("Claim(s1) after three Settles = true; want false")
	}
}

func releaseOfSettled(t *testing.T, c runstore.Claims, run string) {
	ok, err := c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatal("Claim(s1) = false; want true")
	}
	must(t, c.Settle(bg, run, "s1"))
	if err := c.Release(bg, run, "s1"); err != nil {
		t.Fatalf("Release of a settled claim = %v; want nil (a no-op)", err)
	}
	ok, err = c.Claim(bg, run, "s1")
	must(t, err)
	if ok {
		t.Fatal("Claim(s1) after Settle and Release = true; want false (Release does nothing to a settled claim)")
	}
}

func settleUnclaimed(t *testing.T, c runstore.Claims, run string) {
	must(t, c.Settle(bg, run, "never-claimed"))
	ok, err := c.Claim(bg, run, "never-claimed")
	must(t, err)
	if ok {
		t.Fatal("Claim of an id settled without a claim = true; want false (settling records the id as settled)")
	}
}

func settleIdsAreIsolated(t *testing.T, c runstore.Claims, run string) {
	must(t, c.Settle(bg, run, "s1"))
	for _, tt := range []struct{ run, id, why string }{
		{run, "s2", "another snapshot of the same run"},
		{run + "/other", "s1", "the same snapshot id in another run"},
	} {
		ok, err := c.Claim(bg, tt.run, tt.id)
		must(t, err)
		if !ok {
			t.Fatalf("Claim(%q, %q) after settling s1 = false; want true (%s)", tt.run, tt.id, tt.why)
		}
	}
}

// settleRacingClaims settles a claim while many claims of the same id
// race it: no claim succeeds, whichever order they run in.
func settleRacingClaims(t *testing.T, c runstore.Claims, run string) {
	ok, err := c.Claim(bg, run, "s1")
	must(t, err)
	if !ok {
		t.Fatal("Claim(s1) = false; want true")
	}
	var won atomic.Int32
	parallel(t, func(i int) error {
		if i == 0 {
			return c.Settle(bg, run, "s1")
		}
		ok, err := c.Claim(bg, run, "s1")
		if ok {
			won.Add(1)
		}
		return err
	})
	if n := won.Load(); n != 0 {
		t.Fatalf("%d claims of a held claim racing its Settle succeeded; want 0", n)
	}
}
