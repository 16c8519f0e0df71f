// Package guardtest checks that store implementations keep the contracts of
// [guard.Approvals], [guard.WriteLedger] and [guard.ApprovingWriteLedger].
// Run it from a test of the implementation:
//
//	func TestApprovals(t *testing.T) {
//		guardtest.RunApprovals(t, func() guard.Approvals { return mystore.NewApprovals() })
//	}
//
//	func TestWriteLedger(t *testing.T) {
//		guardtest.RunWriteLedger(t, func() guard.WriteLedger { return mystore.NewWriteLedger() })
//	}
//
//	func TestApprovingWriteLedger(t *testing.T) { // a ledger that also consumes approvals
//		guardtest.RunApprovingWriteLedger(t, func() (guard.ApprovingWriteLedger, guard.Approvals) {
//			s := mystore.New()
//			return s.WriteLedger(), s.Approvals()
//		})
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
	"errors"
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
	{"ApproveOnlyTheGatedCall", approveOnlyTheGatedCall},
	{"ApproveDeliveredTwiceGrantsOne", approveDeliveredTwiceGrantsOne},
	{"ApproveAfterConsumeGrantsNothing", approveAfterConsumeGrantsNothing},
	{"ApprovalBindsToFingerprint", approvalBindsToFingerprint},
	{"EachApprovedCallGrantsOne", eachApprovedCallGrantsOne},
	{"DeclineGrantsNothing", declineGrantsNothing},
	{"DeclineOnlyTheGatedCall", declineOnlyTheGatedCall},
	{"DecisionsAreFinal", decisionsAreFinal},
	{"RunsAreIsolated", approvalRunsAreIsolated},
	{"ConsumeIsAtomic", consumeIsAtomic},
	{"DecideIsAtomic", decideIsAtomic},
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
	if err := a.Approve(ctx, run, "c1", "fp1"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Approve(c1) after c2 replaced it = %v; want ErrNotPending (only the waiting call can be approved)", err)
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

// gate records call c1 with fingerprint fp as waiting in run.
func gate(t *testing.T, a guard.Approvals, run string) {
	t.Helper()
	must(t, a.Gate(context.Background(), run, guard.GatedCall{CallID: "c1", Tool: "w", Args: json.RawMessage(`{}`), Fingerprint: "fp"}))
}

// consumes returns how many times Consume(fp) succeeds in run, up to 3.
func consumes(t *testing.T, a guard.Approvals, run, fp string) int {
	t.Helper()
	n := 0
	for range 3 {
		ok, err := a.Consume(context.Background(), run, fp)
		must(t, err)
		if ok {
			n++
		}
	}
	return n
}

func approveGrantsOneExecution(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	gate(t, a, run)
	must(t, a.Approve(ctx, run, "c1", "fp"))
	if c, ok, err := a.Gated(ctx, run); err != nil || ok {
		t.Fatalf("Gated after Approve = %+v, %v, %v; want nothing waiting", c, ok, err)
	}
	if n := consumes(t, a, run, "fp"); n != 1 {
		t.Fatalf("Consume(fp) succeeded %d times after one Approve; want 1 (an approval is consumed by one execution)", n)
	}
}

func approveOnlyTheGatedCall(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	if err := a.Approve(ctx, run, "c1", "fp"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Approve with nothing gated = %v; want ErrNotPending", err)
	}
	gate(t, a, run)
	for _, tt := range []struct {
		name, run, call, fp string
	}{
		{"another call id", run, "c2", "fp"},
		{"another fingerprint (edited arguments)", run, "c1", "fp-edited"},
		{"another run", run + "/other", "c1", "fp"},
		{"an empty call id", run, "", "fp"},
	} {
		if err := a.Approve(ctx, tt.run, tt.call, tt.fp); !errors.Is(err, guard.ErrNotPending) {
			t.Fatalf("Approve(%s) = %v; want ErrNotPending", tt.name, err)
		}
	}
	if n := consumes(t, a, run, "fp") + consumes(t, a, run, "fp-edited") + consumes(t, a, run+"/other", "fp"); n != 0 {
		t.Fatalf("refused approvals granted %d executions; want 0", n)
	}
	if c, ok, err := a.Gated(ctx, run); err != nil || !ok || c.CallID != "c1" {
		t.Fatalf("Gated after refused approvals = %+v, %v, %v; want c1 still waiting", c, ok, err)
	}
}

func approveDeliveredTwiceGrantsOne(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	gate(t, a, run)
	must(t, a.Approve(ctx, run, "c1", "fp"))
	if err := a.Approve(ctx, run, "c1", "fp"); err != nil {
		t.Fatalf("Approve delivered a second time = %v; want nil (a retried decision is not an error)", err)
	}
	if n := consumes(t, a, run, "fp"); n != 1 {
		t.Fatalf("Consume(fp) succeeded %d times after one approval delivered twice; want 1", n)
	}
}

func approveAfterConsumeGrantsNothing(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	gate(t, a, run)
	must(t, a.Approve(ctx, run, "c1", "fp"))
	if n := consumes(t, a, run, "fp"); n != 1 {
		t.Fatalf("Consume(fp) succeeded %d times; want 1", n)
	}
	if err := a.Approve(ctx, run, "c1", "fp"); err != nil {
		t.Fatalf("Approve replayed after the execution = %v; want nil", err)
	}
	if n := consumes(t, a, run, "fp"); n != 0 {
		t.Fatalf("a replayed approval granted %d executions; want 0", n)
	}
}

func approvalBindsToFingerprint(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp-a"}))
	must(t, a.Approve(ctx, run, "c1", "fp-a"))
	if n := consumes(t, a, run, "fp-b"); n != 0 {
		t.Fatal("Consume(fp-b) after approving fp-a succeeded; want false (an approval binds to one call)")
	}
	if n := consumes(t, a, run, "fp-a"); n != 1 {
		t.Fatalf("Consume(fp-a) succeeded %d times; want 1 (consuming another fingerprint must not use it up)", n)
	}
}

func eachApprovedCallGrantsOne(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	for _, id := range []string{"c1", "c2"} {
		must(t, a.Gate(ctx, run, guard.GatedCall{CallID: id, Tool: "w", Fingerprint: "fp"}))
		must(t, a.Approve(ctx, run, id, "fp"))
	}
	if n := consumes(t, a, run, "fp"); n != 2 {
		t.Fatalf("Consume(fp) succeeded %d times after two calls were approved; want 2 (each decision grants one)", n)
	}
}

func declineGrantsNothing(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	gate(t, a, run)
	must(t, a.Decline(ctx, run, "c1"))
	if c, ok, err := a.Gated(ctx, run); err != nil || ok {
		t.Fatalf("Gated after Decline = %+v, %v, %v; want nothing waiting", c, ok, err)
	}
	if err := a.Decline(ctx, run, "c1"); err != nil {
		t.Fatalf("Decline delivered a second time = %v; want nil", err)
	}
	if n := consumes(t, a, run, "fp"); n != 0 {
		t.Fatal("Consume after Decline succeeded; want false")
	}
}

func declineOnlyTheGatedCall(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	if err := a.Decline(ctx, run, "c1"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Decline with nothing gated = %v; want ErrNotPending", err)
	}
	gate(t, a, run)
	if err := a.Decline(ctx, run, "c2"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Decline(another call) = %v; want ErrNotPending", err)
	}
	if err := a.Decline(ctx, run+"/other", "c1"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Decline(another run) = %v; want ErrNotPending", err)
	}
	if _, ok, err := a.Gated(ctx, run); err != nil || !ok {
		t.Fatalf("Gated after refused declines = %v, %v; want c1 still waiting", ok, err)
	}
}

func decisionsAreFinal(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	gate(t, a, run)
	must(t, a.Approve(ctx, run, "c1", "fp"))
	if err := a.Decline(ctx, run, "c1"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Decline after Approve = %v; want ErrNotPending", err)
	}
	other := run + "/declined"
	gate(t, a, other)
	must(t, a.Decline(ctx, other, "c1"))
	if err := a.Approve(ctx, other, "c1", "fp"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Approve after Decline = %v; want ErrNotPending", err)
	}
	if n := consumes(t, a, other, "fp"); n != 0 {
		t.Fatalf("a declined call granted %d executions; want 0", n)
	}
}

func approvalRunsAreIsolated(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	other := run + "/other"
	gate(t, a, run)
	must(t, a.Approve(ctx, run, "c1", "fp"))
	must(t, a.Gate(ctx, run, guard.GatedCall{CallID: "c2", Tool: "w", Fingerprint: "fp2"}))
	if c, ok, err := a.Gated(ctx, other); err != nil || ok {
		t.Fatalf("Gated(other run) = %+v, %v, %v; want nothing", c, ok, err)
	}
	if n := consumes(t, a, other, "fp"); n != 0 {
		t.Fatal("Consume(other run, fp) = true; want false (approvals belong to one run)")
	}
	if err := a.Decline(ctx, other, "c2"); !errors.Is(err, guard.ErrNotPending) {
		t.Fatalf("Decline(other run, c2) = %v; want ErrNotPending", err)
	}
	if _, ok, err := a.Gated(ctx, run); err != nil || !ok {
		t.Fatalf("Gated(run) after Decline(other run) = %v, %v; want the call still waiting", ok, err)
	}
}

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

func consumeIsAtomic(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	gate(t, a, run)
	must(t, a.Approve(ctx, run, "c1", "fp"))
	var granted atomic.Int32
	parallel(t, func(int) error {
		ok, err := a.Consume(ctx, run, "fp")
		if ok {
			granted.Add(1)
		}
		return err
	})
	if n := granted.Load(); n != 1 {
		t.Fatalf("%d concurrent Consume calls after one Approve granted %d executions; want 1", Concurrency, n)
	}
}

// decideIsAtomic races approvals and declines of one gated call: exactly
// one kind of decision wins, every other call of that kind is a repeat
// (nil) and every call of the other kind is refused, and at most one
// execution is granted.
func decideIsAtomic(t *testing.T, a guard.Approvals, run string) {
	ctx := context.Background()
	gate(t, a, run)
	var approved, declined, refused atomic.Int32
	parallel(t, func(i int) error {
		var err error
		if i%2 == 0 {
			err = a.Approve(ctx, run, "c1", "fp")
			if err == nil {
				approved.Add(1)
			}
		} else {
			err = a.Decline(ctx, run, "c1")
			if err == nil {
				declined.Add(1)
			}
		}
		if errors.Is(err, guard.ErrNotPending) {
			refused.Add(1)
			return nil
		}
		return err
	})
	half := int32(Concurrency / 2)
	switch {
	case approved.Load() == half && declined.Load() == 0 && refused.Load() == half:
		if n := consumes(t, a, run, "fp"); n != 1 {
			t.Fatalf("the approval won the race but granted %d executions; want 1", n)
		}
	case declined.Load() == half && approved.Load() == 0 && refused.Load() == half:
		if n := consumes(t, a, run, "fp"); n != 0 {
			t.Fatalf("the decline won the race but %d executions were granted; want 0", n)
		}
	default:
		t.Fatalf("racing decisions: %d approvals and %d declines accepted, %d refused; want one kind accepted %d times and the other refused", approved.Load(), declined.Load(), refused.Load(), half)
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
	{"ClaimTokensGrow", claimTokensGrow},
	{"FinishOfAnEarlierClaimIsFenced", finishOfEarlierClaimIsFenced},
}

// tokens claims key and returns the token of the claim; it skips t when
// the ledger issues no tokens (every claim has Token 0).
func token(t *testing.T, l guard.WriteLedger, key string) uint64 {
	t.Helper()
	rec, ok, err := l.Begin(context.Background(), key, "w")
	must(t, err)
	if !ok {
		t.Fatalf("Begin(%q) = %+v, false; want a claim", key, rec)
	}
	if rec.Token == 0 {
		t.Skip("the ledger issues no fencing tokens")
	}
	return rec.Token
}

// Every claim gets a larger token than every earlier claim of the ledger,
// of the same key (claimed again after a release or a failure) or another:
// a backend that keeps the largest token refuses every earlier holder.
func claimTokensGrow(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	first := token(t, l, key)
	other := token(t, l, key+"/other")
	if other <= first {
		t.Fatalf("token of a later claim of another key = %d; want more than %d", other, first)
	}
	for i, end := range []guard.WriteState{guard.WriteNone, guard.WriteFailed} {
		must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: end, Token: first}))
		again := token(t, l, key)
		if again <= first || again <= other {
			t.Fatalf("claim #%d of the key after it was finished in state %d got token %d; want more than %d and %d", i+2, end, again, first, other)
		}
		first = again
	}
	rec, ok, err := l.Get(ctx, key)
	must(t, err)
	if !ok || rec.Token != first {
		t.Fatalf("Get after the claim = token %d, %v; want the claim's token %d", rec.Token, ok, first)
	}
}

// A record that names an earlier claim of the key (a holder whose claim
// was released and taken again) stores nothing and wraps ErrFenced; the
// current claim's record is stored, once.
func finishOfEarlierClaimIsFenced(t *testing.T, l guard.WriteLedger, key string) {
	ctx := context.Background()
	old := token(t, l, key)
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteNone, Token: old}))
	cur := token(t, l, key)
	err := l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteSucceeded, Result: json.RawMessage(`{"stale":true}`), Token: old})
	if !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("Finish with the earlier claim's token %d (current %d) = %v; want ErrFenced", old, cur, err)
	}
	rec, _, err := l.Get(ctx, key)
	must(t, err)
	if rec.State != guard.WriteRunning || rec.Token != cur {
		t.Fatalf("record after a fenced Finish = %+v; want the current claim running, untouched", rec)
	}
	must(t, l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteSucceeded, Result: json.RawMessage(`{"id":1}`), Token: cur}))
	err = l.Finish(ctx, guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteFailed, Token: cur})
	if !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("a second Finish of the same claim after it succeeded = %v; want ErrFenced (the record is closed)", err)
	}
	rec, _, err = l.Get(ctx, key)
	must(t, err)
	if rec.State != guard.WriteSucceeded || string(rec.Result) != `{"id":1}` {
		t.Fatalf("record after the current claim's Finish = %+v; want it succeeded with its result", rec)
	}
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
	parallel(t, func(int) error {
		_, ok, err := l.Begin(ctx, key, "w")
		if ok {
			claims.Add(1)
		}
		return err
	})
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
