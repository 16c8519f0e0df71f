package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// SettledByRuns checks what a durable store promises of a resume claim
// settled by its own run store: the save or delete of the claimed run
// (Runs.Save, Runs.Delete) settles the claim in the same statement, and a
// Release after it (a loop that gives the resume up once its run is
// stored) leaves the claim settled: the snapshot is never claimed again,
// by this store or by another process. A release that deleted the
// settled claim would let a stale copy of the snapshot resume the run a
// second time. s's Claims and Runs must be one store's.
func SettledByRuns(t *testing.T, s Stores) {
	t.Helper()
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		end  func(run string) error
	}{
		{"saved", func(run string) error {
			return s.Runs.Save(ctx, runstore.Run{ID: run, Kind: runstore.Approval, Snapshot: []byte(`{"next":true}`), Stopped: time.Now()})
		}},
		{"deleted", func(run string) error { return s.Runs.Delete(ctx, run) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := "settled-by-runs/" + tt.name + "/" + t.Name()
			if ok, err := s.Claims.Claim(ctx, run, "s1"); err != nil || !ok {
				t.Fatalf("Claim = %v, %v; want the free snapshot claimed", ok, err)
			}
			if err := tt.end(run); err != nil {
				t.Fatalf("the run %s under the claim = %v", tt.name, err)
			}
			if err := s.Claims.Release(ctx, run, "s1"); err != nil {
				t.Fatalf("Release after the run was %s = %v", tt.name, err)
			}
			if ok, err := s.Claims.Claim(ctx, run, "s1"); err != nil || ok {
				t.Fatalf("Claim after the run was %s and the claim released = %v, %v; want false: the claim stays settled", tt.name, ok, err)
			}
			if err := s.Claims.Settle(ctx, run, "s1"); err != nil {
				t.Fatalf("Settle of the settled claim = %v; want nil", err)
			}
		})
	}
}
