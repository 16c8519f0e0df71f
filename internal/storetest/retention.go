package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// Clock is a fake clock shared by a store and a loop.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Pruner deletes a store's state older than before (the store's Prune).
type Pruner func(ctx context.Context, before time.Time) error

// RetentionOpener opens migrated stores whose clock is now, with their
// Prune.
type RetentionOpener func(t *testing.T, now func() time.Time) (Stores, Pruner)

// retention is what the scenarios of Retention keep fixed: a day of
// retention and the same SnapshotMaxAge.
const retention = 24 * time.Hour

// think is how long the model takes over a turn where it says so.
const think = 5 * time.Minute

// Retention checks, with a fake clock shared by the stores and the loop,
// that Prune with a retention equal to SnapshotMaxAge never deletes what a
// snapshot within SnapshotMaxAge needs: the gated call, the approval
// granted and not used yet, the evidence, the record of a write that
// applied; and that past SnapshotMaxAge the snapshot is refused as expired
// (never resumed without what it needs). Each scenario prunes once a
// minute before the snapshot expires and once a minute after.
func Retention(t *testing.T, open RetentionOpener) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, r *retentionRig)
	}{
		{"gated long before the stop", gatedLongBefore},
		{"approval granted and not used", grantedNotUsed},
		{"a write that applied", appliedWrite},
	} {
		for _, late := range []bool{false, true} {
			name := tt.name + "/pruned a minute before the snapshot expires"
			if late {
				name = tt.name + "/pruned a minute after"
			}
			t.Run(name, func(t *testing.T) {
				clock := NewClock(t0)
				stores, prune := open(t, clock.Now)
				r := &retentionRig{t: t, clock: clock, stores: stores, prune: prune, late: late}
				tt.run(t, r)
			})
		}
	}
}

type retentionRig struct {
	t      *testing.T
	clock  *Clock
	stores Stores
	prune  Pruner
	late   bool
	execs  atomic.Int32
	run    string
}

// loop returns a loop over the stores, on the rig's clock, whose model
// plays script (a list of turns; a nil turn means: think for 5 minutes,
// then go on with the next).
func (r *retentionRig) loop(script ...react.ToolCall) *react.Loop {
	r.t.Helper()
	create := tool.New("create_site", "Create a site.", func(context.Context, createInput) (any, error) { return nil, nil })
	create.Effect = tool.Write
	create.Func = func(context.Context, tool.Request) (any, error) {
		r.execs.Add(1)
		return map[string]string{"site_id": "s-1"}, nil
	}
	get := tool.New("get_space", "Get a space.", func(context.Context, createInput) (any, error) {
		return map[string]string{"space_id": "sp-42"}, nil
	})
	get.Effect = tool.Read
	tools, err := tool.NewCatalog(create, get)
	if err != nil {
		r.t.Fatal(err)
	}
	model := react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
		for _, c := range script {
			if c.ID == "" {
				continue
			}
			if _, ok := reacttest.ToolMessage(req, c.ID); !ok {
				if c.Name == react.ToolApproval || c.Name == react.ToolFollowUp {
					r.clock.Add(think) // the model takes its time before it stops
				}
				return reacttest.Calls(c), nil
			}
		}
		return reacttest.Calls(reacttest.Finish("end", "done")), nil
	})
	l, err := react.New(react.Config{
		Model: model, Tools: tools, Observer: react.DiscardObserver,
		Guards:         &guard.Options{Ledger: r.stores.Ledger, Approvals: r.stores.Approvals, WriteLedger: r.stores.WriteLedger},
		Claims:         r.stores.Claims,
		Runs:           r.stores.Runs,
		SnapshotKeys:   [][]byte{key},
		SnapshotMaxAge: retention,
		Now:            r.clock.Now,
		NewRunID:       func(context.Context) string { return r.run },
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

var retentionNode = react.Node{Name: "retention", Tools: []string{"create_site", "get_space"}, MaxRounds: 12}

// stoppedAt returns when the run store says the run stopped.
func (r *retentionRig) stoppedAt() time.Time {
	r.t.Helper()
	rec, ok, err := r.stores.Runs.Get(context.Background(), r.run)
	if err != nil || !ok {
		r.t.Fatalf("the run store has no stop of run %s: %v", r.run, err)
	}
	return rec.Stopped
}

// pruneAround moves the clock to a minute before the stopped run's
// snapshot expires (or a minute after, when late) and prunes with the
// retention.
func (r *retentionRig) pruneAround(stopped time.Time) {
	r.t.Helper()
	at := stopped.Add(retention - time.Minute)
	if r.late {
		at = stopped.Add(retention + time.Minute)
	}
	r.clock.Set(at)
	if err := r.prune(context.Background(), at.Add(-retention)); err != nil {
		r.t.Fatal(err)
	}
	if !r.late {
		return
	}
	// Past the retention, the snapshot has expired: stores may keep it or
	// not, a resume is refused either way.
	rec, ok, err := r.stores.Runs.Get(context.Background(), r.run)
	if err != nil {
		r.t.Fatal(err)
	}
	if ok {
		r.t.Fatalf("the run stopped at %v is still listed after pruning at %v", rec.Stopped, at)
	}
}

// resume resumes the run from the run store with d; past the retention it
// checks that the snapshot is refused as expired.
func (r *retentionRig) resume(l *react.Loop, snapshot []byte, d react.Decision) (react.Result, bool) {
	r.t.Helper()
	res, err := l.Resume(context.Background(), snapshot, d)
	if r.late {
		if !errors.Is(err, react.ErrSnapshotExpired) {
			r.t.Fatalf("resuming a day and a minute after the stop = %s, %v; want ErrSnapshotExpired", res.Status, err)
		}
		if n := r.execs.Load(); n > 1 {
			r.t.Fatalf("create_site ran %d times", n)
		}
		return res, false
	}
	if err != nil {
		r.t.Fatalf("resuming a minute before the snapshot expires = %s, %v; want it resumed", res.Status, err)
	}
	return res, true
}

// The write is gated as the run starts, and the model takes five minutes
// before it asks for approval: the gated call is older than the stop by
// five minutes. The approval a day minus a minute after the stop runs the
// write once.
func gatedLongBefore(t *testing.T, r *retentionRig) {
	r.run = "retention-gated-" + t.Name()
	l := r.loop(
		reacttest.Call("r1", "get_space", `{"name":"x","space_id":"sp-42"}`),
		reacttest.Call("w1", "create_site", CreateArgs),
		reacttest.Approval("a1", "create_site", "create it"),
		reacttest.Call("w2", "create_site", CreateArgs),
	)
	res, err := l.Run(context.Background(), retentionNode, "Create the Spring Sale site in sp-42.")
	if err != nil || res.Status != react.Suspended {
		t.Fatalf("Run = %s, %v; want suspended for approval", res.Status, err)
	}
	r.pruneAround(r.stoppedAt())
	res, ok := r.resume(l, res.Snapshot, react.Approve(res.Suspension.Ticket))
	if !ok {
		return
	}
	if res.Status != react.Finished || r.execs.Load() != 1 {
		t.Fatalf("after the approval: %s with %d executions; want finished, one execution", res.Status, r.execs.Load())
	}
}

// The user approves, and the model, before it writes, asks a question
// (five minutes later): the grant is older than the new stop. Answered a
// day minus a minute after that stop, the run writes once with the grant.
func grantedNotUsed(t *testing.T, r *retentionRig) {
	r.run = "retention-granted-" + t.Name()
	l := r.loop(
		reacttest.Call("w1", "create_site", CreateArgs),
		reacttest.Approval("a1", "create_site", "create it"),
		reacttest.FollowUp("q1", "Which theme should the site use?"),
		reacttest.Call("w2", "create_site", CreateArgs),
	)
	res, err := l.Run(context.Background(), retentionNode, "Create the Spring Sale site in sp-42.")
	if err != nil || res.Status != react.Suspended {
		t.Fatalf("Run = %s, %v; want suspended for approval", res.Status, err)
	}
	r.clock.Add(time.Hour)
	res, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	if err != nil || res.Status != react.Suspended || res.Suspension.Kind != react.SuspendFollowUp {
		t.Fatalf("Resume(Approve) = %s, %v; want suspended for the question", res.Status, err)
	}
	r.pruneAround(r.stoppedAt())
	res, ok := r.resume(l, res.Snapshot, react.Answer(res.Suspension.Ticket, "The default theme."))
	if !ok {
		return
	}
	if res.Status != react.Finished || r.execs.Load() != 1 {
		t.Fatalf("after the answer: %s with %d executions; want finished, one execution (the grant kept)", res.Status, r.execs.Load())
	}
}

// The approved write applies, then the model asks a question five minutes
// later: the write's record is older than the stop. Answered a day minus a
// minute after the stop, the model calls the write again and its result
// is reused: it does not run twice.
func appliedWrite(t *testing.T, r *retentionRig) {
	r.run = "retention-applied-" + t.Name()
	l := r.loop(
		reacttest.Call("w1", "create_site", CreateArgs),
		reacttest.Approval("a1", "create_site", "create it"),
		reacttest.Call("w2", "create_site", CreateArgs),
		reacttest.FollowUp("q1", "What colour should the banner be?"),
		reacttest.Call("w3", "create_site", CreateArgs),
	)
	res, err := l.Run(context.Background(), retentionNode, "Create the Spring Sale site in sp-42.")
	if err != nil || res.Status != react.Suspended {
		t.Fatalf("Run = %s, %v; want suspended for approval", res.Status, err)
	}
	res, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	if err != nil || res.Status != react.Suspended || r.execs.Load() != 1 {
		t.Fatalf("Resume(Approve) = %s, %v with %d executions; want suspended for the question after one execution", res.Status, err, r.execs.Load())
	}
	r.pruneAround(r.stoppedAt())
	res, ok := r.resume(l, res.Snapshot, react.Answer(res.Suspension.Ticket, "Blue."))
	if !ok {
		return
	}
	if res.Status != react.Finished || r.execs.Load() != 1 {
		t.Fatalf("after the answer: %s with %d executions; want finished, the write reused (one execution)", res.Status, r.execs.Load())
	}
	for _, c := range res.Calls {
		if c.CallID == "w3" && c.Outcome != outcome.Success {
			t.Fatalf("the write called again after the answer: %s %s; want SUCCESS, its record reused", c.Outcome, c.Code)
		}
	}
}
