package runstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/runstore"
)

// Every kind has one text form that reads back; anything else is refused
// and leaves the value unchanged.
func TestKind_Text(t *testing.T) {
	for k, name := range map[runstore.Kind]string{runstore.Approval: "approval", runstore.FollowUp: "follow_up", runstore.Interrupted: "interrupted"} {
		assert.True(t, k.IsValid())
		assert.Equal(t, name, k.String())
		b, err := k.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, name, string(b))
		got, err := runstore.ParseKind(name)
		require.NoError(t, err)
		assert.Equal(t, k, got)
		var back runstore.Kind
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, k, back)
	}
	for _, k := range []runstore.Kind{0, 4, 255} {
		assert.False(t, k.IsValid(), "kind %d", k)
		assert.Equal(t, fmt.Sprintf("kind(%d)", k), k.String())
		_, err := k.MarshalText()
		assert.Error(t, err)
	}
	for _, s := range []string{"", "Approval", "kind(1)", "interrupted "} {
		_, err := runstore.ParseKind(s)
		assert.Error(t, err, "ParseKind(%q)", s)
		k := runstore.FollowUp
		assert.Error(t, k.UnmarshalText([]byte(s)))
		assert.Equal(t, runstore.FollowUp, k, "unchanged on error")
	}
}

// Check names what a run lacks.
func TestCheck(t *testing.T) {
	ok := runstore.Run{ID: "r", Kind: runstore.Approval, Snapshot: []byte("s"), Stopped: time.Unix(1, 0)}
	require.NoError(t, runstore.Check(ok))
	tests := []struct {
		name string
		edit func(*runstore.Run)
		want string
	}{
		{"no id", func(r *runstore.Run) { r.ID = "" }, "no id"},
		{"no kind", func(r *runstore.Run) { r.Kind = 0 }, "kind 0"},
		{"no snapshot", func(r *runstore.Run) { r.Snapshot = nil }, "no snapshot"},
		{"no stop time", func(r *runstore.Run) { r.Stopped = time.Time{} }, "no stop time"},
	}
	for _, tt := range tests {
		r := ok
		tt.edit(&r)
		err := runstore.Check(r)
		assert.True(t, errors.Is(err, runstore.ErrInvalidRun), "%s: %v", tt.name, err)
		assert.ErrorContains(t, err, tt.want, tt.name)
	}
}

// A page holds at most PageSize runs: Limit 0 or less is the default,
// above MaxLimit is MaxLimit, and a listing of exactly one page has no
// next cursor.
func TestPageSize(t *testing.T) {
	for limit, want := range map[int]int{-1: runstore.DefaultLimit, 0: runstore.DefaultLimit, 1: 1,
		runstore.MaxLimit: runstore.MaxLimit, runstore.MaxLimit + 1: runstore.MaxLimit} {
		assert.Equal(t, want, runstore.Filter{Limit: limit}.PageSize(), "Limit %d", limit)
	}
	ctx := context.Background()
	s := runstore.NewMemory()
	for i := range 3 {
		require.NoError(t, s.Save(ctx, runstore.Run{ID: fmt.Sprint("r", i), Kind: runstore.Approval, Snapshot: []byte("s"), Stopped: time.Unix(int64(i+1), 0)}))
	}
	page, err := s.List(ctx, runstore.Filter{Limit: 3})
	require.NoError(t, err)
	assert.Len(t, page.Runs, 3)
	assert.Empty(t, page.Next, "exactly one page: no next cursor")
	page, err = s.List(ctx, runstore.Filter{Limit: 2})
	require.NoError(t, err)
	assert.Len(t, page.Runs, 2)
	assert.NotEmpty(t, page.Next)
}
