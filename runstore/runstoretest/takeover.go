package runstoretest

import (
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/runstore"
)

// Holders are two handles on one shared claim store, as two processes see
// it: First and Second each hold their own claims (each is its own owner),
// and End ends First's owner the way a process that died would, and
// returns once the store can see it (for the stores of this repository,
// closing the store does it: the PostgreSQL session or the flock'd file
// that proves the owner alive goes away; the server ends a closed session
// a moment later, so End waits for that).
type Holders struct {
	First, Second runstore.Claims
	End           func()
}

type takeoverCase struct {
	name string
	run  func(t *testing.T, h Holders, run string)
}

// RunTakeover runs the contract of a [runstore.Claims] that takes over the
// claims of dead resumes (see [runstore.Claims.Claim]) as subtests of t,
// each with new holders from open: a live holder's claim is never taken,
// a dead holder's claim that was taken and never settled is taken exactly
// once, a settled claim never, and a store releases only its own claims.
// Stores that never take over ([runstore.MemoryClaims]) do not run it.
func RunTakeover(t *testing.T, open func(t *testing.T) Holders) {
	t.Helper()
	n := nonce()
	for _, c := range takeoverCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, open(t), "run/"+t.Name()+"/"+n)
		})
	}
}

var takeoverCases = []takeoverCase{
	{"LiveHolderIsKept", liveHolderIsKept},
	{"DeadHolderIsTakenOverOnce", deadHolderIsTakenOverOnce},
	{"SettledClaimOfDeadHolderIsKept", settledOfDeadIsKept},
	{"ReleaseOfAnotherHoldersClaimIsNoOp", releaseOfAnothersClaim},
	{"TakenOverClaimSettles", takenOverClaimSettles},
}

func claim(t *testing.T, c runstore.Claims, run, id string) bool {
	t.Helper()
	ok, err := c.Claim(bg, run, id)
	must(t, err)
	return ok
}

func liveHolderIsKept(t *testing.T, h Holders, run string) {
	if !claim(t, h.First, run, "s1") {
		t.Fatal("First.Claim(s1) = false; want true")
	}
	for i := range 3 {
		if claim(t, h.Second, run, "s1") {
			t.Fatalf("Second.Claim(s1) #%d while First lives = true; want false (a live holder's claim is never taken)", i+1)
		}
	}
	if claim(t, h.First, run, "s1") {
		t.Fatal("First.Claim(s1) again = true; want false (its own claim is taken too)")
	}
}

func deadHolderIsTakenOverOnce(t *testing.T, h Holders, run string) {
	if !claim(t, h.First, run, "s1") {
		t.Fatal("First.Claim(s1) = false; want true")
	}
	h.End()
	var won atomic.Int32
	parallel(t, func(int) error {
		ok, err := h.Second.Claim(bg, run, "s1")
		if ok {
			won.Add(1)
		}
		return err
	})
	if n := won.Load(); n != 1 {
		t.Fatalf("%d concurrent claims of a dead holder's claim: %d succeeded; want exactly 1 (the takeover)", Concurrency, n)
	}
	if claim(t, h.Second, run, "s1") {
		t.Fatal("Claim(s1) after the takeover = true; want false (the new holder lives)")
	}
}

func settledOfDeadIsKept(t *testing.T, h Holders, run string) {
	if !claim(t, h.First, run, "s1") {
		t.Fatal("First.Claim(s1) = false; want true")
	}
	must(t, h.First.Settle(bg, run, "s1"))
	h.End()
	if claim(t, h.Second, run, "s1") {
		t.Fatal("Second.Claim(s1) of a settled claim whose holder died = true; want false (a settled claim is final)")
	}
}

func releaseOfAnothersClaim(t *testing.T, h Holders, run string) {
	if !claim(t, h.First, run, "s1") {
		t.Fatal("First.Claim(s1) = false; want true")
	}
	must(t, h.Second.Release(bg, run, "s1"))
	if claim(t, h.Second, run, "s1") {
		t.Fatal("Second.Claim(s1) after Second released First's claim = true; want false (a store releases only its own claims)")
	}
	must(t, h.First.Release(bg, run, "s1"))
	if !claim(t, h.Second, run, "s1") {
		t.Fatal("Second.Claim(s1) after First released it = false; want true")
	}
}

func takenOverClaimSettles(t *testing.T, h Holders, run string) {
	if !claim(t, h.First, run, "s1") {
		t.Fatal("First.Claim(s1) = false; want true")
	}
	h.End()
	if !claim(t, h.Second, run, "s1") {
		t.Fatal("Second.Claim(s1) of a dead holder's claim = false; want true")
	}
	must(t, h.Second.Settle(bg, run, "s1"))
	must(t, h.Second.Release(bg, run, "s1"))
	if claim(t, h.Second, run, "s1") {
		t.Fatal("Claim(s1) after the takeover settled = true; want false")
	}
}
