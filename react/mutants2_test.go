package react_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
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
