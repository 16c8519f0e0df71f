package react_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// This file holds tests written to kill mutants that lived through the
// package's other tests, applied again to the current code
// (docs/mutation.md).

// With ParallelReads, a call that is not a well-formed read (a write, an
// unknown tool, a malformed call) is handled
// alone, in its turn, whatever its position, and the wave goes on to the
// next call (here skipped, as after any call that did not succeed). A wave that tried
// to run an empty batch there would never move on: the context's deadline
// turns that hang into an error.
func TestParallelReads_NonReadsRunAlone(t *testing.T) {
	tests := []struct {
		name   string
		calls  []react.ToolCall
		answer map[string]string // call id: a part of its tool message
		reads  int
		reason string
	}{
		{
			name:   "reads, an unknown tool, a read",
			calls:  []react.ToolCall{call("a", "list_sites", `{"p":1}`), call("b", "list_sites", `{"p":2}`), call("x", "no_such_tool", `{}`), call("c", "list_sites", `{"p":3}`)},
			reads:  2,
			answer: map[string]string{"x": "is not available", "c": "was not run"},
			reason: "the unknown tool at position 2 follows a batch of two reads and is answered alone; the read after it is skipped",
		},
		{
			name:   "a read, a call without an id, a read",
			calls:  []react.ToolCall{call("a", "list_sites", `{"p":1}`), call("", "list_sites", `{"p":2}`), call("c", "list_sites", `{"p":3}`)},
			reads:  1,
			answer: map[string]string{"rg_1_2": "has no call id", "c": "was not run"},
			reason: "the malformed call at position 1 is answered alone, not run; the read after it is skipped",
		},
		{
			name:   "a read, then a write",
			calls:  []react.ToolCall{call("a", "list_sites", `{"p":1}`), call("w", "create_site", `{"n":1}`)},
			reads:  1,
			answer: map[string]string{"w": "needs the user's approval"},
			reason: "the write at position 1 is answered alone: it needs an approval first",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, _, create := sitesTools()
			e := newEnv(t, newScript(turn(tt.calls...), turn(finish("f"))), list.Tool, create.Tool)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := e.again(e.model).Run(ctx, react.Node{Tools: []string{"list_sites", "create_site"}, ParallelReads: true}, "go")
			require.NoError(t, err, tt.reason)
			assert.Equal(t, react.Finished, res.Status, tt.reason)
			assert.Equal(t, tt.reads, list.executions(), tt.reason)
			assert.Zero(t, create.executions(), tt.reason)
			requirePaired(t, res.Transcript)
			for id, part := range tt.answer {
				assert.Contains(t, toolMessage(t, res.Transcript, id).Content, part, tt.reason)
			}
		})
	}
}

// With ParallelReads, a read that is alone in its turn (no read beside it
// to run with) is run as in a sequential node: the stream hears its
// EventToolStart before the tool runs, not after it returned as the calls
// of a batch are heard. Each case is one turn of reads, then the finish.
func TestRunStream_LoneReadIsHeardLive(t *testing.T) {
	tests := []struct {
		name   string
		calls  []react.ToolCall
		live   map[string]bool // call id: whether the stream heard its start before it ran
		reason string
	}{
		{
			name:   "a lone read",
			calls:  []react.ToolCall{reacttest.Call("l1", "look", `{"a":1}`)},
			live:   map[string]bool{"l1": true},
			reason: "nothing to run it with: it runs alone, heard live",
		},
		{
			name:   "a batch of two reads",
			calls:  []react.ToolCall{reacttest.Call("l1", "look", `{"a":1}`), reacttest.Call("l2", "look", `{"a":2}`)},
			live:   map[string]bool{"l1": false, "l2": false},
			reason: "a batch runs concurrently: the stream hears its events once it returned",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			heard := map[string]bool{} // call ids whose start the stream delivered
			live := map[string]bool{}
			look := newFake("look", tool.Read, func(_ context.Context, req tool.Request) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				live[req.CallID] = heard[req.CallID]
				return map[string]any{"balance": 7}, nil
			})
			cfg := newEnv(t, newScript(), look.Tool).cfg
			cfg.Model = reacttest.Stream(
				reacttest.Split(reacttest.Calls(tt.calls...), 3),
				reacttest.Split(reacttest.Calls(reacttest.Call("f", react.ToolFinish, `{}`)), 2),
			)
			cfg.Runs = runstore.NewMemory()
			loop, err := react.New(cfg)
			require.NoError(t, err)
			node := react.Node{Name: "look", Tools: []string{"look"}, ParallelReads: true}
			for e, err := range loop.RunStream(context.Background(), node, "look") {
				require.NoError(t, err, tt.reason)
				if e.Kind == react.EventToolStart {
					mu.Lock()
					heard[e.ToolStart.CallID] = true
					mu.Unlock()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tt.live, live, tt.reason)
		})
	}
}
