package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/guard/guardtest"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/tool"
)

// countingApprovals counts the gate's Consume calls.
type countingApprovals struct {
	*guard.MemoryApprovals
	consumes atomic.Int32
}

func (c *countingApprovals) Consume(ctx context.Context, run, fp string) (bool, error) {
	c.consumes.Add(1)
	return c.MemoryApprovals.Consume(ctx, run, fp)
}

// approvingFake is an ApprovingWriteLedger in memory: a write ledger and
// the approvals it consumes from behind one lock, as one database would
// be. It counts its claims and can be made to fail.
type approvingFake struct {
	mu        sync.Mutex
	ledger    *guard.MemoryWriteLedger
	approvals guard.Approvals // the store it consumes from (identity)
	consume   guard.Approvals // what it consumes through: approvals, or the store under a counting wrapper
	begins    atomic.Int32
	approved  atomic.Int32
	fail      error
}

var _ guard.ApprovingWriteLedger = (*approvingFake)(nil)

func newApprovingFake(a guard.Approvals) *approvingFake {
	f := &approvingFake{ledger: guard.NewMemoryWriteLedger(), approvals: a, consume: a}
	if c, ok := a.(*countingApprovals); ok {
		f.consume = c.MemoryApprovals
	}
	return f
}

func (f *approvingFake) Begin(ctx context.Context, key, tool string) (guard.WriteRecord, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.begins.Add(1)
	return f.ledger.Begin(ctx, key, tool)
}

func (f *approvingFake) Finish(ctx context.Context, rec guard.WriteRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ledger.Finish(ctx, rec)
}

func (f *approvingFake) Get(ctx context.Context, key string) (guard.WriteRecord, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ledger.Get(ctx, key)
}

func (f *approvingFake) ConsumesFrom(a guard.Approvals) bool { return a != nil && a == f.approvals }

func (f *approvingFake) BeginApproved(ctx context.Context, key, tool, run, fp string) (guard.WriteRecord, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approved.Add(1)
	if f.fail != nil {
		return guard.WriteRecord{}, false, f.fail
	}
	rec, found, err := f.ledger.Get(ctx, key)
	if err != nil {
		return guard.WriteRecord{}, false, err
	}
	if !found {
		rec = guard.WriteRecord{Key: key, Tool: tool, State: guard.WriteNone}
	}
	if rec.State != guard.WriteNone && rec.State != guard.WriteFailed {
		return rec, false, nil
	}
	ok, err := f.consume.Consume(ctx, run, fp)
	if err != nil || !ok {
		return rec, false, err
	}
	return f.ledger.Begin(ctx, key, tool)
}

func TestApprovingFake_Conformance(t *testing.T) {
	guardtest.RunApprovingWriteLedger(t, func() (guard.ApprovingWriteLedger, guard.Approvals) {
		a := guard.NewMemoryApprovals()
		return newApprovingFake(a), a
	})
	guardtest.RunWriteLedger(t, func() guard.WriteLedger { return newApprovingFake(guard.NewMemoryApprovals()) })
}

// writeStory drives one write gate through approvals, reuses, definitive
// and uncertain failures and verification, and returns every answer as
// text. The tool create_site takes {"name":…}: "fail" fails
// definitively, "slow" times out (uncertain), anything else succeeds.
func writeStory(t *testing.T, ledger guard.WriteLedger, approvals guard.Approvals, execs *atomic.Int32) []string {
	t.Helper()
	ctx := context.Background()
	verify := tool.WriteStatus(0)
	create := catalogued(t, &tool.Tool{
		Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(_ context.Context, req tool.Request) (any, error) {
			execs.Add(1)
			var in struct{ Name string }
			_ = json.Unmarshal(req.Args, &in)
			switch in.Name {
			case "fail":
				return nil, tool.BusinessFailure("sites.409", "name taken")
			case "slow":
				return nil, context.DeadlineExceeded
			}
			return map[string]any{"id": "s-" + in.Name}, nil
		},
		Verify: func(context.Context, string) (tool.WriteStatus, any, error) {
			if verify == 0 {
				return tool.WriteUnknown, nil, nil
			}
			return verify, map[string]any{"id": "s-slow"}, nil
		},
	})
	h := invoker.Chain(invoker.New(nil), guard.WriteGate(guard.WriteGateOptions{Approvals: approvals, WriteLedger: ledger}))
	var out []string
	n := 0
	send := func(name string) {
		n++
		obs, err := h(ctx, invoker.Call{ID: fmt.Sprintf("c%d", n), Name: create.Name, Tool: create, Run: wgRun, Round: n,
			Args: json.RawMessage(`{"name":"` + name + `"}`)})
		if err != nil {
			out = append(out, name+": error "+err.Error())
			return
		}
		data, _ := json.Marshal(obs.Data())
		out = append(out, fmt.Sprintf("%s: %s %v %s | %s | %s", name, obs.Outcome(), obs.Code(), obs.Reason(), obs.Next(), data))
	}
	approve := func() {
		gc, ok, err := approvals.Gated(ctx, wgRun)
		require.NoError(t, err)
		require.True(t, ok, "a call waits for approval")
		require.NoError(t, approvals.Approve(ctx, wgRun, gc.CallID, gc.Fingerprint))
	}
	send("blog") // APPROVAL_REQUIRED
	send("blog") // still
	approve()
	send("blog") // runs
	send("blog") // reused
	send("fail") // APPROVAL_REQUIRED
	approve()
	send("fail") // FAILED, NEXT_APPROVED_FAILED
	send("fail") // a definitive failure may run again, after a new approval
	send("slow") // APPROVAL_REQUIRED
	approve()
	send("slow") // FAILED TOOL_TIMEOUT: uncertain
	send("slow") // WRITE_PENDING_VERIFY (unknown)
	verify = tool.WriteNotApplied
	send("slow") // verified not applied: claimed again, needs a new approval
	approve()
	verify = tool.WriteUnknown
	send("slow") // runs, times out again
	verify = tool.WriteApplied
	send("slow") // verified applied: reused
	return out
}

// The write gate over an ApprovingWriteLedger that consumes its own
// Approvals answers exactly as over Begin and Consume, claiming and
// consuming in one operation.
func TestWriteGate_ApprovingLedgerAnswersTheSame(t *testing.T) {
	var slowExecs, fastExecs atomic.Int32
	slow := writeStory(t, guard.NewMemoryWriteLedger(), guard.NewMemoryApprovals(), &slowExecs)
	approvals := &countingApprovals{MemoryApprovals: guard.NewMemoryApprovals()}
	fake := newApprovingFake(approvals)
	fast := writeStory(t, fake, approvals, &fastExecs)
	require.Equal(t, strings.Join(slow, "\n"), strings.Join(fast, "\n"), "the same answers, call by call")
	assert.Equal(t, slowExecs.Load(), fastExecs.Load())
	assert.EqualValues(t, 4, fastExecs.Load(), "blog once, fail once, slow twice")
	assert.Zero(t, approvals.consumes.Load(), "the gate consumed every approval through BeginApproved")
	assert.Zero(t, fake.begins.Load(), "every claim of a write that needs approval went through BeginApproved")
	assert.NotZero(t, fake.approved.Load())
}

// The gate uses BeginApproved only for writes that need approval and only
// when the ledger consumes the gate's own Approvals.
func TestWriteGate_ApprovingLedgerOnlyWhereItFits(t *testing.T) {
	t.Run("other approvals", func(t *testing.T) {
		var execs atomic.Int32
		fake := newApprovingFake(guard.NewMemoryApprovals())
		approvals := &countingApprovals{MemoryApprovals: guard.NewMemoryApprovals()}
		out := writeStory(t, fake, approvals, &execs)
		slow := writeStory(t, guard.NewMemoryWriteLedger(), guard.NewMemoryApprovals(), new(atomic.Int32))
		assert.Equal(t, slow, out)
		assert.Zero(t, fake.approved.Load(), "a ledger that consumes another store's approvals is asked Begin only")
		assert.NotZero(t, approvals.consumes.Load())
	})
	t.Run("no approval needed", func(t *testing.T) {
		approvals := guard.NewMemoryApprovals()
		fake := newApprovingFake(approvals)
		create := catalogued(t, &tool.Tool{Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
			Func: func(context.Context, tool.Request) (any, error) { return "ok", nil }})
		h := invoker.Chain(invoker.New(nil), guard.WriteGate(guard.WriteGateOptions{Approvals: approvals, WriteLedger: fake,
			RequireApproval: func(invoker.Call) bool { return false }}))
		obs, err := send(t, h, create, `{}`)
		require.NoError(t, err)
		assert.Equal(t, "SUCCESS", obs.Outcome().String())
		assert.Zero(t, fake.approved.Load(), "a pre-approved write is claimed with Begin")
		assert.EqualValues(t, 1, fake.begins.Load())
	})
	t.Run("store error", func(t *testing.T) {
		approvals := guard.NewMemoryApprovals()
		fake := newApprovingFake(approvals)
		fake.fail = errors.New("database down")
		create := catalogued(t, &tool.Tool{Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
			Func: func(context.Context, tool.Request) (any, error) { t.Error("the write ran"); return nil, nil }})
		h := invoker.Chain(invoker.New(nil), guard.WriteGate(guard.WriteGateOptions{Approvals: approvals, WriteLedger: fake}))
		_, err := send(t, h, create, `{}`)
		require.ErrorIs(t, err, fake.fail)
		assert.Contains(t, err.Error(), "write gate: claim")
	})
}
