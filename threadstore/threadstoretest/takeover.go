package threadstoretest

import (
	"errors"
	"testing"

	"github.com/reactguard/reactguard/threadstore"
)

// Holders are two handles on one shared thread store, as two processes see
// it, and End, which ends First's process the way a process that died
// would and returns once the store can see it.
type Holders struct {
	First, Second threadstore.Store
	End           func()
}

// RunTakeover runs the contract of a [threadstore.Store] that takes over
// the leases of dead drivers as subtests of t, each with new holders from
// open: a live lease is never taken; a dead driver's thread stays with its
// run, which alone takes it again (its resume); a dead driver's thread is
// freed by Release without a token; and a parked thread is not changed by
// its parker's death. Stores whose leases all live in one process
// ([threadstore.Memory]) do not run it.
func RunTakeover(t *testing.T, open func(t *testing.T) Holders) {
	t.Helper()
	n := nonce()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, h Holders, id string)
	}{
		{"LiveLeaseIsKept", liveLeaseIsKept},
		{"DeadLeaseGoesToItsRun", deadLeaseGoesToItsRun},
		{"DeadLeaseIsReleasedByRun", deadLeaseIsReleasedByRun},
		{"ParkedSurvivesItsParker", parkedSurvivesItsParker},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, open(t), "takeover/"+t.Name()+"/"+n)
		})
	}
}

func liveLeaseIsKept(t *testing.T, h Holders, id string) {
	acquire(t, h.First, id, "r1")
	busy(t, h.Second, id, "r1", "r1", "the same run from another process while the first lives")
	busy(t, h.Second, id, "r2", "r1", "another run from another process while the first lives")
	if err := h.Second.Release(bg, id, "r1", ""); !errors.Is(err, threadstore.ErrBusy) {
		t.Fatalf("Release without a token of a live lease from another process = %v; want ErrBusy", err)
	}
}

func deadLeaseGoesToItsRun(t *testing.T, h Holders, id string) {
	_, tok := acquire(t, h.First, id, "r1")
	h.End()
	busy(t, h.Second, id, "r2", "r1", "another run after the driver of r1 died (r1 may be resumed)")
	_, tok2 := acquire(t, h.Second, id, "r1")
	if tok2 == tok {
		t.Fatal("the takeover has the dead lease's token")
	}
	busy(t, h.Second, id, "r1", "r1", "r1 again while the takeover lives")
	must(t, h.Second.Commit(bg, id, tok2, turn(1, "r1"), nil))
}

func deadLeaseIsReleasedByRun(t *testing.T, h Holders, id string) {
	acquire(t, h.First, id, "r1")
	h.End()
	must(t, h.Second.Release(bg, id, "r1", ""))
	acquire(t, h.Second, id, "r2")
}

func parkedSurvivesItsParker(t *testing.T, h Holders, id string) {
	_, tok := acquire(t, h.First, id, "r1")
	must(t, h.First.Park(bg, id, tok))
	h.End()
	busy(t, h.Second, id, "r2", "r1", "another run while r1 waits, its parker gone")
	acquire(t, h.Second, id, "r1")
}
