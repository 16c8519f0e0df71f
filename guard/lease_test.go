package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// The tool receives the claim's fencing token beside the idempotency key,
// and a claim taken after the key was released gets a larger one.
func TestWriteGate_FencingTokenReachesTheTool(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	var tokens []uint64
	var keys []string
	r.tool.Func = func(ctx context.Context, req tool.Request) (any, error) {
		tokens, keys = append(tokens, req.FencingToken), append(keys, req.IdempotencyKey)
		if len(tokens) == 1 {
			return nil, tool.BusinessFailure("quota", "over quota") // definitive: the key may run again
		}
		return map[string]string{"id": "s-1"}, nil
	}
	for i := range 2 {
		obs := r.call(t, `{"name":"x"}`)
		require.Equal(t, errcode.ApprovalRequired, obs.Code(), "call %d", i+1)
		r.approveGated(t)
		r.call(t, `{"name":"x"}`)
	}
	require.Len(t, tokens, 2)
	assert.NotZero(t, tokens[0], "the first execution's token")
	assert.Greater(t, tokens[1], tokens[0], "a later claim of the same key gets a larger token")
	assert.Equal(t, keys[0], keys[1], "one idempotency key for both executions")
	assert.Equal(t, tokens[1], r.state(t, `{"name":"x"}`).Token, "the ledger keeps the token of the claim that ran")
}

// leasedLedger is a MemoryWriteLedger whose claims hold under a lease the
// test ends with lose.
type leasedLedger struct {
	*guard.MemoryWriteLedger
	lease context.Context
	lose  context.CancelCauseFunc
	held  []guard.WriteRecord
}

var errTestLeaseLost = errors.New("test: lease lost")

func newLeasedLedger() *leasedLedger {
	l := &leasedLedger{MemoryWriteLedger: guard.NewMemoryWriteLedger()}
	l.lease, l.lose = context.WithCancelCause(context.Background())
	return l
}

func (l *leasedLedger) Hold(ctx context.Context, rec guard.WriteRecord) (context.Context, context.CancelFunc) {
	l.held = append(l.held, rec)
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(l.lease, func() { cancel(context.Cause(l.lease)) })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// A holder that loses its lease cancels its in-flight write: the tool's
// context ends with the lease's cause, the gate returns an error naming
// it, and the write is recorded uncertain under the claim's token (to be
// verified before it runs again).
func TestWriteGate_LeaseLostCancelsTheWrite(t *testing.T) {
	l := newLeasedLedger()
	started := make(chan struct{})
	var cause error
	write := catalogued(t, &tool.Tool{
		Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(ctx context.Context, req tool.Request) (any, error) {
			close(started)
			<-ctx.Done()
			cause = context.Cause(ctx)
			return nil, ctx.Err()
		},
	})
	h := invoker.Chain(invoker.New(nil), guard.WriteGate(guard.WriteGateOptions{WriteLedger: l, RequireApproval: func(invoker.Call) bool { return false }}))
	go func() { <-started; l.lose(errTestLeaseLost) }()
	done := make(chan error, 1)
	go func() {
		_, err := h(context.Background(), invoker.Call{ID: "c1", Name: write.Name, Tool: write, Args: json.RawMessage(`{}`), Run: wgRun})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the write did not stop when its lease was lost")
	}
	require.ErrorIs(t, err, errTestLeaseLost, "the gate's error names the lost lease")
	assert.ErrorIs(t, cause, errTestLeaseLost, "the tool's context ended with the lease's cause")
	require.Len(t, l.held, 1)
	rec, _, gerr := l.Get(context.Background(), l.held[0].Key)
	require.NoError(t, gerr)
	assert.Equal(t, guard.WriteUncertain, rec.State, "a write cancelled mid-flight is uncertain")
	assert.Equal(t, l.held[0].Token, rec.Token, "recorded under the claim's token")
}

// A write whose lease holds runs to its end under Hold's context, which is
// released when the write returns.
func TestWriteGate_HeldWriteRunsToItsEnd(t *testing.T) {
	l := newLeasedLedger()
	var held context.Context
	write := catalogued(t, &tool.Tool{
		Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(ctx context.Context, req tool.Request) (any, error) {
			held = ctx
			return map[string]string{"id": "s-1"}, nil
		},
	})
	h := invoker.Chain(invoker.New(nil), guard.WriteGate(guard.WriteGateOptions{WriteLedger: l, RequireApproval: func(invoker.Call) bool { return false }}))
	obs, err := h(context.Background(), invoker.Call{ID: "c1", Name: write.Name, Tool: write, Args: json.RawMessage(`{}`), Run: wgRun})
	require.NoError(t, err)
	assert.Equal(t, outcome.Success, obs.Outcome())
	require.Len(t, l.held, 1, "the gate held the claim once")
	require.Error(t, held.Err(), "Hold's context is released once the write returned")
	assert.NotErrorIs(t, context.Cause(held), errTestLeaseLost)
}

// fencingLedger refuses every record after the claim: the claim was taken
// over by another holder while the write ran.
type fencingLedger struct{ *guard.MemoryWriteLedger }

func (f fencingLedger) Finish(ctx context.Context, rec guard.WriteRecord) error {
	return errors.Join(guard.ErrFenced, errors.New("taken over"))
}

// A holder whose claim was taken over while its write ran cannot record
// the outcome: the gate returns the fenced error, not a verdict.
func TestWriteGate_FencedRecordIsAnError(t *testing.T) {
	l := fencingLedger{guard.NewMemoryWriteLedger()}
	write := catalogued(t, &tool.Tool{
		Name: "create_site", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(ctx context.Context, req tool.Request) (any, error) { return map[string]string{"id": "s-1"}, nil },
	})
	h := invoker.Chain(invoker.New(nil), guard.WriteGate(guard.WriteGateOptions{WriteLedger: l, RequireApproval: func(invoker.Call) bool { return false }}))
	_, err := h(context.Background(), invoker.Call{ID: "c1", Name: write.Name, Tool: write, Args: json.RawMessage(`{}`), Run: wgRun})
	require.ErrorIs(t, err, guard.ErrFenced)
}

// MemoryWriteLedger fences records by token: an earlier claim's record is
// refused, a record without a token is an operator's correction.
func TestMemoryWriteLedger_Fencing(t *testing.T) {
	ctx := context.Background()
	l := guard.NewMemoryWriteLedger()
	first, ok, err := l.Begin(ctx, "k", "w")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, l.Finish(ctx, guard.WriteRecord{Key: "k", Tool: "w", State: guard.WriteUncertain, Token: first.Token}))
	require.NoError(t, l.Finish(ctx, guard.WriteRecord{Key: "k", Tool: "w", State: guard.WriteNone, Token: first.Token}), "an uncertain record's claim is closed by its token (verified not applied)")
	second, ok, err := l.Begin(ctx, "k", "w")
	require.NoError(t, err)
	require.True(t, ok)
	err = l.Finish(ctx, guard.WriteRecord{Key: "k", Tool: "w", State: guard.WriteSucceeded, Token: first.Token})
	require.ErrorIs(t, err, guard.ErrFenced, "the first claim's record after a second claim")
	require.ErrorIs(t, l.Finish(ctx, guard.WriteRecord{Key: "missing", State: guard.WriteSucceeded, Token: 9}), guard.ErrFenced, "a token for a key without record")
	require.NoError(t, l.Finish(ctx, guard.WriteRecord{Key: "k", Tool: "w", State: guard.WriteSucceeded}), "no token: stored whatever the key holds")
	rec, _, err := l.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, guard.WriteSucceeded, rec.State)
	assert.Equal(t, second.Token, rec.Token, "a record without token keeps the key's token")
}
