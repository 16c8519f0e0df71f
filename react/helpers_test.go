package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// errScriptDone is what the scripted model returns after its last turn.
var errScriptDone = errors.New("script exhausted")

// script is a scripted model: each turn is computed from the request. It
// records a deep copy of every request.
type script struct {
	mu    sync.Mutex
	turns []func(req react.Request) (react.Response, error)
	reqs  []react.Request
}

func newScript(turns ...any) *script {
	s := &script{}
	for _, t := range turns {
		switch t := t.(type) {
		case react.Response:
			s.turns = append(s.turns, func(react.Request) (react.Response, error) { return t, nil })
		case func(react.Request) (react.Response, error):
			s.turns = append(s.turns, t)
		case func(react.Request) react.Response:
			s.turns = append(s.turns, func(r react.Request) (react.Response, error) { return t(r), nil })
		case error:
			s.turns = append(s.turns, func(react.Request) (react.Response, error) { return react.Response{}, t })
		default:
			panic(fmt.Sprintf("newScript: %T", t))
		}
	}
	return s
}

func (s *script) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	if err := ctx.Err(); err != nil {
		return react.Response{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, react.Request{Messages: slices.Clone(req.Messages), Tools: slices.Clone(req.Tools)})
	n := len(s.reqs) - 1
	if n >= len(s.turns) {
		return react.Response{}, errScriptDone
	}
	return s.turns[n](req)
}

func (s *script) requests() []react.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func call(id, name, args string) react.ToolCall {
	return react.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

func turn(calls ...react.ToolCall) react.Response { return react.Response{ToolCalls: calls} }

func text(t string) react.Response { return react.Response{Text: t} }

var objectSchema = &jsonschema.Schema{Type: "object"}

// fake is a tool whose executions are counted.
type fake struct {
	*tool.Tool
	n atomic.Int64
}

func newFake(name string, effect tool.Effect, fn func(ctx context.Context, req tool.Request) (any, error)) *fake {
	f := &fake{}
	f.Tool = &tool.Tool{Name: name, Description: name + " tool", InputSchema: objectSchema, Effect: effect,
		Func: func(ctx context.Context, req tool.Request) (any, error) {
			f.n.Add(1)
			return fn(ctx, req)
		}}
	return f
}

func ok(payload any) func(context.Context, tool.Request) (any, error) {
	return func(context.Context, tool.Request) (any, error) { return payload, nil }
}

func fails(err error) func(context.Context, tool.Request) (any, error) {
	return func(context.Context, tool.Request) (any, error) { return nil, err }
}

func (f *fake) executions() int { return int(f.n.Load()) }

// event is one recorded observer event.
type event struct {
	Kind    string
	Tool    string
	CallID  string
	Outcome string
	Code    string
	Count   int
	Reason  string
	Dur     time.Duration
}

// recorder records events in order.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) OnNodeStarted(context.Context, react.NodeEvent) { r.add(event{Kind: "started"}) }
func (r *recorder) OnToolInvoked(_ context.Context, e react.ToolEvent) {
	code := ""
	if e.Code != 0 {
		code = e.Code.String()
	}
	r.add(event{Kind: "tool", Tool: e.Tool, CallID: e.CallID, Outcome: e.Outcome.String(), Code: code, Dur: e.Duration})
}
func (r *recorder) OnToolSkipped(_ context.Context, e react.ToolEvent) {
	r.add(event{Kind: "skipped", Tool: e.Tool, CallID: e.CallID})
}
func (r *recorder) OnNoToolCalls(context.Context, react.RoundEvent) {
	r.add(event{Kind: "no_tool_calls"})
}
func (r *recorder) OnStall(_ context.Context, e react.StallEvent) {
	r.add(event{Kind: "stall", Count: e.Count, Reason: e.Reason, CallID: e.CallID})
}
func (r *recorder) OnStallReset(_ context.Context, e react.StallEvent) {
	r.add(event{Kind: "reset", CallID: e.CallID})
}
func (r *recorder) OnSuspended(_ context.Context, e react.SuspendEvent) {
	r.add(event{Kind: "suspended", Reason: e.Suspension.Kind.String()})
}
func (r *recorder) OnFinished(context.Context, react.EndEvent) { r.add(event{Kind: "finished"}) }
func (r *recorder) OnFailed(_ context.Context, e react.EndEvent) {
	r.add(event{Kind: "failed", Reason: e.Failure.Kind.String()})
}

func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.Kind)
	}
	return out
}

func (r *recorder) of(kind string) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// fixed clock: every reading advances by one millisecond.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// env is a loop under test with its model, observer and stores.
type env struct {
	t      testing.TB
	model  *script
	rec    *recorder
	guards *guard.Options
	loop   *react.Loop
	cfg    react.Config
}

func newEnv(t testing.TB, m *script, tools ...*tool.Tool) *env {
	t.Helper()
	cat, err := tool.NewCatalog(tools...)
	require.NoError(t, err)
	e := &env{t: t, model: m, rec: &recorder{}, guards: memoryStores()}
	e.cfg = react.Config{
		Model:    m,
		Tools:    cat,
		Guards:   e.guards,
		Observer: e.rec,
		NewRunID: func(context.Context) string { return "run-1" },
		Now:      (&clock{}).now,
	}
	e.loop, err = react.New(e.cfg)
	require.NoError(t, err)
	return e
}

// memoryStores returns guard options with in-memory stores, to be shared by
// the loops of one test as a service shares its stores.
func memoryStores() *guard.Options {
	return &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
}

// again builds a second loop on the same config and stores, as another
// process connected to the same stores would.
func (e *env) again(m react.Model) *react.Loop {
	cfg := e.cfg
	cfg.Model = m
	l, err := react.New(cfg)
	require.NoError(e.t, err)
	return l
}

func (e *env) run(node react.Node, input string) react.Result {
	e.t.Helper()
	res, err := e.loop.Run(context.Background(), node, input)
	require.NoError(e.t, err)
	return res
}

// toolMessages returns the tool messages of a transcript.
func toolMessages(ms []react.Message) []react.Message {
	var out []react.Message
	for _, m := range ms {
		if m.Role == react.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

// toolMessage returns the tool message answering callID.
func toolMessage(t *testing.T, ms []react.Message, callID string) react.Message {
	t.Helper()
	var found []react.Message
	for _, m := range ms {
		if m.Role == react.RoleTool && m.ToolCallID == callID {
			found = append(found, m)
		}
	}
	require.Len(t, found, 1, "exactly one tool message answers %s", callID)
	return found[0]
}

// requirePaired asserts that every tool call of the transcript has exactly
// one tool message, after its turn and before the next assistant turn.
func requirePaired(t *testing.T, ms []react.Message) {
	t.Helper()
	for i, m := range ms {
		if m.Role != react.RoleAssistant {
			continue
		}
		want := map[string]bool{}
		for _, c := range m.ToolCalls {
			want[c.ID] = true
		}
		got := map[string]int{}
		for _, n := range ms[i+1:] {
			if n.Role == react.RoleAssistant {
				break
			}
			if n.Role == react.RoleTool {
				got[n.ToolCallID]++
			}
		}
		for id := range want {
			require.Equal(t, 1, got[id], "call %s of message %d has %d tool messages; want 1", id, i, got[id])
		}
		for id := range got {
			require.True(t, want[id], "tool message %s answers no call of message %d", id, i)
		}
	}
}

// ticketOf returns the ticket of the suspension sealed in snap, read as an
// inbox reads it (Loop.Inspect); "" when snap does not open or holds no
// suspension.
func ticketOf(t testing.TB, l *react.Loop, snap []byte, opts ...react.RunOption) string {
	t.Helper()
	p, err := l.Inspect(context.Background(), snap, opts...)
	if err != nil || p.Suspension == nil {
		return ""
	}
	return p.Suspension.Ticket
}

// dispatch passes e to the method of o named after its kind, when o has
// one (OnToolInvoked, OnRunStart, …), so that a test observer is written
// as a set of small methods; it returns the context a start method
// returned, ctx otherwise.
func dispatch(ctx context.Context, e react.Event, o any) context.Context {
	switch e.Kind {
	case react.EventRunStart:
		if m, ok := o.(interface {
			OnRunStart(context.Context, react.RunStartEvent) context.Context
		}); ok {
			return m.OnRunStart(ctx, *e.RunStart)
		}
		if m, ok := o.(interface {
			OnNodeStarted(context.Context, react.NodeEvent)
		}); ok && !e.RunStart.Resumed {
			m.OnNodeStarted(ctx, e.RunStart.NodeEvent)
		}
	case react.EventRunEnd:
		if m, ok := o.(interface {
			OnRunEnd(context.Context, react.RunEndEvent)
		}); ok {
			m.OnRunEnd(ctx, *e.RunEnd)
		}
	case react.EventModelStart:
		if m, ok := o.(interface {
			OnModelStart(context.Context, react.ModelStartEvent) context.Context
		}); ok {
			return m.OnModelStart(ctx, *e.ModelStart)
		}
	case react.EventModelEnd:
		if m, ok := o.(interface {
			OnModelEnd(context.Context, react.ModelEndEvent)
		}); ok {
			m.OnModelEnd(ctx, *e.ModelEnd)
		}
	case react.EventToolStart:
		if m, ok := o.(interface {
			OnToolStart(context.Context, react.ToolStartEvent) context.Context
		}); ok {
			return m.OnToolStart(ctx, *e.ToolStart)
		}
	case react.EventToolEnd:
		if m, ok := o.(interface {
			OnToolEnd(context.Context, react.ToolEndEvent)
		}); ok {
			m.OnToolEnd(ctx, *e.ToolEnd)
		}
	case react.EventToolInvoked, react.EventToolSkipped:
		name := map[react.EventKind]string{react.EventToolInvoked: "invoked", react.EventToolSkipped: "skipped"}[e.Kind]
		if m, ok := o.(interface {
			OnToolInvoked(context.Context, react.ToolEvent)
		}); ok && name == "invoked" {
			m.OnToolInvoked(ctx, *e.Tool)
		}
		if m, ok := o.(interface {
			OnToolSkipped(context.Context, react.ToolEvent)
		}); ok && name == "skipped" {
			m.OnToolSkipped(ctx, *e.Tool)
		}
	case react.EventNoToolCalls:
		if m, ok := o.(interface {
			OnNoToolCalls(context.Context, react.RoundEvent)
		}); ok {
			m.OnNoToolCalls(ctx, e.RoundEvent)
		}
	case react.EventStall:
		if m, ok := o.(interface {
			OnStall(context.Context, react.StallEvent)
		}); ok {
			m.OnStall(ctx, *e.Stall)
		}
	case react.EventStallReset:
		if m, ok := o.(interface {
			OnStallReset(context.Context, react.StallEvent)
		}); ok {
			m.OnStallReset(ctx, *e.Stall)
		}
	case react.EventSuspended:
		if m, ok := o.(interface {
			OnSuspended(context.Context, react.SuspendEvent)
		}); ok {
			m.OnSuspended(ctx, *e.Suspend)
		}
	case react.EventFinished:
		if m, ok := o.(interface {
			OnFinished(context.Context, react.EndEvent)
		}); ok {
			m.OnFinished(ctx, *e.End)
		}
	case react.EventFailed:
		if m, ok := o.(interface {
			OnFailed(context.Context, react.EndEvent)
		}); ok {
			m.OnFailed(ctx, *e.End)
		}
	default:
	}
	return ctx
}

// Observe implements react.Observer through dispatch.
func (r *recorder) Observe(ctx context.Context, e react.Event) context.Context {
	return dispatch(ctx, e, r)
}
