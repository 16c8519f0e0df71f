package react_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// kindLog records the kinds of the events it receives, in order.
type kindLog struct {
	mu    sync.Mutex
	kinds []string
	wants react.EventSet // 0 means every kind
}

func (k *kindLog) Observe(ctx context.Context, e react.Event) context.Context {
	k.mu.Lock()
	k.kinds = append(k.kinds, e.Kind.String())
	k.mu.Unlock()
	return ctx
}

func (k *kindLog) Wants() react.EventSet {
	if k.wants == 0 {
		return react.AllEvents
	}
	return k.wants
}

func (k *kindLog) get() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.kinds...)
}

// A run reports one vocabulary of events, in order: the round of a turn
// ends once every call of it was answered, before the next model call or
// the end of the run; a suspended round ends on resume.
func TestEventsOfARun(t *testing.T) {
	read := newFake("read", tool.Read, ok(map[string]any{"n": 1}))
	write := newFake("write", tool.Write, ok(map[string]any{"done": true}))
	m := newScript(
		react.Response{Text: "checking", ToolCalls: []react.ToolCall{call("r", "read", `{}`)}},
		text("thinking aloud"),
		turn(call("w", "write", `{}`)),
		turn(call("a", react.ToolApproval, `{"tool":"write"}`)),
	)
	e := newEnv(t, m, read.Tool, write.Tool)
	var log kindLog
	e.cfg.Observer = &log
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	node := react.Node{Tools: []string{"read", "write"}}
	res, err := l.Run(context.Background(), node, "go")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.Equal(t, concat(
		[]string{"run_start"},
		[]string{"model_start", "text_delta", "call_delta", "model_end", "tool_start", "tool_end", "tool_invoked", "round_end"},
		[]string{"model_start", "text_delta", "model_end", "no_tool_calls", "stall", "round_end"},
		[]string{"model_start", "call_delta", "model_end", "tool_start", "tool_end", "tool_invoked", "round_end"},
		[]string{"model_start", "call_delta", "model_end", "tool_start", "tool_end", "suspended", "run_end"},
	), log.get())

	log2 := kindLog{}
	e.cfg.Observer, e.cfg.Model = &log2, newScript(turn(call("f", react.ToolFinish, `{}`)))
	l2, err := react.New(e.cfg)
	require.NoError(t, err)
	res, err = l2.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, []string{
		"run_start", "tool_invoked", "stall_reset", "round_end", // the approval answered, the suspended round ends
		"model_start", "call_delta", "model_end", "tool_start", "tool_end", "tool_invoked", "round_end", "finished", "run_end",
	}, log2.get())
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// An observer receives only the kinds its EventFilter wants, alone or in
// Observers; DiscardObserver receives none.
func TestEventFilter(t *testing.T) {
	read := newFake("read", tool.Read, ok(map[string]any{"n": 1}))
	only := &kindLog{wants: react.Events(react.EventToolInvoked, react.EventFinished)}
	all := &kindLog{}
	for _, tt := range []struct {
		name string
		obs  react.Observer
		want []string
	}{
		{"alone", only, []string{"tool_invoked", "tool_invoked", "finished"}},
		{"with others", react.Observers(react.DiscardObserver, only, all), []string{"tool_invoked", "tool_invoked", "finished"}},
		{"discard", react.DiscardObserver, nil},
	} {
		only.kinds, all.kinds = nil, nil
		e := newEnv(t, newScript(turn(call("r", "read", `{}`)), turn(call("f", react.ToolFinish, `{}`))), read.Tool)
		e.cfg.Observer = tt.obs
		l, err := react.New(e.cfg)
		require.NoError(t, err)
		_, err = l.Run(context.Background(), react.Node{Tools: []string{"read"}}, "go")
		require.NoError(t, err)
		if tt.obs == react.DiscardObserver {
			continue
		}
		assert.Equal(t, tt.want, only.get(), tt.name)
		if tt.name == "with others" {
			assert.Contains(t, all.get(), "round_end", "the other member still gets every kind")
		}
	}
	assert.Equal(t, react.AllEvents, react.Events(react.EventRunStart, react.EventModelStart, react.EventTextDelta,
		react.EventCallDelta, react.EventModelEnd, react.EventToolStart, react.EventToolEnd, react.EventToolInvoked,
		react.EventToolSkipped, react.EventNoToolCalls, react.EventStall, react.EventStallReset, react.EventRoundEnd,
		react.EventSuspended, react.EventFinished, react.EventFailed, react.EventRunEnd))
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, 1)
	assert.Equal(t, ctx, react.DiscardObserver.Observe(ctx, react.Event{Kind: react.EventRunStart}), "the context goes through unchanged")
	assert.Zero(t, react.DiscardObserver.(react.EventFilter).Wants())
	assert.False(t, react.AllEvents.Has(0))
	assert.False(t, react.AllEvents.Has(200))
	assert.Zero(t, react.Events(0, 200), "kinds out of range are not members")
}

func TestEventKindString(t *testing.T) {
	for k := react.EventRunStart; k <= react.EventRunEnd; k++ {
		assert.NotContains(t, k.String(), "EventKind(", "kind %d has a name", int(k))
	}
	assert.Equal(t, "text_delta", react.EventTextDelta.String())
	assert.Equal(t, "EventKind(0)", react.EventKind(0).String())
	assert.Equal(t, "EventKind(99)", react.EventKind(99).String())
}
