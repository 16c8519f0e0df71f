package invoker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
)

func TestExecution(t *testing.T) {
	var nilEx *invoker.Execution
	assert.NotPanics(t, func() {
		nilEx.Executed("fp", outcome.Success, 0)
		nilEx.MarkReused()
		nilEx.MarkInsufficient("why")
	}, "a nil Execution ignores every note")

	var ex invoker.Execution
	ex.Executed("fp1", outcome.Failed, errcode.ToolTimeout)
	ex.Executed("", outcome.Failed, errcode.ToolUnavailable)
	ex.Executed("", outcome.Success, 0)
	assert.Equal(t, invoker.Execution{
		Attempts:    3,
		First:       invoker.Verdict{Outcome: outcome.Failed, Code: errcode.ToolTimeout},
		Last:        invoker.Verdict{Outcome: outcome.Success},
		Fingerprint: "fp1",
	}, ex, "the first attempt is never overwritten; an empty fingerprint keeps the noted one")
	ex.MarkReused()
	ex.MarkInsufficient("not delivered")
	assert.True(t, ex.Reused)
	assert.True(t, ex.Insufficient)
	assert.Equal(t, "not delivered", ex.Reason)
}

// A dispatcher passes an Execution down the chain and reads it after the
// call: here an interceptor retries once and an inner one notes every
// attempt, as the retry and evidence guards of package guard do.
func ExampleExecution() {
	attempts := 0
	tool := func(context.Context, invoker.Call) (observation.Observation, error) {
		attempts++
		if attempts == 1 {
			return observation.Failed(errcode.ToolUnavailable, "backend restarting", "wait"), nil
		}
		return observation.Success("ok", "42"), nil
	}
	retryOnce := func(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
		obs, err := next(ctx, call)
		if err == nil && obs.Outcome() == outcome.Failed {
			return next(ctx, call)
		}
		return obs, err
	}
	note := func(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
		obs, err := next(ctx, call)
		if err == nil {
			call.Execution.Executed("", obs.Outcome(), obs.Code())
		}
		return obs, err
	}
	h := invoker.Chain(tool, retryOnce, note)

	var ex invoker.Execution
	obs, _ := h(context.Background(), invoker.Call{ID: "c1", Name: "quote", Execution: &ex})
	fmt.Println("verdict:", obs.Outcome())
	fmt.Println("attempts:", ex.Attempts, "first:", ex.First.Outcome, ex.First.Code)
	// Output:
	// verdict: SUCCESS
	// attempts: 2 first: FAILED TOOL_UNAVAILABLE
}
