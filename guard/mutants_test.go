package guard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// This file holds tests written to kill mutants that lived through the
// package's other tests (docs/mutation.md): each pins a boundary or a
// branch that a one-token change of the code would break.

// A Go error of the write itself comes back unchanged when the write is
// recorded as uncertain; only a ledger that also fails adds its error.
func TestWriteGate_GoErrorUnchanged(t *testing.T) {
	boom := errors.New("connection pool exhausted")
	gate := func(ledger guard.WriteLedger) invoker.Handler {
		return invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) {
			return observation.Observation{}, boom
		}, guard.WriteGate(guard.WriteGateOptions{WriteLedger: ledger, RequireApproval: func(invoker.Call) bool { return false }}))
	}
	tl := catalogued(t, &tool.Tool{Name: "w", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }})
	_, err := send(t, gate(guard.NewMemoryWriteLedger()), tl, `{}`)
	assert.Same(t, boom, err, "the write's own error, as it was")

	_, err = send(t, gate(finishFails{guard.NewMemoryWriteLedger()}), tl, `{}`)
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, err, errLedgerDown)
	assert.Contains(t, err.Error(), "recording the write as uncertain")
}

var errLedgerDown = errors.New("ledger down")

// finishFails is a write ledger whose Finish fails.
type finishFails struct{ guard.WriteLedger }

func (finishFails) Finish(context.Context, guard.WriteRecord) error { return errLedgerDown }

// A write that succeeded without a result is reused without one: the
// reused SUCCESS carries no data (not an empty JSON text).
func TestWriteGate_ReusedWithoutResult(t *testing.T) {
	r := newWGRig(t, guard.WriteGateOptions{})
	r.result = func(int32) (any, error) { return nil, nil }
	r.call(t, `{"name":"blog"}`)
	r.approveGated(t)
	first := r.call(t, `{"name":"blog"}`)
	require.Equal(t, outcome.Success, first.Outcome())
	again := r.call(t, `{"name":"blog"}`)
	require.Equal(t, "create_site already succeeded for these arguments; the earlier result is reused", again.Reason())
	assert.True(t, again.Data() == nil, "no result was stored: the reuse carries none, not an empty JSON text (%#v)", again.Data())
	assert.EqualValues(t, 1, r.execs.Load())
}

// Sleep waits for the whole delay unless ctx ends first; a delay of 0 or
// less returns at once.
func TestSleep_WaitsForCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	assert.ErrorIs(t, guard.Sleep(ctx, time.Hour), context.Canceled, "an hour's delay ends only with ctx")
	assert.NoError(t, guard.Sleep(context.Background(), 0))
	assert.NoError(t, guard.Sleep(context.Background(), -time.Second))
	assert.ErrorIs(t, guard.Sleep(ctx, 0), context.Canceled, "a done ctx is reported even without a delay")
}

// A schema violation names its path, except at the root; the detail is
// clipped at a rune boundary, a detail of exactly MaxDetail bytes kept.
func TestResponseContract_ViolationDetail(t *testing.T) {
	nested := rcTool(t, &tool.Contract{Output: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"n": {Type: "integer"},
	}}})
	obs := rcSend(t, guard.ResponseContractOptions{MaxDetail: -1}, nested, map[string]any{"n": "x"})
	require.Equal(t, errcode.ToolResultInvalid, obs.Code())
	detail := strings.TrimPrefix(obs.Reason(), "the result of list_sites does not have the agreed shape: ")
	assert.True(t, strings.HasPrefix(detail, "/properties/n: "), "a nested violation names its path: %q", detail)

	root := rcTool(t, &tool.Contract{Output: &jsonschema.Schema{Type: "array"}})
	obs = rcSend(t, guard.ResponseContractOptions{MaxDetail: -1}, root, map[string]any{})
	rootDetail := strings.TrimPrefix(obs.Reason(), "the result of list_sites does not have the agreed shape: ")
	assert.False(t, strings.HasPrefix(rootDetail, "root"), "a violation at the root names no path: %q", rootDetail)

	exact := rcSend(t, guard.ResponseContractOptions{MaxDetail: len(detail)}, nested, map[string]any{"n": "x"})
	assert.Equal(t, "the result of list_sites does not have the agreed shape: "+detail, exact.Reason(), "exactly MaxDetail bytes: not clipped")

	wide := rcTool(t, &tool.Contract{Output: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"ééééé": {Type: "integer"},
	}}})
	for limit := 14; limit <= 20; limit++ { // "/properties/" is 12 bytes; each é is 2
		got := rcSend(t, guard.ResponseContractOptions{MaxDetail: limit}, wide, map[string]any{"ééééé": "x"})
		d := strings.TrimPrefix(got.Reason(), "the result of list_sites does not have the agreed shape: ")
		assert.True(t, strings.HasSuffix(d, "…"), "clipped at %d: %q", limit, d)
		assert.True(t, utf8.ValidString(d),
			"clipped at %d bytes on a rune boundary: %q", limit, d)
		assert.LessOrEqual(t, len(strings.TrimSuffix(d, "…")), limit)
	}
}
