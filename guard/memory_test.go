package guard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/guard/guardtest"
)

func TestMemoryApprovals_Conformance(t *testing.T) {
	guardtest.RunApprovals(t, func() guard.Approvals { return guard.NewMemoryApprovals() })
}

func TestMemoryWriteLedger_Conformance(t *testing.T) {
	guardtest.RunWriteLedger(t, func() guard.WriteLedger { return guard.NewMemoryWriteLedger() })
}

func TestMemoryApprovals_ApproveTwiceGrantsTwo(t *testing.T) {
	ctx := context.Background()
	a := guard.NewMemoryApprovals()
	require.NoError(t, a.Approve(ctx, "r", "fp"))
	require.NoError(t, a.Approve(ctx, "r", "fp"))
	for i, want := range []bool{true, true, false} {
		ok, err := a.Consume(ctx, "r", "fp")
		require.NoError(t, err)
		assert.Equal(t, want, ok, "Consume #%d after two approvals = %v; want %v", i+1, ok, want)
	}
}

func TestMemoryApprovals_Forget(t *testing.T) {
	ctx := context.Background()
	a := guard.NewMemoryApprovals()
	require.NoError(t, a.Gate(ctx, "r", guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	require.NoError(t, a.Approve(ctx, "r", "fp"))
	a.Forget("r")
	_, ok, _ := a.Gated(ctx, "r")
	assert.False(t, ok, "a forgotten run has no gated call")
	ok, _ = a.Consume(ctx, "r", "fp")
	assert.False(t, ok, "and no approvals")
	require.NoError(t, a.Decline(ctx, "never-seen"), "declining in an unknown run is a no-op")
}
