package react_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
)

// A run whose sealed state takes exactly MaxSnapshotBytes is sealed, not
// interrupted (the bound is inclusive on both sides: TestMaxSnapshotBytes
// opens a snapshot of exactly the bound). The sealed length of this story
// varies by a byte from run to run, so the bound is a length one run
// sealed, and the story runs again until a run seals exactly that many
// bytes; a run that seals more is refused with its length in the error.
func TestMaxSnapshotBytes_SealsExactlyTheBound(t *testing.T) {
	list, _, create := sitesTools()
	probe := newEnv(t, approvalBefore(), list.Tool, create.Tool).run(approvalNode, "create a site called blog")
	require.Equal(t, react.Suspended, probe.Status)
	bound := len(probe.Snapshot)
	for i := range 50 {
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		e.cfg.MaxSnapshotBytes = bound
		l, err := react.New(e.cfg)
		require.NoError(t, err)
		res, err := l.Run(context.Background(), approvalNode, "create a site called blog")
		if errors.Is(err, react.ErrSnapshotTooLarge) {
			require.NotContains(t, err.Error(), fmt.Sprintf("takes %d bytes", bound), "try %d: a state of exactly the bound is sealed", i)
			continue
		}
		require.NoError(t, err, "try %d", i)
		require.Equal(t, react.Suspended, res.Status, "try %d", i)
		if len(res.Snapshot) == bound {
			return
		}
	}
	t.Fatalf("no run in 50 sealed exactly %d bytes", bound)
}
