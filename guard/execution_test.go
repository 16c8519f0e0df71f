package guard_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// The guards note the execution account of a call in call.Execution: the
// evidence guard every executed attempt (the first kept after a retry
// recovered), the write gate a reuse, the response contract a result that
// falls short of the business contract.
func TestExecutionAccount(t *testing.T) {
	ctx := context.Background()
	flaky := func(fails int, code errcode.Code) invoker.Handler {
		n := 0
		return func(context.Context, invoker.Call) (observation.Observation, error) {
			n++
			if n <= fails {
				return observation.Failed(code, "down", "wait"), nil
			}
			return observation.Success("ok", map[string]int{"n": n}), nil
		}
	}
	read := &tool.Tool{Name: "fetch", Effect: tool.Read, InputSchema: &jsonschema.Schema{Type: "object"}, Retry: &tool.RetryPolicy{Attempts: 3}}
	chain := func(h invoker.Handler) invoker.Handler {
		return invoker.Chain(h, guard.Retry(guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}),
			guard.Evidence(guard.EvidenceOptions{Ledger: evidence.NewMemory()}))
	}

	t.Run("recovered on retry", func(t *testing.T) {
		var ex invoker.Execution
		obs, err := chain(flaky(1, errcode.ToolRateLimited))(ctx, invoker.Call{ID: "c", Name: "fetch", Args: []byte(`{}`), Run: "r", Tool: read, Execution: &ex})
		require.NoError(t, err)
		require.Equal(t, outcome.Success, obs.Outcome())
		assert.Equal(t, 2, ex.Attempts)
		assert.Equal(t, invoker.Verdict{Outcome: outcome.Failed, Code: errcode.ToolRateLimited}, ex.First, "the first failure is kept")
		assert.Equal(t, invoker.Verdict{Outcome: outcome.Success}, ex.Last)
		assert.NotEmpty(t, ex.Fingerprint)
	})
	t.Run("every attempt failed", func(t *testing.T) {
		var ex invoker.Execution
		_, err := chain(flaky(5, errcode.ToolUnavailable))(ctx, invoker.Call{ID: "c", Name: "fetch", Args: []byte(`{}`), Run: "r", Tool: read, Execution: &ex})
		require.NoError(t, err)
		assert.Equal(t, 3, ex.Attempts)
		assert.Equal(t, ex.First, ex.Last)
	})
	t.Run("rejected inside: nothing executed", func(t *testing.T) {
		var ex invoker.Execution
		h := chain(func(context.Context, invoker.Call) (observation.Observation, error) {
			return observation.Rejected(errcode.ArgRejected, "bad", "fix"), nil
		})
		_, err := h(ctx, invoker.Call{ID: "c", Name: "fetch", Args: []byte(`{}`), Run: "r", Tool: read, Execution: &ex})
		require.NoError(t, err)
		assert.Equal(t, invoker.Execution{}, ex)
	})
	t.Run("no account wanted", func(t *testing.T) {
		obs, err := chain(flaky(1, errcode.ToolRateLimited))(ctx, invoker.Call{ID: "c", Name: "fetch", Args: []byte(`{}`), Run: "r", Tool: read})
		require.NoError(t, err)
		assert.Equal(t, outcome.Success, obs.Outcome(), "a nil Execution is never written")
	})

	t.Run("reused write", func(t *testing.T) {
		r := newWGRig(t, guard.WriteGateOptions{})
		r.call(t, `{"name":"blog"}`)
		r.approveGated(t)
		r.call(t, `{"name":"blog"}`)
		var ex invoker.Execution
		obs, err := r.h(ctx, invoker.Call{ID: "w2", Name: r.tool.Name, Args: []byte(`{"name":"blog"}`), Run: wgRun, Tool: r.tool, Execution: &ex})
		require.NoError(t, err)
		require.Equal(t, outcome.Success, obs.Outcome())
		assert.True(t, ex.Reused, "the write gate answered from the write ledger")
		assert.Zero(t, ex.Attempts, "nothing executed")
	})

	t.Run("insufficient result", func(t *testing.T) {
		delivered := &tool.Tool{Name: "order", Contract: &tool.Contract{Sufficient: func(r any) (bool, string) {
			return r.(map[string]string)["status"] == "delivered", "the order is not delivered yet"
		}}}
		rc := guard.ResponseContract(guard.ResponseContractOptions{})
		for _, tt := range []struct {
			status string
			want   bool
		}{{"delivered", false}, {"pending", true}} {
			var ex invoker.Execution
			obs, err := rc(ctx, invoker.Call{ID: "c", Name: "order", Tool: delivered, Execution: &ex},
				func(context.Context, invoker.Call) (observation.Observation, error) {
					return observation.Success("ok", map[string]string{"status": tt.status}), nil
				})
			require.NoError(t, err)
			assert.Equal(t, outcome.Success, obs.Outcome(), "the verdict stays SUCCESS")
			assert.Equal(t, tt.want, ex.Insufficient, "status %s", tt.status)
			if tt.want {
				assert.Equal(t, "the order is not delivered yet", ex.Reason)
			}
		}
	})
	t.Run("sufficiency check panics", func(t *testing.T) {
		broken := &tool.Tool{Name: "order", Contract: &tool.Contract{Sufficient: func(r any) (bool, string) { panic("nil map") }}}
		var ex invoker.Execution
		obs, err := guard.ResponseContract(guard.ResponseContractOptions{})(ctx, invoker.Call{ID: "c", Name: "order", Tool: broken, Execution: &ex},
			func(context.Context, invoker.Call) (observation.Observation, error) {
				return observation.Success("ok", 1), nil
			})
		require.NoError(t, err)
		assert.Equal(t, errcode.ToolResultInvalid, obs.Code(), "host code meeting data it did not expect")
	})
}
