package tool_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/tool"
)

func TestRequirement_Text(t *testing.T) {
	tests := []struct {
		r    tool.Requirement
		text string
	}{
		{0, "none"},
		{tool.RequireLatest, "latest"},
		{tool.RequireComplete, "complete"},
		{tool.RequireLatest | tool.RequireComplete, "latest+complete"},
	}
	for _, tt := range tests {
		b, err := tt.r.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, tt.text, string(b))
		var back tool.Requirement
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, tt.r, back)
	}
	_, err := tool.Requirement(8).MarshalText()
	assert.Error(t, err, "an undefined bit")
	r := tool.RequireLatest
	assert.Error(t, r.UnmarshalText([]byte("latest+fresh")))
	assert.Equal(t, tool.RequireLatest, r, "unchanged on error")
	assert.True(t, (tool.RequireLatest | tool.RequireComplete).Has(tool.RequireComplete))
	assert.False(t, tool.RequireLatest.Has(tool.RequireComplete))
	for _, w := range []tool.Wall{tool.NoWall, tool.WallCaptcha, tool.WallLogin, tool.WallRate} {
		assert.True(t, w.IsValid())
		assert.NotContains(t, w.String(), "wall(")
	}
	assert.False(t, tool.Wall(9).IsValid())
}

// Names starting with step: are the ledger's records of a task's steps:
// no tool may take one.
func TestStepNamesReserved(t *testing.T) {
	tl := tool.New("step:search", "x", func(context.Context, struct{}) (int, error) { return 0, nil })
	_, err := tool.NewCatalog(tl)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reserved")
	src := tool.Step("search", "hotel_id")
	assert.Equal(t, tool.Source{Kind: tool.FromStep, Step: "search", Field: "hotel_id"}, src)
	assert.Equal(t, "step", tool.FromStep.String())
	bad := tool.New("book", "x", func(context.Context, struct {
		ID string `json:"id"`
	}) (int, error) {
		return 0, nil
	})
	bad.Params = map[string]tool.Source{"id": tool.Step("", "id")}
	_, err = tool.NewCatalog(bad)
	assert.ErrorContains(t, err, "a step source needs a step and an output key")
}
