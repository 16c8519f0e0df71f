package task

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/react"
)

func TestResultAsRun(t *testing.T) {
	s := &react.Suspension{Kind: react.SuspendFollowUp, Question: "?"}
	for _, tt := range []struct {
		in   Result
		want react.Status
	}{
		{Result{Status: Suspended, Run: "r2", Suspension: s}, react.Suspended},
		{Result{Status: Interrupted, Run: "r2"}, react.Interrupted},
		{Result{Status: Met}, react.Finished},
		{Result{Status: PartiallyMet}, react.Finished},
		{Result{Status: Unmet}, react.Failed},
	} {
		got := tt.in.asRun()
		assert.Equal(t, tt.want, got.Status, "%v", tt.in.Status)
		assert.NotNil(t, got.Outputs)
		if tt.in.Status == Suspended {
			assert.Same(t, s, got.Suspension)
			assert.Equal(t, "r2", got.Run)
		}
	}
}
