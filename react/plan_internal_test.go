package react

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/internal/grow"
	"github.com/reactguard/reactguard/tool"
)

// A loop reuses the plan of the last node only while its catalog holds the
// same tool values under the node's names: a name freed by a failed
// Catalog.Add and taken by another tool gets a plan with the new tool.
func TestPlanFollowsTheCatalog(t *testing.T) {
	newTool := func(desc string) *tool.Tool {
		return &tool.Tool{Name: "lookup", Description: desc, InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Read,
			Func: func(context.Context, tool.Request) (any, error) { return nil, nil }}
	}
	first, second := newTool("first"), newTool("second")
	l, err := New(Config{Model: scripted(), Tools: tool.MustCatalog(first)})
	require.NoError(t, err)
	node := Node{Name: "n", Tools: []string{"lookup"}}

	p1, err := l.planOf(node)
	require.NoError(t, err)
	again, err := l.planOf(Node{Name: "other name, same tools", Tools: []string{"lookup"}})
	require.NoError(t, err)
	assert.Same(t, p1, again, "the same tools: the plan is reused")

	l.catalog = tool.MustCatalog(second) // the name now holds another tool
	p2, err := l.planOf(node)
	require.NoError(t, err)
	assert.NotSame(t, p1, p2, "another tool under the name: a new plan")
	assert.Same(t, second, p2.visible["lookup"])
	assert.Equal(t, "second", p2.specs[0].Description)
}

// A run leaves the sizes of its call-id and new-evidence sets in its plan
// for the next run of the node, bounded by maxHint.
func TestRunLeavesSizeHints(t *testing.T) {
	lookup := &tool.Tool{Name: "lookup", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Read,
		Func: func(_ context.Context, req tool.Request) (any, error) {
			return map[string]any{"echo": string(req.Args)}, nil
		}}
	var turns []Response
	for i := range 3 {
		turns = append(turns, calls(
			ToolCall{ID: "a" + strconv.Itoa(i), Name: "lookup", Args: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`)},
			ToolCall{ID: "b" + strconv.Itoa(i), Name: "lookup", Args: json.RawMessage(`{"j":` + strconv.Itoa(i) + `}`)}))
	}
	turns = append(turns, calls(ToolCall{ID: "f", Name: ToolFinish, Args: json.RawMessage(`{}`)}))
	l, err := New(Config{Model: scripted(turns...), Tools: tool.MustCatalog(lookup), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	node := Node{Name: "n", Tools: []string{"lookup"}}
	res, err := l.Run(context.Background(), node, "go")
	require.NoError(t, err)
	require.Equal(t, Finished, res.Status)
	p, err := l.planOf(node)
	require.NoError(t, err)
	assert.EqualValues(t, 7, p.ids.Load(), "six lookups and the finish")
	assert.EqualValues(t, 6, p.evidenced.Load(), "six distinct results, each new evidence")
	assert.EqualValues(t, 7, p.calls.Load(), "seven call reports")
	assert.EqualValues(t, len(res.Transcript)+1, p.msgs.Load(), "the transcript and the system slot")
	next, err := l.newRun("next", node)
	require.NoError(t, err)
	assert.Equal(t, 7, cap(next.calls), "the next run starts with room for as many reports")
	assert.Equal(t, len(res.Transcript)+1, cap(next.msgs), "and as many messages")

	// After a run longer than startSliceHint, the next run starts with
	// startSliceHint of room and grows to the hint at once when it passes
	// it: a short run never pays for the long one's room.
	p.msgs.Store(1000)
	p.calls.Store(900)
	long, err := l.newRun("long", node)
	require.NoError(t, err)
	assert.Equal(t, startSliceHint, cap(long.msgs), "messages start with startSliceHint of room")
	assert.Equal(t, startSliceHint, cap(long.calls), "reports too")
	for len(long.msgs) < startSliceHint {
		long.appendMsg(Message{Role: RoleUser})
	}
	for len(long.calls) < startSliceHint {
		long.calls = grow.AppendHint(long.calls, CallReport{}, long.callsHint)
	}
	assert.Equal(t, startSliceHint, cap(long.msgs), "no growth before the slice is full")
	long.appendMsg(Message{Role: RoleUser, Content: "257th"})
	long.calls = grow.AppendHint(long.calls, CallReport{CallID: "257th"}, long.callsHint)
	assert.GreaterOrEqual(t, cap(long.msgs), 1000, "then room for the previous run's length at once")
	assert.Less(t, cap(long.msgs), 1100, "and not much more")
	assert.GreaterOrEqual(t, cap(long.calls), 900, "the reports as well")
	assert.Equal(t, "257th", long.msgs[startSliceHint].Content)
	assert.Equal(t, "257th", long.calls[startSliceHint].CallID)

	big := &run{plan: p, ids: make(map[string]struct{}), msgs: make([]Message, maxSliceHint+1), calls: make([]CallReport, maxSliceHint+1)}
	for i := range maxHint + 1 {
		big.ids[strconv.Itoa(i)] = struct{}{}
	}
	big.keepSizes()
	assert.EqualValues(t, maxHint, p.ids.Load(), "bounded")
	assert.EqualValues(t, maxSliceHint, p.msgs.Load(), "bounded")
	assert.EqualValues(t, maxSliceHint, p.calls.Load(), "bounded")
	assert.Zero(t, p.evidenced.Load(), "a run without new evidence")
}
