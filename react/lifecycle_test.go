package react_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// spanKey is the context key under which a spans observer stores the name
// of the span that is open.
type spanKey struct{ o *spans }

// spans is an observer that implements every optional interface and
// records each start and end as a line, checking that every end gets the
// context its start returned.
type spans struct {
	name  string
	carry map[string]string
	mu    sync.Mutex
	lines []string
	runs  []react.RunStartEvent
	ends  []react.RunEndEvent
	calls []react.ToolEndEvent
	tools []react.ToolEvent // OnToolInvoked
	model []react.ModelEndEvent
	bad   []string  // ends that did not get their start's context
	order *[]string // when set, every line is also appended here, with the name
}

func (s *spans) log(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, fmt.Sprintf(format, args...))
	if s.order != nil {
		*s.order = append(*s.order, s.name+": "+s.lines[len(s.lines)-1])
	}
}

func (s *spans) open(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, spanKey{s}, name)
}

func (s *spans) check(ctx context.Context, want string) {
	if got, _ := ctx.Value(spanKey{s}).(string); got != want {
		s.mu.Lock()
		s.bad = append(s.bad, fmt.Sprintf("end of %s got the context of %q", want, got))
		s.mu.Unlock()
	}
}

func (s *spans) OnRunStart(ctx context.Context, e react.RunStartEvent) context.Context {
	s.log("run start resumed=%v round=%d", e.Resumed, e.Round)
	s.mu.Lock()
	s.runs = append(s.runs, e)
	s.mu.Unlock()
	return s.open(ctx, "run")
}

func (s *spans) OnRunEnd(ctx context.Context, e react.RunEndEvent) {
	s.check(ctx, "run")
	s.log("run end %s err=%v", e.Status, e.Err)
	s.mu.Lock()
	s.ends = append(s.ends, e)
	s.mu.Unlock()
}

func (s *spans) Carry(ctx context.Context) map[string]string {
	s.check(ctx, "run")
	return s.carry
}

func (s *spans) OnModelStart(ctx context.Context, e react.ModelStartEvent) context.Context {
	s.check(ctx, "run")
	s.log("model start round=%d messages=%d", e.Round, len(e.Request.Messages))
	return s.open(ctx, fmt.Sprintf("model %d", e.Round))
}

func (s *spans) OnModelEnd(ctx context.Context, e react.ModelEndEvent) {
	s.check(ctx, fmt.Sprintf("model %d", e.Round))
	s.log("model end round=%d err=%v", e.Round, e.Err)
	s.mu.Lock()
	s.model = append(s.model, e)
	s.mu.Unlock()
}

func (s *spans) OnToolStart(ctx context.Context, e react.ToolStartEvent) context.Context {
	s.check(ctx, "run")
	s.log("tool start %s %s builtin=%v", e.CallID, e.Tool, e.Builtin)
	return s.open(ctx, "tool "+e.CallID)
}

func (s *spans) OnToolEnd(ctx context.Context, e react.ToolEndEvent) {
	s.check(ctx, "tool "+e.CallID)
	s.log("tool end %s %s err=%v", e.CallID, e.Outcome, e.Err)
	s.mu.Lock()
	s.calls = append(s.calls, e)
	s.mu.Unlock()
}

func (s *spans) OnToolInvoked(_ context.Context, e react.ToolEvent) {
	s.mu.Lock()
	s.tools = append(s.tools, e)
	s.mu.Unlock()
}

func (s *spans) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

var (
	_ react.Observer = (*spans)(nil)
	_ react.Carrier  = (*spans)(nil)
)

// described is a model that names itself.
type described struct{ react.Model }

func (described) Describe() react.ModelInfo {
	return react.ModelInfo{Provider: "test", Name: "script-1"}
}

// Every run, model call and tool call is started and ended, in order,
// and each end gets the context its start returned; the model and the
// tools run in those contexts.
func TestLifecycleRunModelAndTools(t *testing.T) {
	list, broken, create := sitesTools()
	seen := make(chan string, 4)
	probe := newFake("probe", tool.Read, func(ctx context.Context, _ tool.Request) (any, error) {
		name, _ := ctx.Value(spanKey{}).(string) // not this observer's key: nothing
		seen <- name
		return "ok", nil
	})
	var s *spans
	m := newScript(
		func(react.Request) react.Response {
			return react.Response{ToolCalls: []react.ToolCall{call("a", "list_sites", `{}`), call("b", "nope", `{}`)},
				Model: "script-1-2025", FinishReason: "tool_calls", Usage: &react.Usage{InputTokens: 10, OutputTokens: 2}}
		},
		turn(call("c", "probe", `{}`)),
		turn(call("d", "create_site", `{}`)),
		turn(finish("f")),
	)
	s = &spans{}
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool, probe.Tool)
	cfg := e.cfg
	cfg.Model = described{m}
	cfg.Observer = react.Observers(e.rec, s)
	l, err := react.New(cfg)
	require.NoError(t, err)
	node := sitesNode()
	node.Tools = append(node.Tools, "probe")
	res, err := l.Run(context.Background(), node, "hi")
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, "", <-seen)

	assert.Equal(t, []string{
		"run start resumed=false round=0",
		"model start round=1 messages=2",
		"model end round=1 err=<nil>",
		"tool start a list_sites builtin=false",
		"tool end a SUCCESS err=<nil>",
		"tool start b nope builtin=false",
		"tool end b REJECTED err=<nil>",
		"model start round=2 messages=5",
		"model end round=2 err=<nil>",
		"tool start c probe builtin=false",
		"tool end c SUCCESS err=<nil>",
		"model start round=3 messages=7",
		"model end round=3 err=<nil>",
		"tool start d create_site builtin=false",
		"tool end d DEFERRED err=<nil>",
		"model start round=4 messages=9",
		"model end round=4 err=<nil>",
		"tool start f builtin_node_finish builtin=true",
		"tool end f SUCCESS err=<nil>",
		"run end finished err=<nil>",
	}, s.get())
	assert.Empty(t, s.bad)

	require.Len(t, s.runs, 1)
	assert.Equal(t, react.ModelInfo{Provider: "test", Name: "script-1"}, s.runs[0].Model, "the model's Describe")
	assert.Equal(t, react.NodeEvent{Run: "run-1", Node: "sites"}, s.runs[0].NodeEvent)
	assert.Nil(t, s.runs[0].Carried)
	require.Len(t, s.ends, 1)
	end := s.ends[0]
	require.NotNil(t, end.Result, "the run end carries the Result Run returned")
	assert.Equal(t, res.Status, end.Result.Status)
	assert.Equal(t, res.Transcript, end.Result.Transcript)
	end.Result = nil
	assert.Equal(t, react.RunEndEvent{RoundEvent: react.RoundEvent{NodeEvent: s.runs[0].NodeEvent, Round: 4}, Status: react.Finished, Goal: react.GoalUnverified}, end)

	first := s.model[0]
	assert.Equal(t, "script-1-2025", first.Response.Model, "the whole response reaches the observer")
	assert.Equal(t, &react.Usage{InputTokens: 10, OutputTokens: 2}, first.Response.Usage)
	assert.Equal(t, react.ModelInfo{Provider: "test", Name: "script-1"}, first.Model)
	assert.Positive(t, first.Duration, "measured with Config.Now")

	byID := map[string]react.ToolEndEvent{}
	for _, c := range s.calls {
		byID[c.CallID] = c
	}
	assert.Equal(t, "CATALOG_DENIED", byID["b"].Code.String(), "a refused call is started and ended too")
	assert.False(t, byID["b"].Observation.IsZero(), "it carries its observation")
	require.Len(t, s.tools, len(s.calls), "every ended call was reported by OnToolInvoked too")
	for _, invoked := range s.tools {
		ended := byID[invoked.CallID].ToolEvent
		if invoked.Layers.Business == react.BusinessEvidence || invoked.Layers.Business == react.BusinessRepeated {
			assert.Equal(t, react.BusinessNone, ended.Layers.Business, "%s: new evidence is judged in call order, later", invoked.CallID)
			ended.Layers.Business = invoked.Layers.Business
		}
		assert.Equal(t, invoked, ended, "%s: the same event OnToolInvoked gets", invoked.CallID)
	}
	assert.Equal(t, react.BusinessEvidence, s.tools[0].Layers.Business, "list_sites produced evidence")
	assert.Equal(t, 1, byID["a"].Layers.Attempts)
	assert.Equal(t, e.rec.of("tool")[0].Dur, byID["a"].Duration)
	assert.True(t, byID["f"].Builtin)
}

// The tools run in the context OnToolStart returned and the model in the
// one OnModelStart returned.
func TestLifecycleContextsReachTheWork(t *testing.T) {
	s := &spans{}
	var toolCtx, modelCtx string
	probe := newFake("probe", tool.Read, func(ctx context.Context, _ tool.Request) (any, error) {
		toolCtx, _ = ctx.Value(spanKey{s}).(string)
		return "ok", nil
	})
	m := react.ModelFunc(func(ctx context.Context, req react.Request) (react.Response, error) {
		modelCtx, _ = ctx.Value(spanKey{s}).(string)
		if len(req.Messages) > 2 {
			return turn(finish("f")), nil
		}
		return turn(call("p", "probe", `{}`)), nil
	})
	e := newEnv(t, newScript(), probe.Tool)
	cfg := e.cfg
	cfg.Model, cfg.Observer = m, s
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"probe"}}, "hi")
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, "tool p", toolCtx)
	assert.Equal(t, "model 2", modelCtx)
	assert.Empty(t, s.bad)
}

// Parallel reads are started and ended on their own goroutines, each end
// with its start's context.
func TestLifecycleParallelReads(t *testing.T) {
	list, broken, create := sitesTools()
	s := &spans{}
	m := newScript(
		turn(call("a", "list_sites", `{}`), call("b", "list_sites", `{"p":2}`), call("c", "list_sites", `{"p":3}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
	cfg := e.cfg
	cfg.Observer = s
	l, err := react.New(cfg)
	require.NoError(t, err)
	node := sitesNode()
	node.ParallelReads = true
	res, err := l.Run(context.Background(), node, "hi")
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Empty(t, s.bad)
	var starts, ends int
	for _, line := range s.get() {
		if strings.HasPrefix(line, "tool start") {
			starts++
		}
		if strings.HasPrefix(line, "tool end") {
			ends++
		}
	}
	assert.Equal(t, 4, starts)
	assert.Equal(t, 4, ends)
}

// What the observers carry travels inside the snapshot and comes back on
// resume, in a new loop; entries out of bounds are dropped.
func TestLifecycleCarryAcrossResume(t *testing.T) {
	list, broken, create := sitesTools()
	s := &spans{carry: map[string]string{
		"traceparent":                    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"":                               "empty key",
		strings.Repeat("k", 65):          "key too long",
		"big":                            strings.Repeat("v", react.MaxCarriedValue+1),
		"ok":                             strings.Repeat("v", react.MaxCarriedValue),
		strings.Repeat("k", 64):          "longest key",
		"zz-other-observer-would-use-me": "x",
	}}
	m := newScript(
		turn(call("w", "create_site", `{}`)),
		turn(call("q", react.ToolApproval, `{"tool":"create_site","reason":"r"}`)),
	)
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
	cfg := e.cfg
	cfg.Observer = s
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), sitesNode(), "hi")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.Contains(t, string(res.Snapshot), `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)
	require.Len(t, s.ends, 1)
	assert.Equal(t, react.Suspended, s.ends[0].Status)
	require.NotNil(t, s.ends[0].Suspension)
	assert.Equal(t, react.SuspendApproval, s.ends[0].Suspension.Kind)
	var approval react.ToolEndEvent
	for _, c := range s.calls {
		if c.CallID == "q" {
			approval = c
		}
	}
	assert.Equal(t, react.SuspendApproval, approval.Suspends, "the suspending call says so when it ends")

	s2 := &spans{}
	cfg.Observer = s2
	cfg.Model = newScript(turn(call("w2", "create_site", `{}`)), turn(finish("f")))
	l2, err := react.New(cfg)
	require.NoError(t, err)
	res, err = l2.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	require.Len(t, s2.runs, 1)
	assert.True(t, s2.runs[0].Resumed)
	assert.Equal(t, 2, s2.runs[0].Round)
	assert.Equal(t, map[string]string{
		"traceparent":                    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"ok":                             strings.Repeat("v", react.MaxCarriedValue),
		strings.Repeat("k", 64):          "longest key",
		"zz-other-observer-would-use-me": "x",
	}, s2.runs[0].Carried)
	assert.Empty(t, s2.bad)
	assert.Equal(t, "run end finished err=<nil>", s2.get()[len(s2.get())-1])
}

// More than MaxCarried entries: the smallest keys are kept.
func TestLifecycleCarryBound(t *testing.T) {
	carry := map[string]string{}
	for i := range react.MaxCarried + 5 {
		carry[fmt.Sprintf("k%02d", i)] = "v"
	}
	s := &spans{carry: carry}
	m := newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which space?"}`)))
	e := newEnv(t, m)
	cfg := e.cfg
	cfg.Observer = s
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{}, "hi")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)

	s2 := &spans{}
	cfg.Observer, cfg.Model = s2, newScript(turn(finish("f")))
	l2, err := react.New(cfg)
	require.NoError(t, err)
	_, err = l2.Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "the blue one"))
	require.NoError(t, err)
	require.Len(t, s2.runs, 1)
	got := s2.runs[0].Carried
	assert.Len(t, got, react.MaxCarried)
	assert.Contains(t, got, "k00")
	assert.Contains(t, got, fmt.Sprintf("k%02d", react.MaxCarried-1))
	assert.NotContains(t, got, fmt.Sprintf("k%02d", react.MaxCarried))
}

// A model error, a cancelled tool call and a refused decision all end
// what was started, with the error.
func TestLifecycleEndsOnErrors(t *testing.T) {
	t.Run("model error", func(t *testing.T) {
		boom := errors.New("upstream 503")
		s := &spans{}
		e := newEnv(t, newScript(boom))
		cfg := e.cfg
		cfg.Observer = s
		l, err := react.New(cfg)
		require.NoError(t, err)
		res, err := l.Run(context.Background(), react.Node{}, "hi")
		require.ErrorIs(t, err, boom)
		require.Equal(t, react.Interrupted, res.Status)
		assert.Equal(t, []string{
			"run start resumed=false round=0",
			"model start round=1 messages=2",
			"model end round=1 err=upstream 503",
			"run end interrupted err=react: model: upstream 503",
		}, s.get())
		assert.Empty(t, s.bad)
		require.Len(t, s.model, 1)
		assert.Equal(t, react.Response{}, s.model[0].Response)
	})
	t.Run("cancelled tool call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		slow := newFake("slow", tool.Read, func(ctx context.Context, _ tool.Request) (any, error) {
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		})
		s := &spans{}
		e := newEnv(t, newScript(turn(call("s", "slow", `{}`))), slow.Tool)
		cfg := e.cfg
		cfg.Observer = s
		l, err := react.New(cfg)
		require.NoError(t, err)
		res, err := l.Run(ctx, react.Node{Tools: []string{"slow"}}, "hi")
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, react.Interrupted, res.Status)
		lines := s.get()
		assert.Equal(t, "tool end s OUTCOME(0) err=context canceled", lines[len(lines)-2])
		assert.Equal(t, "run end interrupted err=context canceled", lines[len(lines)-1])
		assert.Empty(t, s.bad)
	})
	t.Run("decision that does not fit starts nothing", func(t *testing.T) {
		e := newEnv(t, newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which space?"}`))))
		res := e.run(react.Node{}, "hi")
		require.Equal(t, react.Suspended, res.Status)
		s := &spans{}
		cfg := e.cfg
		cfg.Observer = s
		l, err := react.New(cfg)
		require.NoError(t, err)
		_, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.ErrorIs(t, err, react.ErrDecision)
		assert.Empty(t, s.get(), "refused before the claim, like a refused snapshot")
	})
	t.Run("decision that cannot be applied", func(t *testing.T) {
		list, broken, create := sitesTools()
		m := newScript(turn(call("w", "create_site", `{}`)), turn(call("q", react.ToolApproval, `{"tool":"create_site"}`)))
		e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
		res := e.run(sitesNode(), "hi")
		require.Equal(t, react.Suspended, res.Status)
		s := &spans{}
		cfg := e.cfg
		cfg.Observer, cfg.Guards = s, &guard.Options{} // another approvals store: the call is not pending there
		l, err := react.New(cfg)
		require.NoError(t, err)
		res, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.ErrorIs(t, err, guard.ErrNotPending)
		require.Equal(t, react.Suspended, res.Status)
		require.Len(t, s.ends, 1, "the claimed resume started and ended")
		assert.Equal(t, react.Suspended, s.ends[0].Status)
		assert.ErrorIs(t, s.ends[0].Err, guard.ErrNotPending)
		assert.Empty(t, s.bad)
	})
	t.Run("refused snapshot starts nothing", func(t *testing.T) {
		s := &spans{}
		e := newEnv(t, newScript())
		cfg := e.cfg
		cfg.Observer = s
		l, err := react.New(cfg)
		require.NoError(t, err)
		_, err = l.Resume(context.Background(), []byte(`{}`), react.Continue())
		require.ErrorIs(t, err, react.ErrSnapshot)
		assert.Empty(t, s.get())
	})
}

// A panic of a custom handler or of the model unwinds through the loop
// (which does not recover it) after every started call and the run were
// ended with ErrPanicked.
func TestLifecycleEndsOnPanic(t *testing.T) {
	t.Run("handler", func(t *testing.T) {
		list, broken, create := sitesTools()
		s := &spans{}
		e := newEnv(t, newScript(turn(call("a", "list_sites", `{}`))), list.Tool, broken.Tool, create.Tool)
		cfg := e.cfg
		cfg.Observer = s
		cfg.Handler = func(context.Context, invoker.Call) (observation.Observation, error) { panic("handler bug") }
		l, err := react.New(cfg)
		require.NoError(t, err)
		assert.PanicsWithValue(t, "handler bug", func() { _, _ = l.Run(context.Background(), sitesNode(), "hi") })
		lines := s.get()
		assert.Equal(t, []string{
			"tool end a OUTCOME(0) err=react: panic",
			"run end interrupted err=react: panic",
		}, lines[len(lines)-2:])
		assert.Empty(t, s.bad)
	})
	t.Run("model", func(t *testing.T) {
		s := &spans{}
		e := newEnv(t, newScript(func(react.Request) react.Response { panic("model bug") }))
		cfg := e.cfg
		cfg.Observer = s
		l, err := react.New(cfg)
		require.NoError(t, err)
		assert.PanicsWithValue(t, "model bug", func() { _, _ = l.Run(context.Background(), react.Node{}, "hi") })
		assert.Equal(t, []string{
			"run start resumed=false round=0",
			"model start round=1 messages=2",
			"model end round=1 err=react: panic",
			"run end interrupted err=react: panic",
		}, s.get())
		assert.Empty(t, s.bad)
	})
}

// Observers passes contexts along its members and ends in reverse order;
// a combination without a Carrier is no Carrier.
func TestObserversCombineLifecycles(t *testing.T) {
	var rec recorder
	plain := react.Observers(&rec, react.DiscardObserver)
	_, carries := plain.(react.Carrier)
	assert.False(t, carries, "plain observers carry nothing")

	var order []string
	a := &spans{name: "a", order: &order, carry: map[string]string{"k": "a", "x": "a"}}
	b := &spans{name: "b", order: &order, carry: map[string]string{"k": "b"}}
	o := react.Observers(a, &rec, react.Observers(b))
	ro, ok := o.(react.Carrier)
	require.True(t, ok)
	ctx := o.Observe(context.Background(), react.Event{Kind: react.EventRunStart, RunStart: &react.RunStartEvent{}})
	assert.Equal(t, "run", ctx.Value(spanKey{a}))
	assert.Equal(t, "run", ctx.Value(spanKey{b}), "b got a's context and added its own value")
	assert.Equal(t, map[string]string{"k": "b", "x": "a"}, ro.Carry(ctx), "later observers win")
	o.Observe(ctx, react.Event{Kind: react.EventRunEnd, RunEnd: &react.RunEndEvent{Status: react.Finished}})
	assert.Empty(t, a.bad)
	assert.Empty(t, b.bad)

	mstart := react.ModelStartEvent{RoundEvent: react.RoundEvent{Round: 1}}
	mctx := o.Observe(ctx, react.Event{Kind: react.EventModelStart, ModelStart: &mstart})
	o.Observe(mctx, react.Event{Kind: react.EventModelEnd, ModelEnd: &react.ModelEndEvent{ModelStartEvent: mstart}})
	tctx := o.Observe(ctx, react.Event{Kind: react.EventToolStart, ToolStart: &react.ToolStartEvent{CallID: "c"}})
	o.Observe(tctx, react.Event{Kind: react.EventToolEnd, ToolEnd: &react.ToolEndEvent{ToolEvent: react.ToolEvent{CallID: "c"}}})
	assert.Empty(t, a.bad)
	assert.Empty(t, b.bad)
	assert.Equal(t, []string{
		"a: run start resumed=false round=0", "b: run start resumed=false round=0",
		"b: run end finished err=<nil>", "a: run end finished err=<nil>",
		"a: model start round=1 messages=0", "b: model start round=1 messages=0",
		"b: model end round=1 err=<nil>", "a: model end round=1 err=<nil>",
		"a: tool start c  builtin=false", "b: tool start c  builtin=false",
		"b: tool end c OUTCOME(0) err=<nil>", "a: tool end c OUTCOME(0) err=<nil>",
	}, order, "starts in order, ends in reverse order")
}

// Observe implements react.Observer through dispatch.
func (x *spans) Observe(ctx context.Context, e react.Event) context.Context {
	return dispatch(ctx, e, x)
}
