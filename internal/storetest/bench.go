package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

type siteInput struct {
	ID string `json:"id"`
}

// chain returns the default guard chain over stores, as react.New builds
// it (the evidence ledger read through an evidence.Cache), with a read
// tool get_site and a write tool update_site, and the two tools.
func chain(tb testing.TB, s Stores) (invoker.Handler, *tool.Tool, *tool.Tool) {
	tb.Helper()
	read, write := siteTools()
	if _, err := tool.NewCatalog(read, write); err != nil {
		tb.Fatal(err)
	}
	opts := &guard.Options{Ledger: evidence.NewCache(s.Ledger), Approvals: s.Approvals, WriteLedger: s.WriteLedger}
	return invoker.Chain(invoker.New(nil), guard.Default(opts)...), read, write
}

// siteTools returns the read tool get_site and the write tool update_site.
func siteTools() (read, write *tool.Tool) {
	read = tool.New("get_site", "Get a site.", func(_ context.Context, in siteInput) (map[string]string, error) {
		return map[string]string{"id": in.ID, "name": "Spring Sale"}, nil
	})
	read.Effect = tool.Read
	write = tool.New("update_site", "Update a site.", func(_ context.Context, in siteInput) (map[string]string, error) {
		return map[string]string{"id": in.ID, "updated": "true"}, nil
	})
	write.Effect = tool.Write
	return read, write
}

// guardedRead sends call i of the read tool through h.
func guardedRead(tb testing.TB, h invoker.Handler, read *tool.Tool, run string, i int) {
	id := strconv.Itoa(i)
	obs, err := h(context.Background(), invoker.Call{ID: "c" + id, Name: read.Name, Tool: read, Args: json.RawMessage(`{"id":"` + id + `"}`), Run: run, Round: 1})
	if err != nil || obs.Outcome() != outcome.Success {
		tb.Fatalf("guarded read = %v, %v; want SUCCESS", obs, err)
	}
}

// gateAndApprove sends call i of the write tool through h, which defers it
// for approval, and approves it.
func gateAndApprove(tb testing.TB, h invoker.Handler, s Stores, write *tool.Tool, run string, i int) invoker.Call {
	ctx := context.Background()
	id := strconv.Itoa(i)
	args := json.RawMessage(`{"id":"` + id + `"}`)
	call := invoker.Call{ID: "c" + id, Name: write.Name, Tool: write, Args: args, Run: run, Round: 1}
	obs, err := h(ctx, call)
	if err != nil || obs.Code() != errcode.ApprovalRequired {
		tb.Fatalf("unapproved write = %v, %v; want DEFERRED APPROVAL_REQUIRED", obs, err)
	}
	fp, err := fingerprint.Of(write.Name, args)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Approvals.Approve(ctx, run, call.ID, fp); err != nil {
		tb.Fatal(err)
	}
	return call
}

// approvedWrite sends an approved write call through h.
func approvedWrite(tb testing.TB, h invoker.Handler, call invoker.Call) {
	obs, err := h(context.Background(), call)
	if err != nil || obs.Outcome() != outcome.Success {
		tb.Fatalf("approved write = %v, %v; want SUCCESS", obs, err)
	}
}

// BenchGuardedRead measures one call of a read tool through the default
// guard chain with the stores, as a loop runs it: the fingerprint guard's
// lookup (answered by the evidence cache, which loads the run at its first
// read, before the timer) and the evidence guard's record. roundTrips,
// when set, returns the store's statements so far; the benchmark reports
// them per call.
func BenchGuardedRead(b *testing.B, s Stores, roundTrips func() int64) {
	h, read, _ := chain(b, s)
	run := "bench-read-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	guardedRead(b, h, read, run, -1) // the run's first read loads its evidence
	var start int64
	if roundTrips != nil {
		start = roundTrips()
	}
	b.ResetTimer()
	for i := range b.N {
		guardedRead(b, h, read, run, i)
	}
	b.StopTimer()
	if roundTrips != nil {
		b.ReportMetric(float64(roundTrips()-start)/float64(b.N), "roundtrips/call")
	}
}

// BenchApprovedWrite measures one call of a write tool that the user
// approved, through the default guard chain with the stores: the claim
// in the write ledger with the approval consumed, the execution recorded
// as evidence and in the ledger. Gating and approving the call are done
// outside the timer.
func BenchApprovedWrite(b *testing.B, s Stores, roundTrips func() int64) {
	h, _, write := chain(b, s)
	run := "bench-write-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var trips int64
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		call := gateAndApprove(b, h, s, write, run, i)
		var before int64
		if roundTrips != nil {
			before = roundTrips()
		}
		b.StartTimer()
		approvedWrite(b, h, call)
		b.StopTimer()
		if roundTrips != nil {
			trips += roundTrips() - before
		}
	}
	if roundTrips != nil {
		b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/call")
	}
}

// RoundTrips returns the store statements (counted by roundTrips) of a
// guarded read, of an approved write, and of loading a run's evidence (a
// run's first read), through the default guard chain as a loop builds
// it.
func RoundTrips(tb testing.TB, s Stores, roundTrips func() int64) (read, write, load int64) {
	h, readTool, writeTool := chain(tb, s)
	run := "round-trips-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	n := roundTrips()
	guardedRead(tb, h, readTool, run, 0)
	first := roundTrips() - n
	n = roundTrips()
	guardedRead(tb, h, readTool, run, 1)
	read = roundTrips() - n
	call := gateAndApprove(tb, h, s, writeTool, run, 2)
	n = roundTrips()
	approvedWrite(tb, h, call)
	write = roundTrips() - n
	return read, write, first - read
}

// ReportLoad reports the p50 and p99 latency of the guarded calls of the
// load reports, in milliseconds, and their number.
func ReportLoad(b *testing.B, reports []LoadReport) {
	var all []int64
	for _, r := range reports {
		all = append(all, r.Durations...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		b.Fatal("no guarded calls measured")
	}
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms/call")
	b.ReportMetric(q(0.99), "p99-ms/call")
	b.ReportMetric(float64(len(all)), "calls")
}
