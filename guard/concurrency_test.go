package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// TestWriteGate_200GoroutinesSameApprovedWrite sends one approved write
// from 200 goroutines at once through the full default chain. The write
// must execute exactly once; every other caller gets WRITE_IN_FLIGHT while
// it runs, or the reused SUCCESS after it finished.
//
// The tool blocks until half of the callers have their answer, so both
// answers are exercised without any timing assumption: while the write
// blocks, every answer can only be WRITE_IN_FLIGHT.
func TestWriteGate_200GoroutinesSameApprovedWrite(t *testing.T) {
	const callers = 200
	var execs atomic.Int32
	release := make(chan struct{})
	createSite := tool.New("create_site", "creates a site", func(ctx context.Context, in struct {
		Name string `json:"name"`
	}) (map[string]string, error) {
		execs.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]string{"id": "s-1", "name": in.Name}, nil
	})
	createSite.Effect = tool.Write
	tool.MustCatalog(createSite)

	var opts guard.Options
	h := invoker.Chain(invoker.New(nil), guard.Default(&opts)...)
	ctx := context.Background()
	args := json.RawMessage(`{"name":"shop"}`)

	// The model's first call is deferred; the user approves it.
	first, err := h(ctx, invoker.Call{ID: "c0", Name: "create_site", Args: args, Tool: createSite, Run: "run-1"})
	require.NoError(t, err)
	require.Equal(t, errcode.ApprovalRequired, first.Code())
	gc, _, err := opts.Approvals.Gated(ctx, "run-1")
	require.NoError(t, err)
	require.NoError(t, opts.Approvals.Approve(ctx, "run-1", gc.CallID, gc.Fingerprint))

	type answer struct {
		obs observation.Observation
		err error
	}
	answers := make(chan answer, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			obs, err := h(ctx, invoker.Call{ID: fmt.Sprint("c", i+1), Name: "create_site", Args: args, Tool: createSite, Run: "run-1", Round: 2})
			answers <- answer{obs, err}
		})
	}
	close(start)

	var got []answer
	for len(got) < callers/2 {
		got = append(got, <-answers)
	}
	for i, a := range got {
		require.NoError(t, a.err)
		assert.Equal(t, errcode.WriteInFlight, a.obs.Code(), "answer %d while the write blocks = %v; want WRITE_IN_FLIGHT", i, a.obs)
	}
	close(release)
	wg.Wait()
	close(answers)
	for a := range answers {
		got = append(got, a)
	}

	require.Len(t, got, callers)
	assert.EqualValues(t, 1, execs.Load(), "the approved write must execute exactly once")
	var executed, reused, inFlight, tripped int
	reusedText := prompt.Default().Text(prompt.ResultWriteReused, "tool", "create_site")
	for _, a := range got {
		require.NoError(t, a.err)
		switch {
		case a.obs.Outcome() == outcome.Success && a.obs.Reason() == reusedText:
			reused++
		case a.obs.Outcome() == outcome.Success:
			executed++
		case a.obs.Outcome() == outcome.Deferred && a.obs.Code() == errcode.WriteInFlight:
			inFlight++
		case a.obs.Outcome() == outcome.Rejected && a.obs.Code() == errcode.FingerprintTrip:
			tripped++ // the execution and a reuse reached the limit of 2 identical calls
		default:
			t.Errorf("answer %v; want SUCCESS, DEFERRED WRITE_IN_FLIGHT or REJECTED FINGERPRINT_TRIP", a.obs)
		}
	}
	assert.Equal(t, 1, executed, "exactly one caller ran the write")
	// Reuses count towards the fingerprint limit; calls that check it at
	// the same moment may all pass (the loop never runs a run's writes
	// concurrently), so only their sum is exact.
	assert.Equal(t, callers, executed+reused+inFlight+tripped)
	t.Logf("%d executed, %d reused, %d in flight, %d tripped", executed, reused, inFlight, tripped)

	recs, err := opts.Ledger.Records(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, recs, 1+reused, "one record of the execution, one per reuse")
	n, _, err := opts.Ledger.Executions(ctx, "run-1", gc.Fingerprint)
	require.NoError(t, err)
	assert.Equal(t, 1+reused, n, "the execution and every reuse count as calls with the fingerprint")
	ok, err := opts.Approvals.Consume(ctx, "run-1", gc.Fingerprint)
	require.NoError(t, err)
	assert.False(t, ok, "the one approval was consumed once")
}
