package react_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
)

type textEnum interface {
	String() string
	MarshalText() ([]byte, error)
}

func TestEnums(t *testing.T) {
	for _, s := range []react.Status{react.Finished, react.Failed, react.Suspended, react.Interrupted} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var back react.Status
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back, "Status round trip of %s", b)
		assert.True(t, s.IsValid())
	}
	for _, k := range []react.SuspensionKind{react.SuspendApproval, react.SuspendFollowUp} {
		b, err := k.MarshalText()
		require.NoError(t, err)
		var back react.SuspensionKind
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, k, back)
	}
	for _, s := range []react.SourceType{react.SourceUser, react.SourceToolResult, react.SourceModel} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var back react.SourceType
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back)
	}
	assert.Equal(t, []string{"model", "no_progress", "round_limit", "failure(0)"},
		[]string{react.FailedByModel.String(), react.FailedNoProgress.String(), react.FailedRoundLimit.String(), react.FailureKind(0).String()})

	// Zero values are invalid and never marshalled; unknown names are refused.
	invalid := []textEnum{react.Status(0), react.SuspensionKind(0), react.SourceType(0)}
	names := []string{"status(0)", "suspension(0)", "source(0)"}
	for i, v := range invalid {
		_, err := v.MarshalText()
		assert.Error(t, err, "%T zero value", v)
		assert.Equal(t, names[i], v.String())
	}
	var s react.Status
	assert.Error(t, s.UnmarshalText([]byte("done")))
	var k react.SuspensionKind
	assert.Error(t, k.UnmarshalText([]byte("human")))
	var src react.SourceType
	assert.Error(t, src.UnmarshalText([]byte("guess")))
	assert.Equal(t, react.SourceType(0), src, "unchanged on error")
	assert.Equal(t, "approve", react.Approve("t").String())
	assert.Equal(t, "none", react.Decision{}.String())
	for _, d := range []react.Decision{react.Decline("t", "x"), react.Answer("t", "y"), react.Continue()} {
		assert.NotEqual(t, "none", d.String())
	}
}
