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

func TestMemoryApprovals_Forget(t *testing.T) {
	ctx := context.Background()
	a := guard.NewMemoryApprovals()
	require.NoError(t, a.Gate(ctx, "r", guard.GatedCall{CallID: "c1", Tool: "w", Fingerprint: "fp"}))
	require.NoError(t, a.Approve(ctx, "r", "c1", "fp"))
	a.Forget("r")
	_, ok, _ := a.Gated(ctx, "r")
	assert.False(t, ok, "a forgotten run has no gated call")
	ok, _ = a.Consume(ctx, "r", "fp")
	assert.False(t, ok, "and no approvals")
	require.ErrorIs(t, a.Decline(ctx, "never-seen", "c1"), guard.ErrNotPending, "nothing waits in an unknown run")
}
