package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
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

// rtRig is a retry guard around a handler that answers from a script, one
// entry per attempt (the last entry repeats), with a recording sleep.
type rtRig struct {
	script   []observation.Observation
	attempts []int // call.Attempt of each execution
	delays   []time.Duration
	h        invoker.Handler
}

func newRTRig(opts guard.RetryOptions, script ...observation.Observation) *rtRig {
	r := &rtRig{script: script}
	if opts.Sleep == nil {
		opts.Sleep = func(_ context.Context, d time.Duration) error {
			r.delays = append(r.delays, d)
			return nil
		}
	}
	r.h = invoker.Chain(func(_ context.Context, call invoker.Call) (observation.Observation, error) {
		i := min(len(r.attempts), len(r.script)-1)
		r.attempts = append(r.attempts, call.Attempt)
		return r.script[i], nil
	}, guard.Retry(opts))
	return r
}

func rtTool(effect tool.Effect, p *tool.RetryPolicy) *tool.Tool {
	return &tool.Tool{Name: "fetch", Effect: effect, Retry: p, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }}
}

func rtFailed(code errcode.Code) observation.Observation {
	return observation.Failed(code, code.String(), "next")
}

func (r *rtRig) send(t *testing.T, ctx context.Context, call invoker.Call) observation.Observation {
	t.Helper()
	obs, err := r.h(ctx, call)
	require.NoError(t, err)
	return obs
}

func rtCall(tl *tool.Tool) invoker.Call {
	return invoker.Call{ID: "c1", Name: tl.Name, Args: json.RawMessage(`{}`), Tool: tl, Run: "run-1"}
}

func TestRetry_OnlyRetryableCodes(t *testing.T) {
	tests := []struct {
		code      errcode.Code
		retryable func(errcode.Code) bool
		want      int
		reason    string
	}{
		{errcode.ToolUnavailable, nil, 3, "temporarily unavailable is retried"},
		{errcode.ToolRateLimited, nil, 3, "rate limiting is temporarily unavailable"},
		{errcode.ToolUnreachable, nil, 3, "an unreachable backend is temporarily unavailable"},
		{errcode.ToolTimeout, nil, 1, "a timeout is not retried by default: the call may have run"},
		{errcode.ToolBusinessFailed, nil, 1, "a business failure is an answer, not a glitch"},
		{errcode.ToolError, nil, 1, "an unknown failure is not retried"},
		{errcode.ToolNotFound, nil, 1, "not found stays not found"},
		{errcode.ToolForbidden, nil, 1, "forbidden stays forbidden"},
		{errcode.ToolTimeout, func(c errcode.Code) bool { return c == errcode.ToolTimeout }, 3, "a policy may allow more codes"},
		{errcode.ToolUnavailable, func(errcode.Code) bool { return false }, 1, "a policy may allow fewer codes"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/%v", tt.code, tt.retryable != nil), func(t *testing.T) {
			r := newRTRig(guard.RetryOptions{}, rtFailed(tt.code))
			tl := rtTool(tool.Read, &tool.RetryPolicy{Attempts: 3, Retryable: tt.retryable})
			obs := r.send(t, context.Background(), rtCall(tl))
			assert.Equal(t, tt.code, obs.Code(), "the last failure is returned")
			assert.Len(t, r.attempts, tt.want, "Retry(%v) ran %d attempts; want %d (%s)", tt.code, len(r.attempts), tt.want, tt.reason)
		})
	}
}

func TestRetry_StopsAtFirstSuccess(t *testing.T) {
	r := newRTRig(guard.RetryOptions{}, rtFailed(errcode.ToolUnavailable), observation.Success("ok", nil))
	obs := r.send(t, context.Background(), rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 5})))
	assert.Equal(t, outcome.Success, obs.Outcome())
	assert.Equal(t, []int{1, 2}, r.attempts)
}

func TestRetry_NonFailuresNotRetried(t *testing.T) {
	for _, obs := range []observation.Observation{
		observation.Rejected(errcode.ArgJSONInvalid, "bad", "fix"),
		observation.Deferred(errcode.ApprovalRequired, "approve", "ask"),
	} {
		r := newRTRig(guard.RetryOptions{}, obs)
		got := r.send(t, context.Background(), rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 5, Retryable: func(errcode.Code) bool { return true }})))
		assert.Equal(t, obs.Code(), got.Code())
		assert.Len(t, r.attempts, 1, "a %v call did not run and is never retried", obs.Outcome())
	}
}

func TestRetry_NeverWriteWithoutKey(t *testing.T) {
	tests := []struct {
		name   string
		effect tool.Effect
		key    string
		want   int
		reason string
	}{
		{"write without key", tool.Write, "", 1, "a write without an idempotency key could apply twice"},
		{"unspecified without key", tool.Unspecified, "", 1, "an undeclared effect counts as a write"},
		{"write with key", tool.Write, "rg-1", 3, "the backend deduplicates a write by its key"},
		{"read without key", tool.Read, "", 3, "reads need no key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRTRig(guard.RetryOptions{}, rtFailed(errcode.ToolUnavailable))
			call := rtCall(rtTool(tt.effect, &tool.RetryPolicy{Attempts: 3}))
			call.IdempotencyKey = tt.key
			r.send(t, context.Background(), call)
			assert.Len(t, r.attempts, tt.want, "%s ran %d attempts; want %d (%s)", tt.name, len(r.attempts), tt.want, tt.reason)
		})
	}
}

func TestRetry_StopsWhenContextDone(t *testing.T) {
	t.Run("during backoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r := newRTRig(guard.RetryOptions{Sleep: func(ctx context.Context, _ time.Duration) error {
			cancel()
			return ctx.Err()
		}}, rtFailed(errcode.ToolUnavailable))
		obs := r.send(t, ctx, rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 5, BaseDelay: time.Second})))
		assert.Equal(t, errcode.ToolUnavailable, obs.Code(), "the last failure is the answer")
		assert.Len(t, r.attempts, 1, "no attempt after the caller's context is done")
	})
	t.Run("during the attempt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var slept bool
		r := &rtRig{}
		r.h = invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) {
			r.attempts = append(r.attempts, 1)
			cancel()
			return rtFailed(errcode.ToolUnavailable), nil
		}, guard.Retry(guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { slept = true; return nil }}))
		r.send(t, ctx, rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 5})))
		assert.Len(t, r.attempts, 1)
		assert.False(t, slept, "no backoff once the context is done")
	})
	t.Run("sleep returns but context done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r := newRTRig(guard.RetryOptions{Sleep: func(context.Context, time.Duration) error {
			cancel()
			return nil // a sleep that ignores ctx
		}}, rtFailed(errcode.ToolUnavailable))
		r.send(t, ctx, rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 5})))
		assert.Len(t, r.attempts, 1, "the guard checks ctx itself after the wait")
	})
}

func TestRetry_EachAttemptRecorded(t *testing.T) {
	ledger := evidence.NewMemory()
	script := []observation.Observation{
		observation.Failed(errcode.ToolUnavailable, "503", "later", json.RawMessage(`{"status":503}`)),
		observation.Failed(errcode.ToolRateLimited, "429", "later"),
		observation.Success("ok", json.RawMessage(`{"sites":[]}`)),
	}
	n := 0
	h := invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) {
		n++
		return script[n-1], nil
	},
		guard.Retry(guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}),
		guard.Evidence(guard.EvidenceOptions{Ledger: ledger}),
	)
	tl := rtTool(tool.Read, &tool.RetryPolicy{Attempts: 3})
	obs, err := h(context.Background(), rtCall(tl))
	require.NoError(t, err)
	require.Equal(t, outcome.Success, obs.Outcome())

	recs, err := ledger.Records(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, recs, 3, "every attempt is recorded")
	for i, want := range []struct {
		o    outcome.Outcome
		code errcode.Code
	}{{outcome.Failed, errcode.ToolUnavailable}, {outcome.Failed, errcode.ToolRateLimited}, {outcome.Success, 0}} {
		assert.Equal(t, i+1, recs[i].Attempt, "record %d attempt", i)
		assert.Equal(t, want.o, recs[i].Outcome, "record %d outcome", i)
		assert.Equal(t, want.code, recs[i].Code, "record %d code", i)
		assert.Equal(t, "c1", recs[i].CallID)
	}
	assert.JSONEq(t, `{"status":503}`, string(recs[0].Payload), "the first failure is kept with its body")
}

func TestRetry_AttemptsContinueFromCall(t *testing.T) {
	r := newRTRig(guard.RetryOptions{}, rtFailed(errcode.ToolUnavailable))
	call := rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 3}))
	call.Attempt = 4
	r.send(t, context.Background(), call)
	assert.Equal(t, []int{4, 5, 6}, r.attempts, "attempt numbers continue from the call's own; Attempts counts this call's executions")
}

func TestRetry_Backoff(t *testing.T) {
	tests := []struct {
		name   string
		policy tool.RetryPolicy
		rnd    *rand.Rand
		want   []time.Duration
		reason string
	}{
		{"exponential", tool.RetryPolicy{Attempts: 4, BaseDelay: 100 * time.Millisecond},
			nil, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, "the delay doubles"},
		{"capped", tool.RetryPolicy{Attempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: 150 * time.Millisecond},
			nil, []time.Duration{100 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond}, "MaxDelay caps it"},
		{"no delay", tool.RetryPolicy{Attempts: 3}, nil, []time.Duration{0, 0}, "no BaseDelay, no wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRTRig(guard.RetryOptions{Rand: tt.rnd}, rtFailed(errcode.ToolUnavailable))
			p := tt.policy
			r.send(t, context.Background(), rtCall(rtTool(tool.Read, &p)))
			assert.Equal(t, tt.want, r.delays, "%s", tt.reason)
		})
	}
}

func TestRetry_JitterFromInjectedRand(t *testing.T) {
	delays := func(seed uint64) []time.Duration {
		r := newRTRig(guard.RetryOptions{Rand: rand.New(rand.NewPCG(seed, 0))}, rtFailed(errcode.ToolUnavailable))
		r.send(t, context.Background(), rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 4, BaseDelay: 100 * time.Millisecond, Jitter: 1})))
		return r.delays
	}
	a, b := delays(7), delays(7)
	assert.Equal(t, a, b, "the same seed gives the same delays: tests are deterministic")
	require.Len(t, a, 3)
	for i, d := range a {
		ceiling := (100 * time.Millisecond) << i
		assert.True(t, d >= 0 && d <= ceiling, "delay %d = %v; want within [0, %v]", i, d, ceiling)
	}
	assert.NotEqual(t, delays(8), a, "another seed gives other delays")
}

func TestRetry_DefaultPolicy(t *testing.T) {
	r := newRTRig(guard.RetryOptions{Default: &tool.RetryPolicy{Attempts: 2}}, rtFailed(errcode.ToolUnavailable))
	r.send(t, context.Background(), rtCall(rtTool(tool.Read, nil)))
	assert.Len(t, r.attempts, 2, "a tool without a policy gets the default")

	r = newRTRig(guard.RetryOptions{Default: &tool.RetryPolicy{Attempts: 5}}, rtFailed(errcode.ToolUnavailable))
	r.send(t, context.Background(), rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 1})))
	assert.Len(t, r.attempts, 1, "a tool's own policy wins over the default")
}

func TestRetry_PassesWhatIsNotItsJob(t *testing.T) {
	r := newRTRig(guard.RetryOptions{}, rtFailed(errcode.ToolUnavailable))
	r.send(t, context.Background(), rtCall(rtTool(tool.Read, nil)))
	assert.Equal(t, []int{0}, r.attempts, "no policy: one attempt, the call untouched")

	r = newRTRig(guard.RetryOptions{}, rtFailed(errcode.ToolUnavailable))
	r.send(t, context.Background(), invoker.Call{ID: "c", Name: "nothing"})
	assert.Len(t, r.attempts, 1, "a call without a tool passes through")
}

func TestRetry_ErrorFromNextStops(t *testing.T) {
	boom := errors.New("store down")
	n := 0
	h := invoker.Chain(func(context.Context, invoker.Call) (observation.Observation, error) {
		n++
		return observation.Observation{}, boom
	}, guard.Retry(guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}))
	_, err := h(context.Background(), rtCall(rtTool(tool.Read, &tool.RetryPolicy{Attempts: 3})))
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, n)
}

func TestSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, guard.Sleep(ctx, time.Hour), context.Canceled, "a done context ends the wait at once")
	// Without the early return, a zero timer and the done context are both
	// ready and select picks one at random: ask 64 times.
	for i := range 64 {
		require.ErrorIs(t, guard.Sleep(ctx, 0), context.Canceled, "a zero wait still reports a done context (try %d)", i)
	}
	assert.NoError(t, guard.Sleep(context.Background(), 0))
	assert.NoError(t, guard.Sleep(context.Background(), time.Nanosecond), "a short wait ends by itself")
}

func ExampleRetry() {
	attempt := 0
	fetch := tool.New("fetch_report", "fetches a report", func(context.Context, struct{}) (string, error) {
		attempt++
		if attempt < 3 {
			return "", tool.Unavailable("backend restarting")
		}
		return "report", nil
	})
	fetch.Effect = tool.Read
	fetch.Retry = &tool.RetryPolicy{Attempts: 3, BaseDelay: 100 * time.Millisecond, Jitter: 0.5}
	tool.MustCatalog(fetch)

	h := invoker.Chain(invoker.New(nil), guard.Retry(guard.RetryOptions{
		Sleep: func(_ context.Context, d time.Duration) error { // an injected clock: no real waiting
			fmt.Println("backoff before the next attempt")
			return nil
		},
		Rand: rand.New(rand.NewPCG(1, 2)),
	}))
	obs, _ := h(context.Background(), invoker.Call{ID: "c1", Name: "fetch_report", Args: json.RawMessage(`{}`), Tool: fetch})
	fmt.Println(obs, "after", attempt, "attempts")
	// Output:
	// backoff before the next attempt
	// backoff before the next attempt
	// SUCCESS: fetch_report succeeded after 3 attempts
}

// allCodes is a retry policy that allows every code, as a careless host
// might configure it.
func allCodes(attempts int) *tool.RetryPolicy {
	return &tool.RetryPolicy{Attempts: attempts, Retryable: func(errcode.Code) bool { return true }}
}

func TestRetry_NeverRetriesUncertainWrite(t *testing.T) {
	tests := []struct {
		name   string
		effect tool.Effect
		code   errcode.Code
		want   int
		reason string
	}{
		{"write unreachable", tool.Write, errcode.ToolUnreachable, 1, "the request may have reached the backend"},
		{"write timeout", tool.Write, errcode.ToolTimeout, 1, "the backend may have applied the write"},
		{"write mcp rpc error", tool.Write, errcode.MCPRPCError, 1, "the server may have acted before it answered"},
		{"write i/o error", tool.Write, errcode.ToolIOError, 1, "the write may be half done"},
		{"unspecified timeout", tool.Unspecified, errcode.ToolTimeout, 1, "an undeclared effect counts as a write"},
		{"write unavailable", tool.Write, errcode.ToolUnavailable, 3, "a definitive refusal did not apply the write"},
		{"read timeout", tool.Read, errcode.ToolTimeout, 3, "a read may run again if the policy allows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRTRig(guard.RetryOptions{}, rtFailed(tt.code))
			call := rtCall(rtTool(tt.effect, allCodes(3)))
			call.IdempotencyKey = "rg-1"
			obs := r.send(t, context.Background(), call)
			assert.Equal(t, tt.code, obs.Code())
			assert.Len(t, r.attempts, tt.want, "%s ran %d attempts; want %d (%s)", tt.name, len(r.attempts), tt.want, tt.reason)
		})
	}
}

// TestDefault_UncertainWriteNeverRerun sends an approved write that fails
// with an uncertain code through the default chain, with a retry policy
// that allows every code: it runs once, is recorded uncertain, and the next
// call of the same write is answered WRITE_PENDING_VERIFY, or, with a
// verifier that finds it applied, reuses the verified result; it never runs
// a second time.
func TestDefault_UncertainWriteNeverRerun(t *testing.T) {
	for _, kind := range []tool.Kind{tool.KindUnreachable, tool.KindTimeout, tool.KindMCPRPC} {
		for _, verify := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s verify=%v", kind, verify), func(t *testing.T) {
				var runs int
				create := tool.New("create_site", "creates a site", func(_ context.Context, in chSite) (chSite, error) {
					runs++
					return chSite{}, tool.Classified(kind, "the connection dropped after the request was sent", nil)
				})
				create.Effect, create.Retry = tool.Write, allCodes(5)
				if verify {
					create.Verify = func(context.Context, string) (tool.WriteStatus, any, error) {
						return tool.WriteApplied, map[string]any{"name": "shop", "verified": true}, nil
					}
				}
				tool.MustCatalog(create)
				opts := guard.Options{Retry: guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }}}
				h := invoker.Chain(invoker.New(nil), guard.Default(&opts)...)
				chSend(t, h, "c1", create, `{"name":"shop"}`)
				gc, _, _ := opts.Approvals.Gated(context.Background(), "run-1")
				require.NoError(t, opts.Approvals.Approve(context.Background(), "run-1", gc.CallID, gc.Fingerprint))

				got := chSend(t, h, "c2", create, `{"name":"shop"}`)
				assert.Equal(t, kind.Code(), got.code, "the approved write fails with %s", kind.Code())
				assert.Equal(t, 1, runs, "an uncertain write ran %d times; want 1 whatever the retry policy", runs)
				rec, _, err := opts.WriteLedger.Get(context.Background(), guard.IdempotencyKey("run-1", gc.Fingerprint))
				require.NoError(t, err)
				assert.Equal(t, guard.WriteUncertain, rec.State, "the ledger records the write as uncertain")

				again := chSend(t, h, "c3", create, `{"name":"shop"}`)
				if verify {
					assert.Equal(t, outcome.Success, again.o, "a verified write is reused")
				} else {
					assert.Equal(t, errcode.WritePendingVerify, again.code, "an unverified write waits for verification")
				}
				assert.Equal(t, 1, runs, "the write was run again before it was verified")
			})
		}
	}
}

// TestRetry_UsesTheWriteGatesUncertainFunc: the retry guard asks the write
// gate outside it, so a host's Uncertain policy holds for retries too.
func TestRetry_UsesTheWriteGatesUncertainFunc(t *testing.T) {
	var runs int
	create := tool.New("create_site", "creates a site", func(_ context.Context, in chSite) (chSite, error) {
		runs++
		return chSite{}, tool.Unavailable("gateway answered 503 after forwarding")
	})
	create.Effect, create.Retry = tool.Write, allCodes(4)
	tool.MustCatalog(create)
	opts := guard.Options{
		RequireApproval: func(invoker.Call) bool { return false },
		Uncertain:       func(c errcode.Code) bool { return c == errcode.ToolUnavailable },
		Retry:           guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }},
	}
	h := invoker.Chain(invoker.New(nil), guard.Default(&opts)...)
	assert.Equal(t, errcode.ToolUnavailable, chSend(t, h, "c1", create, `{"name":"shop"}`).code)
	assert.Equal(t, 1, runs, "a failure the host calls uncertain is not retried")
	assert.Equal(t, errcode.WritePendingVerify, chSend(t, h, "c2", create, `{"name":"shop"}`).code)
	assert.Equal(t, 1, runs)
}
