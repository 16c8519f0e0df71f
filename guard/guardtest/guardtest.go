// Package guardtest checks that store implementations keep the contracts of
// [guard.Approvals] and [guard.WriteLedger]. Run it from a test of the
// implementation:
//
//	func TestApprovals(t *testing.T) {
//		guardtest.RunApprovals(t, func() guard.Approvals { return mystore.NewApprovals() })
//	}
//
//	func TestWriteLedger(t *testing.T) {
//		guardtest.RunWriteLedger(t, func() guard.WriteLedger { return mystore.NewWriteLedger() })
//	}
//
// # Isolation
//
// Each subtest gets a fresh store from the factory and uses run ids and
// idempotency keys derived from its own name, so a store shared between
// subtests passes too, as long as nothing else writes those ids.
//
// # Concurrency
//
// The atomicity cases start goroutines and join all of them before they
// return.
package guardtest

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
)

// Concurrency is how many goroutines the atomicity cases start.
const Concurrency = 64

type approvalsCase struct {
	name string
	run  func(t *testing.T, a guard.Approvals, run string)
}

// RunApprovals runs the [guard.Approvals] contract tests as subtests of t,
// each with a store from newStore.
func RunApprovals(t *testing.T, newStore func() guard.Approvals) {
	t.Helper()
	for _, c := range approvalsCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newStore(), "run/"+t.Name())
		})
	}
}

var approvalsCases = []approvalsCase{
	{"NothingGatedInitially", nothingGatedInitially},
	{"GateRecordsAndReplaces", gateRecordsAndReplaces},
	{"GateCopiesArgs", gateCopiesArgs},
	{"ApproveGrantsOneExecution", approveGrantsOneExecution},
	{"ApprovalBindsToFingerprint", approvalBindsToFingerprint},
	{"DeclineGrantsNothing", declineGrantsNothing},
	{"RunsAreIsolated", approvalRunsAreIsolated},
	{"ConsumeIsAtomic", consumeIsAtomic},
}

func nothingGatedInitially(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	c, ok, err := a.Gated(ctx, run)
	must(t, err)
	if ok {
		t.Fatalf("Gated(%q) = %+v, true; want false for a fresh run", run, c)
	}
	ok, err = a.Consume(ctx, run, "fp")
	must(t, err)
	if ok {
		t.Fatalf("Consume(%q, fp) = true; want false without an approval", run)
	}
}

func gateRecordsAndReplaces(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	first := guard.GatedCall{CallID: "c1", Tool: "create_site", Args: json.RawMessage(`{"name":"a"}`), Fingerprint: "fp1", Round: 1}
	second := guard.GatedCall{CallID: "c2", Tool: "delete_site", Args: json.RawMessage(`{"id":7}`), Fingerprint: "fp2", Round: 2}
	must(t, a.Gate(ctx, run, first))
	got, ok, err := a.Gated(ctx, run)
	must(t, err)
	if !ok || !sameCall(got, first) {
		t.Fatalf("Gated after Gate(%+v) = %+v, %v; want the gated call", first, got, ok)
	}
	must(t, a.Gate(ctx, run, second))
	got, ok, err = a.Gated(ctx, run)
	must(t, err)
	if !ok || !sameCall(got, second) {
		t.Fatalf("Gated after a second Gate = %+v, %v; want %+v (the later call replaces the earlier)", got, ok, second)
	}
}

func gateCopiesArgs(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	args := []byte(`{"name":"a"}`)
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: "c1", Tool: "w", Args: args, Fingerprint: "fp"}))
	copy(args, `{"name":"b"}`)
	got, _, err := a.Gated(ctx, run)
	must(t, err)
	if string(got.Args) != `{"name":"a"}` {
		t.Fatalf("Gated().Args = %s after the caller changed its slice; want {\"name\":\"a\"} (the store must not alias)", got.Args)
	}
}

func approveGrantsOneExecution(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	must(t, a.Approve(ctx, run, "fp"))
	if c, ok, err := a.Gated(ctx, run); err != nil || ok {
		t.Fatalf("Gated after Approve = %+v, %v, %v; want nothing waiting", c, ok, err)
	}
	ok, err := a.Consume(ctx, run, "fp")
	must(t, err)
	if !ok {
		t.Fatal("Consume(fp) after Approve(fp) = false; want true")
	}
	ok, err = a.Consume(ctx, run, "fp")
	must(t, err)
	if ok {
		t.Fatal("second Consume(fp) = true; want false (an approval is consumed by one execution)")
	}
}

func approvalBindsToFingerprint(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	must(t, a.Approve(ctx, run, "fp-a"))
	ok, err := a.Consume(ctx, run, "fp-b")
	must(t, err)
	if ok {
		t.Fatal("Consume(fp-b) after Approve(fp-a) = true; want false (an approval binds to one call)")
	}
	ok, err = a.Consume(ctx, run, "fp-a")
	must(t, err)
	if !ok {
		t.Fatal("Consume(fp-a) = false; want true (consuming another fingerprint must not use it up)")
	}
}

func declineGrantsNothing(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	must(t, a.Decline(ctx, run))
	if c, ok, err := a.Gated(ctx, run); err != nil || ok {
		t.Fatalf("Gated after Decline = %+v, %v, %v; want nothing waiting", c, ok, err)
	}
	ok, err := a.Consume(ctx, run, "fp")
	must(t, err)
	if ok {
		t.Fatal("Consume after Decline = true; want false")
	}
}

func approvalRunsAreIsolated(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	other := run + "/other"
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	must(t, a.Approve(ctx, run, "fp"))
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: "c2", Tool: "w", Fingerprint: "fp2"}))
	if c, ok, err := a.Gated(ctx, other); err != nil || ok {
		t.Fatalf("Gated(other run) = %+v, %v, %v; want nothing", c, ok, err)
	}
	ok, err := a.Consume(ctx, other, "fp")
	must(t, err)
	if ok {
		t.Fatal("Consume(other run, fp) = true; want false (approvals belong to one run)")
	}
	must(t, a.Decline(ctx, other))
	if _, ok, err := a.Gated(ctx, run); err != nil || !ok {
		t.Fatalf("Gated(run) after Decline(other run) = %v, %v; want the call still waiting", ok, err)
	}
}

func consumeIsAtomic(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	must(t, a.Approve(ctx, run, "fp"))
	var granted atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, Concurrency)
	for range Concurrency {
		wg.Go(func() {
			ok, err := a.Consume(ctx, run, "fp")
			if err != nil {
				errs <- err
				return
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := granted.Load(); n != 1 {
		t.Fatalf("%d concurrent Consume calls after one Approve granted %d executions; want 1", Concurrency, n)
	}
}

type ledgerCase struct {
	name string
	run  func(t *testing.T, l guard.WriteLedger, key string)
}

// RunWriteLedger runs the [guard.WriteLedger] contract tests as subtests of
// t, each with a ledger from newLedger.
func RunWriteLedger(t *testing.T, newLedger func() guard.WriteLedger) {
	t.Helper()
	for _, c := range ledgerCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newLedger(), "key/"+t.Name())
		})
	}
}

var ledgerCases = []ledgerCase{
	{"GetMissing", getMissing},
	{"BeginClaimsNewKey", beginClaimsNewKey},
	{"BeginRefusesRunning", beginRefusesRunning},
	{"SucceededIsKeptWithResult", succeededIsKeptWithResult},
	{"FailedMayRunAgain", failedMayRunAgain},
	{"NoneReleasesClaim", noneReleasesClaim},
	{"UncertainBlocks", uncertainBlocks},
	{"KeysAreIsolated", keysAreIsolated},
	{"FinishCopiesResult", finishCopiesResult},
	{"BeginIsAtomic", beginIsAtomic},
}

func getMissing(t *testing.T, l guard.WriteLedger, key string) {
	rec, ok, err := l.Get(context.Background(), key)
	must(t, err)
	if ok {
		t.Fatalf("Get(%q) = %+v, true; want false for an unknown key", key, rec)
	}
}

func beginClaimsNewKey(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	rec, ok, err := l.Begin(ctx, key, "w")
	must(t, err)
	if !ok || rec.State != guard.WriteRunning || rec.Key != key || rec.Tool != "w" {
		t.Fatalf("Begin(%q, w) = %+v, %v; want a running record for the key and true", key, rec, ok)
	}
	got, ok, err := l.Get(ctx, key)
	must(t, err)
	if !ok || got.State != guard.WriteRunning {
		t.Fatalf("Get after Begin = %+v, %v; want the running record", got, ok)
	}
}

func beginRefusesRunning(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	rec, ok, err := l.Begin(ctx, key, "w")
	must(t, err)
	if ok || rec.State != guard.WriteRunning {
		t.Fatalf("second Begin = %+v, %v; want the running record and false", rec, ok)
	}
}

func succeededIsKeptWithResult(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteSucceeded, Result: json.RawMessage(`{"id":1}`)}))
	rec, ok, err := l.Begin(ctx, key, "w")
	must(t, err)
	if ok || rec.State != guard.WriteSucceeded || !bytes.Equal(rec.Result, []byte(`{"id":1}`)) {
		t.Fatalf("Begin after success = %+v (result %s), %v; want the succeeded record with its result and false", rec, rec.Result, ok)
	}
	got, ok, err := l.Get(ctx, key)
	must(t, err)
	if !ok || got.State != guard.WriteSucceeded || !bytes.Equal(got.Result, []byte(`{"id":1}`)) {
		t.Fatalf("Get after success = %+v, %v; want the succeeded record", got, ok)
	}
}

func failedMayRunAgain(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteFailed, Code: errcode.ToolBusinessFailed}))
	got, ok, err := l.Get(ctx, key)
	must(t, err)
	if !ok || got.State != guard.WriteFailed || got.Code != errcode.ToolBusinessFailed {
		t.Fatalf("Get after failure = %+v, %v; want the failed record with its code", got, ok)
	}
	rec, ok, err := l.Begin(ctx, key, "w")
	must(t, err)
	if !ok || rec.State != guard.WriteRunning {
		t.Fatalf("Begin after a definitive failure = %+v, %v; want a new claim", rec, ok)
	}
}

func noneReleasesClaim(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteNone}))
	rec, ok, err := l.Begin(ctx, key, "w")
	must(t, err)
	if !ok || rec.State != guard.WriteRunning {
		t.Fatalf("Begin after a released claim = %+v, %v; want a new claim", rec, ok)
	}
}

func uncertainBlocks(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteUncertain, Code: errcode.ToolTimeout}))
	rec, ok, err := l.Begin(ctx, key, "w")
	must(t, err)
	if ok || rec.State != guard.WriteUncertain {
		t.Fatalf("Begin after an uncertain result = %+v, %v; want the uncertain record and false (verify first)", rec, ok)
	}
}

func keysAreIsolated(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	rec, ok, err := l.Begin(ctx, key+"/other", "w")
	must(t, err)
	if !ok {
		t.Fatalf("Begin(other key) = %+v, false; want a claim (keys are independent)", rec)
	}
}

func finishCopiesResult(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	_, _, err := l.Begin(ctx, key, "w")
	must(t, err)
	res := []byte(`{"id":1}`)
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteSucceeded, Result: res}))
	copy(res, `{"id":2}`)
	got, _, err := l.Get(ctx, key)
	must(t, err)
	if string(got.Result) != `{"id":1}` {
		t.Fatalf("Get().Result = %s after the caller changed its slice; want {\"id\":1}", got.Result)
	}
}

func beginIsAtomic(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	var claims atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, Concurrency)
	for range Concurrency {
		wg.Go(func() {
			_, ok, err := l.Begin(ctx, key, "w")
			if err != nil {
				errs <- err
				return
			}
			if ok {
				claims.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := claims.Load(); n != 1 {
		t.Fatalf("%d concurrent Begin(%q) calls made %d claims; want exactly 1", Concurrency, key, n)
	}
}

func sameCall(a, b guard.GatedCall) bool {
	return a.CallID == b.CallID && a.Tool == b.Tool && a.Fingerprint == b.Fingerprint &&
		a.Round == b.Round && bytes.Equal(a.Args, b.Args)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
