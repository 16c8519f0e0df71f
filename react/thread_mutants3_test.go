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
