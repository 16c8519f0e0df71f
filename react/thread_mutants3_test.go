package react_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/threadstore"
)

// This file holds tests written to kill mutants of thread.go after its
// line 201 that lived through the package's other tests
// (docs/mutation.md).

// commits counts the Commit calls of a thread store, by thread.
type commits struct {
	threadstore.Store
	mu sync.Mutex
	n  map[string]int
}

func (s *commits) Commit(ctx context.Context, id, token string, t threadstore.Turn, sum *threadstore.Summary) error {
	s.mu.Lock()
	s.n[id]++
	s.mu.Unlock()
	return s.Store.Commit(ctx, id, token, t, sum)
}

func (s *commits) of(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[id]
}

// A commit whose reply was lost is tried once more, which the store
// refuses (the turn is there, the lease spent), and then dropped: later
// calls of the loop do not commit it again and again.
func TestThreadLostCommitReplyIsDroppedAfterItsRetry(t *testing.T) {
	d := newDesk(t)
	c := &commits{Store: d.threads, n: map[string]int{}}
	d.threads = &flaky{Store: c, after: 1}
	l := d.loop(reacttest.Func(clerk))
	_, err := l.Run(bg, deskNode, "My order is A-17.", react.InThread("t1"), asAlice)
	require.ErrorContains(t, err, "commit turn 1 of thread t1")
	require.Equal(t, 1, c.of("t1"))
	for range 3 {
		d.message(l, "t2", "Hello.")
	}
	assert.Equal(t, 2, c.of("t1"), "the lost reply's commit tried once more, then dropped")
	th, _, err := c.Get(bg, "t1")
	require.NoError(t, err)
	assert.Equal(t, 1, th.Turns)
}

// releases is a thread store whose Release fails when told to.
type releases struct {
	threadstore.Store
	fail bool
}

func (s *releases) Release(ctx context.Context, id, run, token string) error {
	if s.fail {
		return errors.New("database unavailable")
	}
	return s.Store.Release(ctx, id, run, token)
}

// A run in a thread that stops without a snapshot (its state outgrew
// Config.MaxSnapshotBytes) frees the thread: a release that succeeds adds
// nothing to the run's error, one that fails has its error joined to it.
func TestThreadStoppedWithoutSnapshotReleases(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("release fails %v", fail), func(t *testing.T) {
			d := newDesk(t)
			rel := &releases{Store: d.threads}
			l, err := react.New(react.Config{
				Model: reacttest.Func(clerk), Tools: d.tools, Guards: d.guards, Threads: rel, Runs: d.runs,
				SnapshotKeys: [][]byte{deskKey}, MaxSnapshotBytes: 256,
			})
			require.NoError(t, err)
			d.message(l, "t1", "My order is A-17.")
			rel.fail = fail
			res, err := l.Run(bg, deskNode, "Refund my order.", react.InThread("t1"), asAlice)
			require.Error(t, err, "the snapshot outgrew the bound")
			require.Equal(t, react.Interrupted, res.Status)
			require.Nil(t, res.Snapshot)
			th, _, gerr := rel.Get(bg, "t1")
			require.NoError(t, gerr)
			if fail {
				assert.ErrorContains(t, err, "thread store: release t1: database unavailable")
				assert.NotEmpty(t, th.Run, "the thread is still held")
				return
			}
			assert.NotContains(t, err.Error(), "release", "a release that succeeded adds no error")
			assert.Empty(t, th.Run, "the thread is free")
			assert.Equal(t, 2, d.message(l, "t1", "Hello.").Turn, "the stopped run's message has no turn")
		})
	}
}

// A turn that ends on tool results, with no answer after them (the round
// limit stopped the run), counts those results too: no model call saw
// them, so they are estimated and added to the growth the provider
// reported, as the user's message is.
func TestThreadTurnTokensCountResultsAfterTheLastCall(t *testing.T) {
	tests := []struct {
		name   string
		calls  []react.ToolCall
		reason string
	}{
		{"one result", []react.ToolCall{call("c1", "order_status", `{"order_id":"A-17"}`)}, "the one result after the last call is estimated"},
		{"two results", []react.ToolCall{
			call("c1", "order_status", `{"order_id":"A-17"}`),
			call("c2", "order_status", `{"order_id":"B-3"}`),
		}, "both results after the last call are estimated, back to the call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDesk(t)
			l := d.loop(reacttest.Func(func(req react.Request) react.Response {
				res := turn(tt.calls...)
				res.Usage = &react.Usage{InputTokens: 100, OutputTokens: 30}
				return res
			}))
			node := deskNode
			node.HostApproval = false
			node.MaxRounds = 1
			res, err := l.Run(bg, node, "Status of A-17 and B-3?", react.InThread("t"), asAlice)
			require.NoError(t, err)
			require.Equal(t, react.Failed, res.Status, "the round limit ends the run")
			require.Len(t, res.Transcript, 2+len(tt.calls), "the user's message, the call, its results")
			want := 30 + estimateTokens(res.Transcript[0])
			for _, m := range res.Transcript[2:] {
				require.Equal(t, react.RoleTool, m.Role)
				want += estimateTokens(m)
			}
			turns, err := l.Turns(bg, "t", 1, 2, asAlice)
			require.NoError(t, err)
			require.Len(t, turns, 1)
			assert.Equal(t, want, turns[0].Tokens, tt.reason)
		})
	}
}
