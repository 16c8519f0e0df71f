package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// RunPerson runs, as subtests of t, the scenarios of a person deciding on
// suspended runs as an attacker (or an unlucky network) would try them,
// through the public API of package react over the stores open returns:
//
//   - DuplicateAfterNextStop: the approval of "pay alice 5" delivered again
//     after the run stopped for "pay mallory 99999" runs nothing, through
//     ResumeRun and Resume, and so does a late decline;
//   - AfterTheRunEnded: the same approval once the run finished;
//   - Racing: many replicas deliver one approval at once: one applies it;
//   - ForeignSnapshot: a run store holding run X's snapshot under run Y;
//   - ForgedRow: a run store row whose owner and kind were edited;
//   - Tenants: tenant B reads, lists, approves, declines, pages through and
//     reads the history of tenant A's run;
//   - Panics: a model, a guard and a tool panic during a resume, then a
//     second resume applies the approval and the payment runs once;
//   - DroppedReply: the approvals store applies the decision and the reply
//     is lost; a claim release and a run deletion fail: nothing is
//     stranded;
//   - FirstRecordedWins: a decision recorded whose application failed is
//     the suspension's: another person's other decision is refused, the
//     inbox shows the recorded one, and giving it again applies it;
//   - Audit: every decision is recorded with who made it, in order.
//
// open is called once per subtest; the stores may be shared between
// subtests (run ids are unique per call).
func RunPerson(t *testing.T, open func(t *testing.T) Stores) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, st Stores)
	}{
		{"DuplicateAfterNextStop", duplicateAfterNextStop},
		{"AfterTheRunEnded", afterTheRunEnded},
		{"Racing", racing},
		{"ForeignSnapshot", foreignSnapshot},
		{"ForgedRow", forgedRow},
		{"Tenants", tenants},
		{"Panics", panics},
		{"DroppedReply", droppedReply},
		{"FirstRecordedWins", firstRecordedWins},
		{"Audit", auditTrail},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

// payInput is the input of the pay tool.
type payInput struct {
	To     string `json:"to"`
	Amount int    `json:"amount"`
}

// bank is the backend of the pay tool: it counts the payments it applied,
// by recipient, and by idempotency key.
type bank struct {
	mu    sync.Mutex
	paid  map[string]int
	keys  map[string]int
	panic atomic.Int32 // panics left for the tool
}

func newBank() *bank { return &bank{paid: map[string]int{}, keys: map[string]int{}} }

func (b *bank) pay(_ context.Context, req tool.Request) (any, error) {
	if b.panic.Add(-1) >= 0 {
		panic("the bank's client panicked")
	}
	var in payInput
	if err := json.Unmarshal(req.Args, &in); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys[req.IdempotencyKey]++
	if b.keys[req.IdempotencyKey] == 1 {
		b.paid[in.To]++
	}
	return map[string]any{"paid": in.To, "amount": in.Amount}, nil
}

// payments returns how many payments to reached the backend, and whether
// any idempotency key was executed twice.
func (b *bank) payments(to string) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	twice := false
	for _, n := range b.keys {
		twice = twice || n > 1
	}
	return b.paid[to], twice
}

// payer is the model: pay alice 5; once paid, pay mallory 99999; once paid,
// finish. It pays again whatever was declined (a misbehaving model).
func payer(req react.Request) react.Response {
	paid := func(to string) bool {
		for _, m := range req.Messages {
			if m.Role == react.RoleTool && !m.IsError && strings.Contains(m.Content, `"paid":"`+to+`"`) {
				return true
			}
		}
		return false
	}
	n := 0
	for _, m := range req.Messages {
		n += len(m.ToolCalls)
	}
	id := fmt.Sprintf("c%d", n+1)
	switch {
	case !paid("alice"):
		return reacttest.Calls(reacttest.Call(id, "pay", `{"to":"alice","amount":5}`))
	case !paid("mallory"):
		return reacttest.Calls(reacttest.Call(id, "pay", `{"to":"mallory","amount":99999}`))
	}
	return reacttest.Calls(reacttest.Finish(id, "paid"))
}

// personKey seals the snapshots of every loop of the scenarios.
var personKey = []byte("storetest person key: 32 bytes or more, for every loop")

// world is one scenario's stores, backend and loops.
type world struct {
	t      *testing.T
	st     Stores
	bank   *bank
	tools  *tool.Catalog
	prefix string
	model  react.Model
	policy guard.ArgPolicyFunc
}

func newWorld(t *testing.T, st Stores) *world {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	w := &world{t: t, st: st, bank: newBank(), prefix: "person/" + t.Name() + "/" + hex.EncodeToString(b[:]), model: reacttest.Func(payer)}
	pay := tool.New("pay", "Pay someone.", func(context.Context, payInput) (any, error) { return nil, nil })
	pay.Effect, pay.Func = tool.Write, w.bank.pay
	tools, err := tool.NewCatalog(pay)
	if err != nil {
		t.Fatal(err)
	}
	w.tools = tools
	return w
}

// loop returns a new loop over the world's stores (a replica), whose runs
// get the id w.prefix+"/"+run.
func (w *world) loop(run string) *react.Loop {
	w.t.Helper()
	l, err := react.New(react.Config{
		Model: w.model, Tools: w.tools, Observer: react.DiscardObserver, Logger: slog.New(slog.DiscardHandler),
		Guards: &guard.Options{Ledger: w.st.Ledger, Approvals: w.st.Approvals, WriteLedger: w.st.WriteLedger, ArgPolicy: w.policy,
			Retry: guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}},
		Claims: w.st.Claims, Runs: w.st.Runs, Audit: w.st.Audit,
		SnapshotKeys: [][]byte{personKey},
		NewRunID:     func(context.Context) string { return w.prefix + "/" + run },
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

var payNode = react.Node{Name: "payments", Tools: []string{"pay"}, HostApproval: true, MaxRounds: 12}

var (
	acme = react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
	beta = react.WithOwner(react.Owner{Tenant: "beta", User: "bob"})
)

// start runs the payer until it suspends for the approval of pay alice.
func (w *world) start(run string, opts ...react.RunOption) (*react.Loop, react.Result) {
	w.t.Helper()
	l := w.loop(run)
	res, err := l.Run(context.Background(), payNode, "pay alice 5", opts...)
	if err != nil || res.Status != react.Suspended || res.Suspension.Approval == nil {
		w.t.Fatalf("Run = %v, %v; want suspended for the approval of pay", res.Status, err)
	}
	return l, res
}

func (w *world) paid(to string, want int) {
	w.t.Helper()
	n, twice := w.bank.payments(to)
	if n != want || twice {
		w.t.Fatalf("payments to %s = %d (a key executed twice: %v); want %d, no key twice", to, n, twice, want)
	}
}

func duplicateAfterNextStop(t *testing.T, st Stores) {
	w := newWorld(t, st)
	l, first := w.start("dup", acme)
	ctx := context.Background()
	approveAlice := react.Approve(first.Suspension.Ticket).DecidedBy("alice")
	res, err := w.loop("dup").ResumeRun(ctx, first.Run, approveAlice, acme)
	if err != nil || res.Status != react.Suspended || !strings.Contains(string(res.Suspension.Approval.Args), "mallory") {
		t.Fatalf("ResumeRun(approve alice) = %v, %v; want suspended for pay mallory", res.Status, err)
	}
	w.paid("alice", 1)
	// The first request again (a retry, a late double click on another
	// replica), on every path.
	for name, try := range map[string]func() error{
		"ResumeRun":          func() error { _, err := l.ResumeRun(ctx, first.Run, approveAlice, acme); return err },
		"Resume of its snap": func() error { _, err := l.Resume(ctx, first.Snapshot, approveAlice, acme); return err },
		"Resume of the new snapshot with the old ticket": func() error {
			_, err := l.Resume(ctx, res.Snapshot, approveAlice, acme)
			return err
		},
		"a late decline": func() error {
			_, err := l.ResumeRun(ctx, first.Run, react.Decline(first.Suspension.Ticket, "no"), acme)
			return err
		},
	} {
		err := try()
		var decided *react.DecidedError
		if !errors.Is(err, react.ErrAlreadyResumed) || !errors.As(err, &decided) || decided.Decided.Kind != runstore.Approved {
			t.Errorf("%s: %v; want a DecidedError (approved) wrapping ErrAlreadyResumed", name, err)
		}
	}
	w.paid("mallory", 0)
	p, err := l.Pending(ctx, first.Run, acme)
	if err != nil || p.Suspension == nil || !strings.Contains(string(p.Suspension.Approval.Args), "mallory") || p.Decided != nil {
		t.Fatalf("Pending = %+v, %v; want the mallory payment waiting, undecided", p, err)
	}
}

func afterTheRunEnded(t *testing.T, st Stores) {
	w := newWorld(t, st)
	l, first := w.start("end", acme)
	ctx := context.Background()
	res, err := l.ResumeRun(ctx, first.Run, react.Approve(first.Suspension.Ticket), acme)
	if err != nil {
		t.Fatal(err)
	}
	res, err = l.ResumeRun(ctx, first.Run, react.Approve(res.Suspension.Ticket), acme)
	if err != nil || res.Status != react.Finished {
		t.Fatalf("second approval = %v, %v; want finished", res.Status, err)
	}
	if _, err := l.ResumeRun(ctx, first.Run, react.Approve(first.Suspension.Ticket), acme); !errors.Is(err, react.ErrAlreadyResumed) {
		t.Fatalf("the first approval again after the run finished = %v; want ErrAlreadyResumed", err)
	}
	if _, err := l.ResumeRun(ctx, first.Run, react.Approve(first.Suspension.Ticket), beta); !errors.Is(err, react.ErrRunNotFound) {
		t.Fatalf("tenant beta delivering acme's old ticket = %v; want ErrRunNotFound (nothing about acme's run is revealed)", err)
	}
	w.paid("alice", 1)
	w.paid("mallory", 1)
}

func racing(t *testing.T, st Stores) {
	w := newWorld(t, st)
	_, first := w.start("race", acme)
	d := react.Approve(first.Suspension.Ticket)
	const replicas = 8
	var applied, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range replicas {
		l := w.loop("race")
		wg.Go(func() {
			_, err := l.ResumeRun(context.Background(), first.Run, d.DecidedBy(fmt.Sprint("click-", i)), acme)
			switch {
			case err == nil:
				applied.Add(1)
			case errors.Is(err, react.ErrAlreadyResumed):
				refused.Add(1)
			default:
				t.Errorf("replica %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if applied.Load() != 1 || refused.Load() != replicas-1 {
		t.Fatalf("%d replicas delivering one approval: %d applied, %d refused; want 1 and %d", replicas, applied.Load(), refused.Load(), replicas-1)
	}
	w.paid("alice", 1)
	w.paid("mallory", 0)
	if h, err := w.loop("race").History(context.Background(), first.Run, acme); err != nil || len(h) != 1 {
		t.Fatalf("History = %v, %v; want the one decision that applied", h, err)
	}
}

func foreignSnapshot(t *testing.T, st Stores) {
	w := newWorld(t, st)
	lx, x := w.start("x", acme)
	_, y := w.start("y", acme)
	ctx := context.Background()
	// The run store mixes its records up: X's genuine snapshot under Y.
	rec, ok, err := st.Runs.Get(ctx, x.Run)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	rec.ID = y.Run
	if err := st.Runs.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	for _, d := range []react.Decision{react.Approve(y.Suspension.Ticket), react.Approve(x.Suspension.Ticket)} {
		if _, err := lx.ResumeRun(ctx, y.Run, d, acme); !errors.Is(err, react.ErrSnapshotRun) {
			t.Errorf("ResumeRun(y) over x's snapshot = %v; want ErrSnapshotRun", err)
		}
	}
	if _, err := lx.Pending(ctx, y.Run, acme); !errors.Is(err, react.ErrSnapshotRun) {
		t.Errorf("Pending(y) over x's snapshot = %v; want ErrSnapshotRun", err)
	}
	w.paid("alice", 0)
	// X itself is untouched and resumes.
	if _, err := lx.ResumeRun(ctx, x.Run, react.Approve(x.Suspension.Ticket), acme); err != nil {
		t.Fatal(err)
	}
	w.paid("alice", 1)
}

func forgedRow(t *testing.T, st Stores) {
	w := newWorld(t, st)
	l, first := w.start("forged", acme)
	ctx := context.Background()
	rec, _, err := st.Runs.Get(ctx, first.Run)
	if err != nil {
		t.Fatal(err)
	}
	rec.Owner, rec.Kind = runstore.Owner{Tenant: "beta", User: "bob"}, runstore.FollowUp
	if err := st.Runs.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	page, err := l.ListPending(ctx, runstore.Filter{}, beta)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range page.Runs {
		if p.Run == first.Run {
			t.Fatalf("beta's inbox shows acme's run through a forged row: %+v", p)
		}
	}
	skipped := false
	for _, s := range page.Skipped {
		skipped = skipped || (s.ID == first.Run && errors.Is(s.Err, react.ErrNotOwner))
	}
	if !skipped {
		t.Fatalf("beta's inbox page = %+v; want acme's run skipped with ErrNotOwner", page)
	}
	p, err := l.Pending(ctx, first.Run, acme)
	if err != nil || p.Owner != (react.Owner{Tenant: "acme", User: "alice"}) || p.Suspension.Kind != react.SuspendApproval {
		t.Fatalf("Pending(acme) = %+v, %v; want the sealed owner and kind, whatever the row says", p, err)
	}
	if _, err := l.ResumeRun(ctx, first.Run, react.Approve(p.Suspension.Ticket), beta); !errors.Is(err, react.ErrNotOwner) {
		t.Fatalf("beta approving through the forged row = %v; want ErrNotOwner", err)
	}
	w.paid("alice", 0)
}

func tenants(t *testing.T, st Stores) {
	w := newWorld(t, st)
	l, a := w.start("tenant-a", acme)
	ctx := context.Background()
	ticket := a.Suspension.Ticket
	for name, try := range map[string]func() error{
		"Pending":  func() error { _, err := l.Pending(ctx, a.Run, beta); return err },
		"Inspect":  func() error { _, err := l.Inspect(ctx, a.Snapshot, beta); return err },
		"approve":  func() error { _, err := l.ResumeRun(ctx, a.Run, react.Approve(ticket), beta); return err },
		"decline":  func() error { _, err := l.ResumeRun(ctx, a.Run, react.Decline(ticket, "no"), beta); return err },
		"Resume":   func() error { _, err := l.Resume(ctx, a.Snapshot, react.Approve(ticket), beta); return err },
		"no owner": func() error { _, err := l.ResumeRun(ctx, a.Run, react.Approve(ticket)); return err },
		"same user": func() error {
			_, err := l.Pending(ctx, a.Run, react.WithOwner(react.Owner{Tenant: "beta", User: "alice"}))
			return err
		},
	} {
		if err := try(); !errors.Is(err, react.ErrNotOwner) {
			t.Errorf("%s as beta: %v; want ErrNotOwner", name, err)
		}
	}
	if _, err := l.History(ctx, a.Run, beta); err != nil && !errors.Is(err, react.ErrNotOwner) {
		t.Errorf("History as beta: %v", err)
	}
	page, err := l.ListPending(ctx, runstore.Filter{Limit: 1}, beta)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range page.Runs {
		if p.Owner.Tenant != "beta" {
			t.Fatalf("beta's inbox lists %s's run %s", p.Owner, p.Run)
		}
	}
	// acme's cursor does not page through beta's listing, nor the other way.
	_, _ = w.start("tenant-a2", acme)
	mine, err := l.ListPending(ctx, runstore.Filter{Limit: 1}, acme)
	if err != nil || mine.Next == "" {
		t.Fatalf("acme's first page = %+v, %v; want a next cursor", mine, err)
	}
	if _, err := l.ListPending(ctx, runstore.Filter{Limit: 1, Cursor: mine.Next}, beta); !errors.Is(err, runstore.ErrInvalidCursor) {
		t.Fatalf("beta with acme's cursor = %v; want ErrInvalidCursor", err)
	}
	// A tenant-wide caller of acme covers alice's run.
	if _, err := l.Pending(ctx, a.Run, react.WithOwner(react.Owner{Tenant: "acme"})); err != nil {
		t.Fatalf("Pending as acme's administrator = %v", err)
	}
	w.paid("alice", 0)
}

func panics(t *testing.T, st Stores) {
	for _, where := range []string{"model", "guard", "tool"} {
		t.Run(where, func(t *testing.T) {
			w := newWorld(t, st)
			var left atomic.Int32
			switch where {
			case "model":
				left.Store(1)
				w.model = reacttest.Func(func(req react.Request) react.Response {
					if _, ok := reacttest.ToolMessage(req, "c1"); ok && left.Add(-1) >= 0 {
						panic("the model client panicked")
					}
					return payer(req)
				})
			case "guard":
				w.policy = func(context.Context, invoker.Call, map[string]any) error {
					// The policy checks the call when it is gated (Run)
					// and again on resume: it panics the second time.
					if left.Add(1) == 2 {
						panic("the host's policy panicked")
					}
					return nil
				}
			case "tool":
				w.bank.panic.Store(1)
			}
			_, first := w.start("panic", acme)
			d := react.Approve(first.Suspension.Ticket).DecidedBy("alice")
			ctx := context.Background()
			var res react.Result
			var err error
			recovered := func() (p any) {
				defer func() { p = recover() }()
				res, err = w.loop("panic").ResumeRun(ctx, first.Run, d, acme)
				return nil
			}()
			if where == "tool" {
				// A tool's panic is the tool's failure: the run goes on.
				if recovered != nil || err != nil {
					t.Fatalf("resume with a panicking tool = %v, %v; want no panic, no error", recovered, err)
				}
				w.paid("alice", 0)
				return
			}
			if recovered == nil {
				t.Fatalf("resume with a panicking %s = %v, %v; want the panic to reach the host", where, res.Status, err)
			}
			// The next resume, in this process, applies the approval.
			res, err = w.loop("panic").ResumeRun(ctx, first.Run, d, acme)
			if err != nil || res.Status != react.Suspended || !strings.Contains(string(res.Suspension.Approval.Args), "mallory") {
				t.Fatalf("resume after the panic = %v, %v; want the approval applied and the run waiting for mallory's", res.Status, err)
			}
			w.paid("alice", 1)
		})
	}
}

// lossyApprovals applies a decision and then loses the reply, once.
type lossyApprovals struct {
	guard.Approvals
	lose atomic.Int32
}

var errLost = errors.New("connection reset after the request was sent")

// refusingApprovals fails Approve before it reaches the store, once.
type refusingApprovals struct {
	guard.Approvals
	refuse atomic.Int32
}

// Approve fails before the store while refusals are left.
func (a *refusingApprovals) Approve(ctx context.Context, run, callID, fp string) error {
	if a.refuse.Add(-1) >= 0 {
		return errLost
	}
	return a.Approvals.Approve(ctx, run, callID, fp)
}

func firstRecordedWins(t *testing.T, st Stores) {
	refusing := &refusingApprovals{Approvals: st.Approvals}
	refusing.refuse.Store(1)
	st.Approvals = refusing
	w := newWorld(t, st)
	l, first := w.start("first", acme)
	ctx := context.Background()
	ticket := first.Suspension.Ticket
	if _, err := l.ResumeRun(ctx, first.Run, react.Approve(ticket).DecidedBy("alice"), acme); !errors.Is(err, errLost) {
		t.Fatalf("approval with the store refusing = %v; want its error", err)
	}
	p, err := l.Pending(ctx, first.Run, acme)
	if err != nil || p.Decided == nil || p.Decided.Kind != runstore.Approved || p.Decided.By != "alice" {
		t.Fatalf("Pending = %+v, %v; want alice's recorded approval shown", p, err)
	}
	_, err = l.ResumeRun(ctx, first.Run, react.Decline(ticket, "no").DecidedBy("bob"), acme)
	var decided *react.DecidedError
	if !errors.As(err, &decided) || decided.Decided.By != "alice" {
		t.Fatalf("bob declining after alice's recorded approval = %v; want a DecidedError naming alice", err)
	}
	w.paid("alice", 0)
	res, err := l.ResumeRun(ctx, first.Run, react.Approve(ticket).DecidedBy("alice"), acme)
	if err != nil || res.Status != react.Suspended {
		t.Fatalf("alice's approval again = %v, %v; want it applied", res.Status, err)
	}
	w.paid("alice", 1)
	if h, err := l.History(ctx, first.Run, acme); err != nil || len(h) != 1 || h[0].By != "alice" {
		t.Fatalf("History = %+v, %v; want alice's one decision", h, err)
	}
}

// Approve applies the decision, then loses the reply while losses are left.
func (a *lossyApprovals) Approve(ctx context.Context, run, callID, fp string) error {
	if err := a.Approvals.Approve(ctx, run, callID, fp); err != nil {
		return err
	}
	if a.lose.Add(-1) >= 0 {
		return errLost
	}
	return nil
}

// failingClaims fails Release once; failingRuns fails Delete once.
type failingClaims struct {
	runstore.Claims
	fail atomic.Int32
}

// Release fails while failures are left.
func (c *failingClaims) Release(ctx context.Context, run, id string) error {
	if c.fail.Add(-1) >= 0 {
		return errLost
	}
	return c.Claims.Release(ctx, run, id)
}

type failingRuns struct {
	runstore.Store
	fail atomic.Int32
}

// Delete fails while failures are left.
func (r *failingRuns) Delete(ctx context.Context, id string) error {
	if r.fail.Add(-1) >= 0 {
		return errLost
	}
	return r.Store.Delete(ctx, id)
}

func droppedReply(t *testing.T, st Stores) {
	lossy := &lossyApprovals{Approvals: st.Approvals}
	lossy.lose.Store(1)
	claims := &failingClaims{Claims: st.Claims}
	claims.fail.Store(1)
	runs := &failingRuns{Store: st.Runs}
	st.Approvals, st.Claims, st.Runs = lossy, claims, runs
	w := newWorld(t, st)
	l, first := w.start("lossy", acme)
	ctx := context.Background()
	d := react.Approve(first.Suspension.Ticket)
	// The store applies the approval, the reply is lost, and the claim
	// release that follows fails too.
	res, err := l.ResumeRun(ctx, first.Run, d, acme)
	if !errors.Is(err, errLost) || res.Status != react.Suspended {
		t.Fatalf("ResumeRun with the reply lost = %v, %v; want the error and the same suspension", res.Status, err)
	}
	w.paid("alice", 0)
	// The same decision again, from the same loop: the failed release is
	// tried again first, and the approval applies once.
	res, err = l.ResumeRun(ctx, first.Run, d, acme)
	if err != nil || res.Status != react.Suspended {
		t.Fatalf("the same approval again = %v, %v; want it applied", res.Status, err)
	}
	w.paid("alice", 1)
	// The run finishes, and deleting its record fails once.
	runs.fail.Store(1)
	res, err = l.ResumeRun(ctx, first.Run, react.Approve(res.Suspension.Ticket), acme)
	if !errors.Is(err, errLost) || res.Status != react.Finished {
		t.Fatalf("the last approval = %v, %v; want finished with the delete's error", res.Status, err)
	}
	p, err := l.Pending(ctx, first.Run, acme) // the loop's next call deletes the record
	if !errors.Is(err, react.ErrRunNotFound) {
		t.Fatalf("Pending after the run finished = %+v, %v; want ErrRunNotFound (the failed delete was retried)", p, err)
	}
	w.paid("mallory", 1)
}

func auditTrail(t *testing.T, st Stores) {
	w := newWorld(t, st)
	l, first := w.start("audit", acme)
	ctx := context.Background()
	res, err := l.ResumeRun(ctx, first.Run, react.Approve(first.Suspension.Ticket).DecidedBy("alice@acme"), acme)
	if err != nil {
		t.Fatal(err)
	}
	res, err = l.ResumeRun(ctx, first.Run, react.Decline(res.Suspension.Ticket, "too much").DecidedBy("carol@acme"), acme)
	if err != nil {
		t.Fatal(err)
	}
	_ = res
	h, err := l.History(ctx, first.Run, acme)
	if err != nil || len(h) != 2 {
		t.Fatalf("History = %+v, %v; want two decisions", h, err)
	}
	if h[0].Kind != runstore.Approved || h[0].By != "alice@acme" || h[0].Tool != "pay" || h[0].Fingerprint == "" || h[0].CallID != "c1" ||
		h[0].Suspension != ticketSnapshot(first.Suspension.Ticket) || h[0].At.IsZero() || h[0].Owner.Tenant != "acme" {
		t.Errorf("History[0] = %+v; want alice's approval of c1 with its suspension, fingerprint and time", h[0])
	}
	if h[1].Kind != runstore.Declined || h[1].By != "carol@acme" || h[1].Reason != "too much" || h[1].CallID != "c2" {
		t.Errorf("History[1] = %+v; want carol's decline of c2 with her reason", h[1])
	}
	// The misbehaving model pays mallory again after the decline: it is
	// gated again, never executed without a new approval.
	w.paid("mallory", 0)
}

// ticketSnapshot returns the suspension id a ticket names.
func ticketSnapshot(ticket string) string {
	rest, _ := strings.CutPrefix(ticket, "rgt1.")
	id, _, _ := strings.Cut(rest, ".")
	return id
}
