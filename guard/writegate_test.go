package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

const wgRun = "run-1"

// wgRig is a write gate over the default invoker, with its stores exposed
// and a create_site write tool that counts its executions.
type wgRig struct {
	approvals *guard.MemoryApprovals
	ledger    *guard.MemoryWriteLedger
	tool      *tool.Tool
	execs     atomic.Int32
	result    func(n int32) (any, error) // what execution n returns
	h         invoker.Handler
	seen      invoker.Call // the last call that reached the tool's handler
}

func newWGRig(t *testing.T, opts guard.WriteGateOptions) *wgRig {
	t.Helper()
	r := &wgRig{approvals: guard.NewMemoryApprovals(), ledger: guard.NewMemoryWriteLedger()}
	r.result = func(n int32) (any, error) { return map[string]any{"id": "s-1", "n": n}, nil }
	r.tool = catalogued(t, &tool.Tool{
		Name: "create_site", Effect: tool.Write,
		InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(ctx context.Context, req tool.Request) (any, error) {
			return r.result(r.execs.Add(1))
		},
	})
	opts.Approvals, opts.WriteLedger = r.approvals, r.ledger
	inv := invoker.New(nil)
	r.h = invoker.Chain(func(ctx context.Context, call invoker.Call) (observation.Observation, error) {
		r.seen = call
		return inv(ctx, call)
	}, guard.WriteGate(opts))
	return r
}

func (r *wgRig) call(t *testing.T, args string) observation.Observation {
	t.Helper()
	obs, err := r.h(context.Background(), invoker.Call{ID: "c1", Name: r.tool.Name, Args: json.RawMessage(args), Tool: r.tool, Run: wgRun, Round: 3})
	require.NoError(t, err)
	return obs
}

// approveGated approves the call waiting for approval, as the loop does
// when the user says yes.
func (r *wgRig) approveGated(t *testing.T) guard.GatedCall {
	t.Helper()
	gc, ok, err := r.approvals.Gated(context.Background(), wgRun)
	require.NoError(t, err)
	require.True(t, ok, "no call is waiting for approval")
	require.NoError(t, r.approvals.Approve(context.Background(), wgRun, gc.CallID, gc.Fingerprint))
	return gc
}

func (r *wgRig) state(t *testing.T, args string) guard.WriteRecord {
	t.Helper()
	rec, _, err := r.ledger.Get(context.Background(), guard.IdempotencyKey(wgRun, mustFingerprint(t, r.tool.Name, args)))
	require.NoError(t, err)
	return rec
}

func TestWriteGate_ApprovalRequired(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	obs := r.call(t, `{"name":"blog"}`)
	assert.Equal(t, outcome.Deferred, obs.Outcome(), "an unapproved write = %v; want DEFERRED", obs)
	assert.Equal(t, errcode.ApprovalRequired, obs.Code())
	assert.Equal(t, "the write create_site needs the user's approval", obs.Reason())
	assert.Equal(t, prompt.Default().Text(prompt.NextApproval, "tool", "create_site"), obs.Next())
	assert.Contains(t, obs.Next(), "builtin_node_approval", "the next step names the approval tool")
	assert.Contains(t, obs.Next(), "create_site", "the next step names the gated tool")
	assert.Zero(t, r.execs.Load(), "an unapproved write must not run")

	gc, ok, err := r.approvals.Gated(context.Background(), wgRun)
	require.NoError(t, err)
	require.True(t, ok, "the deferred call is recorded as gated")
	assert.Equal(t, guard.GatedCall{CallID: "c1", Tool: "create_site", Args: json.RawMessage(`{"name":"blog"}`),
		Fingerprint: mustFingerprint(t, "create_site", `{"name":"blog"}`), Round: 3}, gc)
	assert.Equal(t, guard.WriteNone, r.state(t, `{"name":"blog"}`).State, "the ledger claim is released")
}

func TestWriteGate_ApprovedWriteRuns(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	require.Equal(t, errcode.ApprovalRequired, r.call(t, `{"name":"blog"}`).Code())
	r.approveGated(t)

	obs := r.call(t, `{"name":"blog"}`)
	assert.Equal(t, outcome.Success, obs.Outcome(), "the approved write = %v; want SUCCESS", obs)
	assert.EqualValues(t, 1, r.execs.Load())
	rec := r.state(t, `{"name":"blog"}`)
	assert.Equal(t, guard.WriteSucceeded, rec.State)
	assert.JSONEq(t, `{"id":"s-1","n":1}`, string(rec.Result), "the result is stored for reuse")

	ok, err := r.approvals.Consume(context.Background(), wgRun, mustFingerprint(t, "create_site", `{"name":"blog"}`))
	require.NoError(t, err)
	assert.False(t, ok, "the approval was consumed by the execution")
}

func TestWriteGate_ApprovalBindsToExactCall(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	require.Equal(t, errcode.ApprovalRequired, r.call(t, `{"name":"blog","region":"eu"}`).Code())
	r.approveGated(t)

	obs := r.call(t, `{"name":"blog","region":"us"}`)
	assert.Equal(t, errcode.ApprovalRequired, obs.Code(), "other arguments = %v; a different call needs its own approval", obs)
	assert.Zero(t, r.execs.Load())

	other := catalogued(t, &tool.Tool{Name: "delete_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { r.execs.Add(1); return nil, nil }})
	obs, err := r.h(context.Background(), invoker.Call{ID: "c2", Name: other.Name, Args: json.RawMessage(`{"name":"blog","region":"eu"}`), Tool: other, Run: wgRun})
	require.NoError(t, err)
	assert.Equal(t, errcode.ApprovalRequired, obs.Code(), "another tool with the same arguments = %v; want its own approval", obs)
	assert.Zero(t, r.execs.Load())

	// The later deferrals replaced the gated call, so nothing but the call
	// now waiting can be approved; the first approval still stands for its
	// exact call, sent with other key order and whitespace.
	fp := mustFingerprint(t, "create_site", `{"name":"blog","region":"us"}`)
	require.ErrorIs(t, r.approvals.Approve(context.Background(), wgRun, "c1", fp), guard.ErrNotPending,
		"only the call waiting for approval can be approved")
	obs = r.call(t, ` { "region" : "eu", "name" : "blog" } `)
	assert.Equal(t, outcome.Success, obs.Outcome(), "the approved call with reordered keys = %v; want SUCCESS (same canonical arguments)", obs)
	assert.EqualValues(t, 1, r.execs.Load())
}

func TestWriteGate_ExistingSuccessReused(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	r.call(t, `{"name":"blog"}`)
	r.approveGated(t)
	require.Equal(t, outcome.Success, r.call(t, `{"name":"blog"}`).Outcome())

	for i := range 3 {
		obs := r.call(t, `{"name":"blog"}`)
		assert.Equal(t, outcome.Success, obs.Outcome(), "repeat %d = %v; want the earlier SUCCESS", i+1, obs)
		assert.Equal(t, "create_site already succeeded for these arguments; the earlier result is reused", obs.Reason())
		assert.JSONEq(t, `{"id":"s-1","n":1}`, string(obs.Data().(json.RawMessage)), "the stored result is the payload")
	}
	assert.EqualValues(t, 1, r.execs.Load(), "a succeeded write never runs a second time")
}

func TestWriteGate_InFlight(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	key := guard.IdempotencyKey(wgRun, mustFingerprint(t, "create_site", `{"name":"blog"}`))
	_, ok, err := r.ledger.Begin(context.Background(), key, "create_site")
	require.NoError(t, err)
	require.True(t, ok)

	obs := r.call(t, `{"name":"blog"}`)
	assert.Equal(t, outcome.Deferred, obs.Outcome())
	assert.Equal(t, errcode.WriteInFlight, obs.Code())
	assert.Equal(t, "the same write create_site is running right now", obs.Reason())
	assert.Equal(t, prompt.Default().Text(prompt.NextWriteInFlight, "tool", "create_site"), obs.Next())
	assert.Zero(t, r.execs.Load())
}

// timeoutOnce makes the first execution time out and later ones succeed.
func timeoutOnce(n int32) (any, error) {
	if n == 1 {
		return nil, context.DeadlineExceeded
	}
	return map[string]any{"id": "s-1", "n": n}, nil
}

func TestWriteGate_UncertainWriteVerifiedBeforeReexecution(t *testing.T) {
	tests := []struct {
		name      string
		verify    tool.VerifyFunc
		want      outcome.Outcome
		wantCode  errcode.Code
		wantExecs int32
		wantState guard.WriteState
		reason    string
	}{
		{"no verifier", nil, outcome.Deferred, errcode.WritePendingVerify, 1, guard.WriteUncertain,
			"without a verifier the write stays pending"},
		{"unknown", func(context.Context, string) (tool.WriteStatus, any, error) { return tool.WriteUnknown, nil, nil },
			outcome.Deferred, errcode.WritePendingVerify, 1, guard.WriteUncertain, "an unknown answer keeps it pending"},
		{"verifier error", func(context.Context, string) (tool.WriteStatus, any, error) {
			return tool.WriteApplied, nil, errors.New("lookup failed")
		},
			outcome.Deferred, errcode.WritePendingVerify, 1, guard.WriteUncertain, "a failed lookup verifies nothing"},
		{"verifier panics", func(context.Context, string) (tool.WriteStatus, any, error) { panic("broken") },
			outcome.Deferred, errcode.WritePendingVerify, 1, guard.WriteUncertain, "a broken verifier verifies nothing, and the host survives"},
		{"applied", func(context.Context, string) (tool.WriteStatus, any, error) {
			return tool.WriteApplied, map[string]string{"id": "s-1"}, nil
		}, outcome.Success, 0, 1, guard.WriteSucceeded, "an applied write is reused, never run again"},
		{"not applied", func(context.Context, string) (tool.WriteStatus, any, error) { return tool.WriteNotApplied, nil, nil },
			outcome.Success, 0, 2, guard.WriteSucceeded, "a write that did not apply runs again, with the new approval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newWGRig(t, guard.WriteGateOptions{})
			r.result = timeoutOnce
			var verifiedKey string
			if tt.verify != nil {
				r.tool.Verify = func(ctx context.Context, key string) (tool.WriteStatus, any, error) {
					verifiedKey = key
					return tt.verify(ctx, key)
				}
			}
			r.call(t, `{"name":"blog"}`)
			r.approveGated(t)
			obs := r.call(t, `{"name":"blog"}`)
			require.Equal(t, errcode.ToolTimeout, obs.Code(), "the approved write times out: %v", obs)
			require.Equal(t, guard.WriteUncertain, r.state(t, `{"name":"blog"}`).State, "a timed-out write is uncertain")

			// Even with a fresh approval, the write is verified first.
			fp := mustFingerprint(t, "create_site", `{"name":"blog"}`)
			require.NoError(t, r.approvals.Gate(context.Background(), wgRun, guard.GatedCall{CallID: "c9", Tool: "create_site", Fingerprint: fp}))
			require.NoError(t, r.approvals.Approve(context.Background(), wgRun, "c9", fp))
			obs = r.call(t, `{"name":"blog"}`)
			assert.Equal(t, tt.want, obs.Outcome(), "after an uncertain write = %v (%s)", obs, tt.reason)
			if tt.wantCode != 0 {
				assert.Equal(t, tt.wantCode, obs.Code(), "(%s)", tt.reason)
			}
			assert.Equal(t, tt.wantExecs, r.execs.Load(), "executions (%s)", tt.reason)
			assert.Equal(t, tt.wantState, r.state(t, `{"name":"blog"}`).State, "ledger state (%s)", tt.reason)
			if tt.verify != nil {
				assert.Equal(t, guard.IdempotencyKey(wgRun, mustFingerprint(t, "create_site", `{"name":"blog"}`)), verifiedKey,
					"the verifier is asked about the write's idempotency key")
			}
			if tt.wantCode == errcode.WritePendingVerify {
				assert.Equal(t, prompt.Default().Text(prompt.NextWritePendingVerify, "tool", "create_site"), obs.Next())
			}
		})
	}
}

func TestWriteGate_NotAppliedRunsAfterNewApproval(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	r.result = timeoutOnce
	r.tool.Verify = func(context.Context, string) (tool.WriteStatus, any, error) { return tool.WriteNotApplied, nil, nil }
	r.call(t, `{"name":"blog"}`)
	r.approveGated(t)
	require.Equal(t, errcode.ToolTimeout, r.call(t, `{"name":"blog"}`).Code())
	require.Equal(t, errcode.ApprovalRequired, r.call(t, `{"name":"blog"}`).Code(), "verified not applied, the write needs a new approval")
	r.approveGated(t)
	obs := r.call(t, `{"name":"blog"}`)
	assert.Equal(t, outcome.Success, obs.Outcome(), "after verification and a new approval the write runs: %v", obs)
	assert.EqualValues(t, 2, r.execs.Load())
}

func TestWriteGate_AppliedResultReused(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	r.result = timeoutOnce
	r.tool.Verify = func(context.Context, string) (tool.WriteStatus, any, error) {
		return tool.WriteApplied, map[string]string{"id": "s-9"}, nil
	}
	r.call(t, `{"name":"blog"}`)
	r.approveGated(t)
	r.call(t, `{"name":"blog"}`)
	obs := r.call(t, `{"name":"blog"}`)
	require.Equal(t, outcome.Success, obs.Outcome())
	assert.JSONEq(t, `{"id":"s-9"}`, string(obs.Data().(json.RawMessage)), "the verifier's result is the payload")
	assert.JSONEq(t, `{"id":"s-9"}`, string(r.state(t, `{"name":"blog"}`).Result), "and is stored")
	obs = r.call(t, `{"name":"blog"}`)
	assert.Equal(t, outcome.Success, obs.Outcome(), "later calls reuse it without asking again")
	assert.EqualValues(t, 1, r.execs.Load())
}

func TestWriteGate_ApprovedFailureNextStep(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	r.result = func(int32) (any, error) { return nil, tool.BusinessFailure("system.50001", "quota exceeded") }
	r.call(t, `{"name":"blog"}`)
	r.approveGated(t)
	obs := r.call(t, `{"name":"blog"}`)
	assert.Equal(t, outcome.Failed, obs.Outcome())
	assert.Equal(t, errcode.ToolBusinessFailed, obs.Code(), "the code stays the tool's")
	assert.Contains(t, obs.Reason(), "system.50001", "the reason stays the tool's")
	assert.Equal(t, prompt.Default().Text(prompt.NextApprovedFailed, "tool", "create_site"), obs.Next(),
		"after an approved write fails, the next step is to tell the user")
	assert.Contains(t, obs.Next(), "builtin_node_follow_up")
	assert.Contains(t, obs.Next(), "builtin_node_fail")
	assert.Equal(t, guard.WriteFailed, r.state(t, `{"name":"blog"}`).State, "a business failure is definitive")
	assert.Equal(t, errcode.ApprovalRequired, r.call(t, `{"name":"blog"}`).Code(), "running it again needs a new approval")
}

func TestWriteGate_UnapprovedFailureKeepsNext(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{RequireApproval: func(invoker.Call) bool { return false }})
	r.result = func(int32) (any, error) { return nil, tool.Unavailable("maintenance") }
	obs := r.call(t, `{"name":"blog"}`)
	assert.Equal(t, errcode.ToolUnavailable, obs.Code())
	assert.NotEqual(t, prompt.Default().Text(prompt.NextApprovedFailed, "tool", "create_site"), obs.Next(),
		"a pre-approved write's failure keeps the invoker's next step")
}

func TestWriteGate_PreApprovedWritesStillUseLedger(t *testing.T) {
	var asked []string
	r := newWGRig(t, guard.WriteGateOptions{RequireApproval: func(c invoker.Call) bool {
		asked = append(asked, c.Name)
		return false
	}})
	require.Equal(t, outcome.Success, r.call(t, `{"name":"blog"}`).Outcome(), "a pre-approved write runs without approval")
	require.Equal(t, outcome.Success, r.call(t, `{"name":"blog"}`).Outcome())
	assert.EqualValues(t, 1, r.execs.Load(), "and still executes at most once")
	assert.Equal(t, []string{"create_site"}, asked, "RequireApproval is asked only when the write would run")
}

func TestWriteGate_LedgerStateAfterExecution(t *testing.T) {
	tests := []struct {
		name   string
		obs    observation.Observation
		uncert guard.UncertainFunc
		want   guard.WriteState
		reason string
	}{
		{"success", observation.Success("ok", nil), nil, guard.WriteSucceeded, "a success is stored"},
		{"timeout", observation.Failed(errcode.ToolTimeout, "slow", "n"), nil, guard.WriteUncertain, "a timeout may have applied"},
		{"unreachable", observation.Failed(errcode.ToolUnreachable, "gone", "n"), nil, guard.WriteUncertain, "a dropped connection may have applied"},
		{"io error", observation.Failed(errcode.ToolIOError, "io", "n"), nil, guard.WriteUncertain, "an I/O error may have applied"},
		{"mcp rpc", observation.Failed(errcode.MCPRPCError, "rpc", "n"), nil, guard.WriteUncertain, "an RPC error may have applied"},
		{"unavailable", observation.Failed(errcode.ToolUnavailable, "503", "n"), nil, guard.WriteFailed, "a 503 did not apply"},
		{"business", observation.Failed(errcode.ToolBusinessFailed, "quota", "n"), nil, guard.WriteFailed, "a business refusal did not apply"},
		{"tool error", observation.Failed(errcode.ToolError, "bug", "n"), nil, guard.WriteFailed, "other failures are definitive"},
		{"custom uncertain", observation.Failed(errcode.ToolError, "bug", "n"), func(errcode.Code) bool { return true }, guard.WriteUncertain, "Uncertain is configurable"},
		{"rejected inside", observation.Rejected(errcode.ArgJSONInvalid, "bad", "n"), nil, guard.WriteNone, "a call stopped inside did not run: the claim is released"},
		{"deferred inside", observation.Deferred(errcode.WriteInFlight, "busy", "n"), nil, guard.WriteNone, "a call deferred inside did not run"},
		{"zero observation", observation.Observation{}, nil, guard.WriteUncertain, "a broken handler leaves the write uncertain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ledger := guard.NewMemoryWriteLedger()
			h := invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) { return tt.obs, nil },
				guard.WriteGate(guard.WriteGateOptions{WriteLedger: ledger, Uncertain: tt.uncert, RequireApproval: func(invoker.Call) bool { return false }}))
			tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
				Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
			_, err := send(t, h, tl, `{}`)
			require.NoError(t, err)
			rec, _, err := ledger.Get(context.Background(), guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`)))
			require.NoError(t, err)
			assert.Equal(t, tt.want, rec.State, "ledger after %v = %d; want %d (%s)", tt.obs, rec.State, tt.want, tt.reason)
			if tt.obs.Outcome() == outcome.Failed {
				assert.Equal(t, tt.obs.Code(), rec.Code, "the failure's code is recorded")
			}
		})
	}
}

func TestWriteGate_GoErrorRecordsUncertain(t *testing.T) {
	ledger := guard.NewMemoryWriteLedger()
	boom := errors.New("connection pool exhausted")
	h := invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) {
		return observation.Observation{}, boom
	},
		guard.WriteGate(guard.WriteGateOptions{WriteLedger: ledger, RequireApproval: func(invoker.Call) bool { return false }}))
	tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }}) // Unspecified effect: a write
	obs, err := send(t, h, tl, `{}`)
	assert.ErrorIs(t, err, boom)
	assert.True(t, obs.IsZero())
	rec, _, _ := ledger.Get(context.Background(), guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`)))
	assert.Equal(t, guard.WriteUncertain, rec.State, "after a Go error nobody knows whether the write applied")
}

func TestWriteGate_CancelledCallerStillSettlesLedger(t *testing.T) {
	ledger := guard.NewMemoryWriteLedger()
	ctx, cancel := context.WithCancel(context.Background())
	h := invoker.Chain(func(ctx context.Context, _ invoker.Call) (observation.Observation, error) {
		cancel() // the caller gives up while the write runs
		return observation.Observation{}, ctx.Err()
	}, guard.WriteGate(guard.WriteGateOptions{WriteLedger: ctxCheckingLedger{ledger}, RequireApproval: func(invoker.Call) bool { return false }}))
	tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
	_, err := h(ctx, invoker.Call{ID: "c1", Name: "w", Args: json.RawMessage(`{}`), Tool: tl, Run: "run-1"})
	assert.ErrorIs(t, err, context.Canceled)
	rec, _, _ := ledger.Get(context.Background(), guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`)))
	assert.Equal(t, guard.WriteUncertain, rec.State, "the ledger is settled even though the caller's context is done")
}

// ctxCheckingLedger refuses writes under a done context, like a networked
// store would.
type ctxCheckingLedger struct{ guard.WriteLedger }

func (l ctxCheckingLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.WriteLedger.Finish(ctx, rec)
}

func TestWriteGate_PanicRecordsUncertain(t *testing.T) {
	ledger := guard.NewMemoryWriteLedger()
	h := invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) { panic("inner bug") },
		guard.WriteGate(guard.WriteGateOptions{WriteLedger: ledger, RequireApproval: func(invoker.Call) bool { return false }}))
	tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
	assert.PanicsWithValue(t, "inner bug", func() { _, _ = send(t, h, tl, `{}`) }, "the panic goes on")
	rec, _, _ := ledger.Get(context.Background(), guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`)))
	assert.Equal(t, guard.WriteUncertain, rec.State, "a panic leaves the write uncertain, not running forever")
}

func TestWriteGate_ReadToolsPassThrough(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	r.tool.Effect = tool.Read
	for range 3 {
		assert.Equal(t, outcome.Success, r.call(t, `{"name":"blog"}`).Outcome())
	}
	assert.EqualValues(t, 3, r.execs.Load(), "reads are neither gated nor deduplicated")
	assert.Empty(t, r.seen.IdempotencyKey, "reads get no idempotency key")
	_, ok, _ := r.approvals.Gated(context.Background(), wgRun)
	assert.False(t, ok)

	obs, err := r.h(context.Background(), invoker.Call{ID: "c9", Name: "unknown", Run: wgRun})
	require.NoError(t, err)
	assert.Equal(t, errcode.CatalogDenied, obs.Code(), "a call without a tool passes to the invoker")
}

func TestWriteGate_IdempotencyKey(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{RequireApproval: func(invoker.Call) bool { return false }})
	r.call(t, `{"name":"blog"}`)
	fp := mustFingerprint(t, "create_site", `{"name":"blog"}`)
	assert.Equal(t, guard.IdempotencyKey(wgRun, fp), r.seen.IdempotencyKey, "the derived key is set on the call passed down")
	assert.Regexp(t, `^rg-[0-9a-f]{32}$`, r.seen.IdempotencyKey)
	assert.NotEqual(t, guard.IdempotencyKey("run-2", fp), guard.IdempotencyKey(wgRun, fp), "runs never share a key")
	assert.NotEqual(t, guard.IdempotencyKey("a", "bc"), guard.IdempotencyKey("ab", "c"), "the run is length-prefixed")

	obs, err := r.h(context.Background(), invoker.Call{ID: "c2", Name: "create_site", Args: json.RawMessage(`{"name":"shop"}`),
		Tool: r.tool, Run: wgRun, IdempotencyKey: "order-77"})
	require.NoError(t, err)
	require.Equal(t, outcome.Success, obs.Outcome())
	assert.Equal(t, "order-77", r.seen.IdempotencyKey, "a key the caller set is kept")
	rec, ok, _ := r.ledger.Get(context.Background(), "order-77")
	assert.True(t, ok && rec.State == guard.WriteSucceeded, "and the ledger uses it")
}

func TestWriteGate_InvalidJSONRejected(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{RequireApproval: func(invoker.Call) bool { return false }})
	obs := r.call(t, `{"name":`)
	assert.Equal(t, outcome.Rejected, obs.Outcome())
	assert.Equal(t, errcode.ArgJSONInvalid, obs.Code(), "a write whose arguments are not JSON never runs ungated")
	assert.Zero(t, r.execs.Load())
}

// brokenApprovals fails the operation named in failOn.
type brokenApprovals struct {
	guard.Approvals
	failOn string
}

func (b brokenApprovals) Consume(ctx context.Context, run, fp string) (bool, error) {
	if b.failOn == "consume" {
		return false, errStoreDown
	}
	return b.Approvals.Consume(ctx, run, fp)
}

func (b brokenApprovals) Gate(ctx context.Context, run string, c guard.GatedCall) error {
	if b.failOn == "gate" {
		return errStoreDown
	}
	return b.Approvals.Gate(ctx, run, c)
}

// brokenLedger fails the operation named in failOn, or lies in Begin.
type brokenLedger struct {
	guard.WriteLedger
	failOn string
}

func (b brokenLedger) Begin(ctx context.Context, key, tl string) (guard.WriteRecord, bool, error) {
	switch b.failOn {
	case "begin":
		return guard.WriteRecord{}, false, errStoreDown
	case "lie":
		return guard.WriteRecord{Key: key, State: guard.WriteFailed}, false, nil
	}
	return b.WriteLedger.Begin(ctx, key, tl)
}

func (b brokenLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	if b.failOn == "finish" || (b.failOn == "finish-success" && rec.State == guard.WriteSucceeded) ||
		(b.failOn == "finish-uncertain" && rec.State == guard.WriteUncertain) {
		return errStoreDown
	}
	return b.WriteLedger.Finish(ctx, rec)
}

func TestWriteGate_StoreErrorsAreInfrastructure(t *testing.T) {
	tests := []struct {
		name      string
		approvals string
		ledger    string
		inner     error
		verify    bool
		reason    string
	}{
		{"begin", "", "begin", nil, false, "the ledger cannot be claimed"},
		{"ledger lies", "", "lie", nil, false, "a ledger that refuses a claimable key is broken"},
		{"consume", "consume", "", nil, false, "approvals cannot be read"},
		{"gate", "gate", "", nil, false, "the gated call cannot be stored"},
		{"release", "", "finish", nil, false, "a claim cannot be released"},
		{"record success", "approve", "finish-success", nil, false, "a success cannot be recorded"},
		{"record uncertain", "approve", "finish-uncertain", errors.New("inner"), false, "an uncertain write cannot be recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := guard.NewMemoryApprovals()
			tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
				Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
			if tt.approvals == "approve" {
				fp := mustFingerprint(t, "w", `{}`)
				require.NoError(t, mem.Gate(context.Background(), "run-1", guard.GatedCall{CallID: "c0", Tool: "w", Fingerprint: fp}))
				require.NoError(t, mem.Approve(context.Background(), "run-1", "c0", fp))
			}
			inner := func(context.Context, invoker.Call) (observation.Observation, error) {
				if tt.inner != nil {
					return observation.Observation{}, tt.inner
				}
				return observation.Success("ok", nil), nil
			}
			h := invoker.Chain(inner, guard.WriteGate(guard.WriteGateOptions{
				Approvals:   brokenApprovals{mem, tt.approvals},
				WriteLedger: brokenLedger{guard.NewMemoryWriteLedger(), tt.ledger},
			}))
			obs, err := send(t, h, tl, `{}`)
			assert.Error(t, err, "%s: want a Go error", tt.reason)
			assert.True(t, obs.IsZero(), "an infrastructure failure has no observation, got %v", obs)
		})
	}
}

func TestWriteGate_VerifyStoreErrors(t *testing.T) {
	for _, tc := range []struct {
		status tool.WriteStatus
		failOn string
	}{{tool.WriteApplied, "finish-success"}, {tool.WriteNotApplied, "finish"}} {
		ledger := guard.NewMemoryWriteLedger()
		tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
			Func:   func(context.Context, tool.Request) (any, error) { return nil, nil },
			Verify: func(context.Context, string) (tool.WriteStatus, any, error) { return tc.status, nil, nil }})
		key := guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`))
		require.NoError(t, ledger.Finish(context.Background(), guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteUncertain}))
		h := invoker.Chain((&reached{}).handle, guard.WriteGate(guard.WriteGateOptions{WriteLedger: brokenLedger{ledger, tc.failOn}}))
		_, err := send(t, h, tl, `{}`)
		assert.ErrorIs(t, err, errStoreDown, "recording a verification (%v) that fails is an infrastructure failure", tc.status)
	}
}

func TestWriteGate_VerifyCancelled(t *testing.T) {
	ledger := guard.NewMemoryWriteLedger()
	ctx, cancel := context.WithCancel(context.Background())
	tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil },
		Verify: func(ctx context.Context, _ string) (tool.WriteStatus, any, error) {
			cancel()
			return tool.WriteUnknown, nil, ctx.Err()
		}})
	key := guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`))
	require.NoError(t, ledger.Finish(context.Background(), guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteUncertain}))
	h := invoker.Chain((&reached{}).handle, guard.WriteGate(guard.WriteGateOptions{WriteLedger: ledger}))
	_, err := h(ctx, invoker.Call{ID: "c1", Name: "w", Args: json.RawMessage(`{}`), Tool: tl, Run: "run-1"})
	assert.ErrorIs(t, err, context.Canceled, "a verification cut short by the caller is cancellation, not a verdict")
}

func TestWriteGate_ClaimRaceEndsInFlight(t *testing.T) {
	// A verifier says "not applied", but every time the claim is released
	// someone else takes it first: the gate gives up after a bounded number
	// of tries and answers WRITE_IN_FLIGHT... or here, sees the other
	// writer's uncertain state again and again.
	ledger := guard.NewMemoryWriteLedger()
	key := guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`))
	var verifies int
	tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil },
		Verify: func(context.Context, string) (tool.WriteStatus, any, error) {
			verifies++
			return tool.WriteNotApplied, nil, nil
		}})
	h := invoker.Chain((&reached{}).handle, guard.WriteGate(guard.WriteGateOptions{WriteLedger: stealingLedger{ledger}}))
	require.NoError(t, ledger.Finish(context.Background(), guard.WriteRecord{Key: key, Tool: "w", State: guard.WriteUncertain}))
	obs, err := send(t, h, tl, `{}`)
	require.NoError(t, err)
	assert.Equal(t, errcode.WriteInFlight, obs.Code(), "a key others keep taking is in flight: %v", obs)
	assert.Equal(t, 3, verifies, "the number of tries is bounded")
}

// stealingLedger never lets a claim succeed: another writer always gets
// there first and leaves the write uncertain again.
type stealingLedger struct{ guard.WriteLedger }

func (s stealingLedger) Begin(ctx context.Context, key, tl string) (guard.WriteRecord, bool, error) {
	return guard.WriteRecord{Key: key, Tool: tl, State: guard.WriteUncertain}, false, nil
}

func ExampleWriteGate() {
	approvals := guard.NewMemoryApprovals()
	var executions int
	createSite := tool.New("create_site", "creates a site", func(_ context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		executions++
		return "created " + in.Name, nil
	})
	createSite.Effect = tool.Write
	tool.MustCatalog(createSite)

	h := invoker.Chain(invoker.New(nil), guard.WriteGate(guard.WriteGateOptions{Approvals: approvals}))
	call := invoker.Call{ID: "c1", Name: "create_site", Args: json.RawMessage(`{"name":"blog"}`), Tool: createSite, Run: "r"}

	obs, _ := h(context.Background(), call)
	fmt.Println(obs)

	// The user approves the gated call (the loop does this through
	// builtin_node_approval).
	gated, _, _ := approvals.Gated(context.Background(), "r")
	_ = approvals.Approve(context.Background(), "r", gated.CallID, gated.Fingerprint)

	obs, _ = h(context.Background(), call)
	fmt.Println(obs)
	obs, _ = h(context.Background(), call)
	fmt.Println(obs)
	fmt.Println("executions:", executions)
	// Output:
	// DEFERRED APPROVAL_REQUIRED: the write create_site needs the user's approval. Next: call builtin_node_approval with tool create_site to ask the user to approve this exact call; do not call create_site again before the answer
	// SUCCESS: create_site succeeded
	// SUCCESS: create_site already succeeded for these arguments; the earlier result is reused
	// executions: 1
}

func TestWriteGate_ResultStoredAsJSON(t *testing.T) {
	tests := []struct {
		name   string
		data   any
		stored string
		reason string
	}{
		{"value", map[string]int{"id": 7}, `{"id":7}`, "a Go value is encoded"},
		{"raw", json.RawMessage(`{"id":7}`), `{"id":7}`, "raw JSON is kept"},
		{"invalid raw", json.RawMessage(`{"id":`), ``, "invalid raw JSON is not stored"},
		{"unencodable", make(chan int), ``, "a value JSON cannot encode is not stored"},
		{"nil", nil, ``, "no result, nothing stored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ledger := guard.NewMemoryWriteLedger()
			h := invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) {
				return observation.Success("ok", tt.data), nil
			}, guard.WriteGate(guard.WriteGateOptions{WriteLedger: ledger, RequireApproval: func(invoker.Call) bool { return false }}))
			tl := catalogued(t, &tool.Tool{Name: "w", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
				Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
			_, err := send(t, h, tl, `{}`)
			require.NoError(t, err)
			rec, _, _ := ledger.Get(context.Background(), guard.IdempotencyKey("run-1", mustFingerprint(t, "w", `{}`)))
			assert.Equal(t, guard.WriteSucceeded, rec.State)
			assert.Equal(t, tt.stored, string(rec.Result), "(%s)", tt.reason)

			obs, err := send(t, h, tl, `{}`)
			require.NoError(t, err)
			require.Equal(t, outcome.Success, obs.Outcome(), "the write is reused")
			if tt.stored == "" {
				assert.Nil(t, obs.Data(), "a reused write without a stored result has no payload")
			}
		})
	}
}

// A reused write is a SUCCESS (§4), so it is recorded as evidence under the
// new call id — citable by builtin_output_set and result provenance — and,
// although the tool does not run again, it counts as a repeat of the call
// towards the fingerprint limit: a model that calls an applied write again
// and again is stopped with FINGERPRINT_TRIP, never answered SUCCESS until
// the round limit.
func TestWriteGate_ReusedWriteCountsAsRepeat(t *testing.T) {
	ctx := context.Background()
	opts := &guard.Options{RequireApproval: func(invoker.Call) bool { return false }}
	var runs atomic.Int32
	w := &tool.Tool{Name: "create_site", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
		Func: func(context.Context, tool.Request) (any, error) {
			runs.Add(1)
			return map[string]string{"site_id": "s-9"}, nil
		}}
	tool.MustCatalog(w) // resolves the schema
	h := invoker.Chain(invoker.New(nil), guard.Default(opts)...)
	var got []string
	for i, id := range []string{"c1", "c2", "c3", "c4"} {
		obs, err := h(ctx, invoker.Call{ID: id, Name: "create_site", Args: json.RawMessage(`{"name":"x"}`), Tool: w, Run: "r", Round: i + 1})
		require.NoError(t, err)
		got = append(got, obs.Outcome().String()+" "+obs.Code().String())
	}
	assert.Equal(t, []string{"SUCCESS CODE(0)", "SUCCESS CODE(0)", "REJECTED FINGERPRINT_TRIP", "REJECTED FINGERPRINT_TRIP"}, got,
		"execution, one reuse, then the limit of 2 trips")
	assert.EqualValues(t, 1, runs.Load(), "the write ran once")
	rec, ok, err := opts.Ledger.Lookup(ctx, "r", "c2")
	require.NoError(t, err)
	require.True(t, ok, "the reused call c2 is evidence")
	assert.JSONEq(t, `{"site_id":"s-9"}`, string(rec.Payload))
	fp, err := fingerprint.Of("create_site", json.RawMessage(`{"name":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, fp, rec.Fingerprint, "a reuse carries the call's fingerprint")
	has, err := opts.Ledger.HasValue(ctx, "r", "create_site", "site_id", "s-9")
	require.NoError(t, err)
	assert.True(t, has)
	n, _, err := opts.Ledger.Executions(ctx, "r", fp)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one execution and one reuse count; the rejected calls do not")
}
