// Package runstoretest checks that implementations keep the contracts of
// [runstore.Claims], [runstore.Store] and [runstore.Audit]. Run it from a test of the
// implementation:
//
//	func TestClaims(t *testing.T) {
//		runstoretest.RunClaims(t, func() runstore.Claims { return mystore.Claims() })
//	}
//
//	func TestRuns(t *testing.T) {
//		runstoretest.RunStore(t, func() runstore.Store { return mystore.Runs() })
//	}
//
//	func TestAudit(t *testing.T) {
//		runstoretest.RunAudit(t, func() runstore.Audit { return mystore.Audit() })
//	}
//
// A store that takes over the claims of dead resumes (see
// [runstore.Claims.Claim]) runs [RunTakeover] too, with two handles on one
// shared store, the first of which it can end as a process that died:
//
//	func TestTakeover(t *testing.T) {
//		runstoretest.RunTakeover(t, func(t *testing.T) runstoretest.Holders {
//			a, b := mystore.Open(t), mystore.Open(t)
//			return runstoretest.Holders{First: a.Claims(), Second: b.Claims(), End: a.Close}
//		})
//	}
//
// # Isolation
//
// Each subtest gets a store from the factory and uses run ids, node names
// and snapshot ids derived from its own name (the claim suites add a random
// part per call, since a settled claim is never free again), and stop
// times of its own (the Expire case uses times before 2000), so a store
// shared between subtests, or kept between runs of the suite, passes too,
// as long as nothing else writes those ids or that node.
//
// # Concurrency
//
// The atomicity cases start Concurrency goroutines and join all of them
// before they return.
package runstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
)

// Concurrency is how many goroutines the atomicity cases start.
const Concurrency = 64

// parallel runs f from Concurrency goroutines and joins them.
func parallel(t *testing.T, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, Concurrency)
	for i := range Concurrency {
		wg.Go(func() {
			if err := f(i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var bg = context.Background()

// nonce returns a random text that makes the run ids of one call of a
// suite its own: a claim, once settled, is never free again, so a store
// kept between runs of the suite would otherwise refuse the ids of the
// run before.
func nonce() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
