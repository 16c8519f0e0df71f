package guard

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// SleepFunc waits for d or until ctx is done, whichever comes first, and
// returns ctx's error in the second case. The retry guard waits between
// attempts through it, so tests inject one that does not sleep.
type SleepFunc func(ctx context.Context, d time.Duration) error

// Sleep is the default [SleepFunc]: a timer that honours ctx. A d of 0 or
// less returns at once (with ctx's error if it is done).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RetryOptions configures [Retry]. The zero value is ready to use: each
// tool's own policy, real timers, the global random source.
type RetryOptions struct {
	// Default is the policy of tools whose Retry is nil; nil means such
	// tools are not retried.
	Default *tool.RetryPolicy
	// Sleep waits between attempts; nil means [Sleep].
	Sleep SleepFunc
	// Rand draws the jitter of each delay; nil means math/rand/v2's global
	// source. The guard serialises its use, so one Rand may be given even
	// though *rand.Rand is not safe for concurrent use.
	Rand *rand.Rand
}

// Retry returns the retry guard (see the package documentation for its
// place in the chain). It runs next again after a FAILED observation while
// all of these hold:
//
//   - the tool has a retry policy (tool.Tool.Retry, else opts.Default)
//     with attempts left: Attempts counts executions, the first included;
//   - the policy allows the code ([tool.RetryPolicy.Allows]: by default
//     [errcode.Code.Retryable], only temporarily-unavailable failures);
//   - the tool is not a write, or the call carries an idempotency key (the
//     write gate, outside this guard, assigns one), so a repeated write is
//     applied at most once by the backend;
//   - the tool is not a write, or its failure is definitive: a write whose
//     failure leaves it uncertain (the write gate's [UncertainFunc], or
//     [UncertainWrite] when no write gate is outside this guard) is never
//     run again, whatever the policy allows; the write gate records it as
//     uncertain and verifies it before anything runs it again (an
//     uncertain write may be checked, never resubmitted);
//   - ctx is not done, before and after the backoff delay
//     ([tool.RetryPolicy.Delay]: exponential, capped, with jitter).
//
// Each attempt goes down with call.Attempt one higher (from 1, or the
// call's own value), so the evidence guard inside records every attempt in
// order. The last observation is returned: the first SUCCESS, a failure
// that may not be retried, or the last failure when attempts or ctx ran
// out. Errors from next end the loop and are returned. Calls without a tool
// pass through. The interceptor starts no goroutines and is safe for
// concurrent use.
func Retry(opts RetryOptions) invoker.Interceptor {
	g := &retryGuard{def: opts.Default, sleep: opts.Sleep, rnd: opts.Rand}
	if g.sleep == nil {
		g.sleep = Sleep
	}
	return g.intercept
}

type retryGuard struct {
	def   *tool.RetryPolicy
	sleep SleepFunc
	mu    sync.Mutex // guards rnd
	rnd   *rand.Rand
}

func (g *retryGuard) intercept(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
	t := call.Tool
	if t == nil {
		return next(ctx, call)
	}
	p := t.Retry
	if p == nil {
		p = g.def
	}
	if p == nil || p.Attempts <= 1 || (t.Effect.IsWrite() && call.IdempotencyKey == "") {
		return next(ctx, call)
	}
	uncertain := func(errcode.Code) bool { return false }
	if t.Effect.IsWrite() {
		uncertain = uncertainOf(ctx)
	}
	call.Attempt = max(call.Attempt, 1)
	for n := 1; ; n++ {
		obs, err := next(ctx, call)
		if err != nil || obs.Outcome() != outcome.Failed || n >= p.Attempts || !p.Allows(obs.Code()) || uncertain(obs.Code()) {
			return obs, err
		}
		if ctx.Err() != nil {
			return obs, nil
		}
		if err := g.sleep(ctx, g.delay(p, n+1)); err != nil || ctx.Err() != nil {
			return obs, nil
		}
		call.Attempt++
	}
}

// delay returns the wait before attempt n of policy p.
func (g *retryGuard) delay(p *tool.RetryPolicy, n int) time.Duration {
	if g.rnd == nil {
		return p.Delay(n, nil)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return p.Delay(n, g.rnd)
}
