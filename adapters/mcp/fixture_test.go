package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// fixture is a client session on a real SDK server, with the session's
// tools converted.
type fixture struct {
	server  *sdk.Server // nil for a subprocess server
	session *sdk.ClientSession
	tools   map[string]*tool.Tool
	started chan string   // names of blocking tools that began to run
	release chan struct{} // closed to unblock blocking tools
	once    sync.Once
}

func newFixture() *fixture {
	return &fixture{started: make(chan string, 16), release: make(chan struct{})}
}

// unblock releases every blocking tool; it may be called more than once.
func (f *fixture) unblock() { f.once.Do(func() { close(f.release) }) }

// startedFunc reports started tools on f.started.
func (f *fixture) startedFunc() func(string) {
	return func(name string) { f.started <- name }
}

// connect connects a client over ct, converts the tools with opts and
// registers the cleanup.
func (f *fixture) connect(t *testing.T, ct sdk.Transport, opts *Options) {
	t.Helper()
	ctx := t.Context()
	client := sdk.NewClient(&sdk.Implementation{Name: "reactguard-test-client", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(context.WithoutCancel(ctx), ct, nil)
	require.NoError(t, err, "Connect")
	f.session = cs
	t.Cleanup(func() {
		// Blocking tools first: a server still running a handler the client
		// gave up on can hold up the session's close (over HTTP, up to the
		// SDK's 5 s DELETE timeout).
		f.unblock()
		_ = cs.Close()
	})
	list, err := Tools(ctx, cs, opts)
	require.NoError(t, err, "Tools")
	f.tools = make(map[string]*tool.Tool, len(list))
	for _, tl := range list {
		f.tools[tl.Name] = tl
	}
}

// inMemory returns a fixture on an in-memory connection to newServer.
func inMemory(t *testing.T, opts *Options) *fixture {
	t.Helper()
	f := newFixture()
	f.server = newServer(f.startedFunc(), f.release)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := f.server.Connect(t.Context(), st, nil)
	require.NoError(t, err, "server Connect")
	t.Cleanup(func() {
		f.unblock()
		_ = ss.Close()
		_ = ss.Wait()
	})
	f.connect(t, ct, opts)
	return f
}

// tool returns the converted tool called name.
func (f *fixture) tool(t *testing.T, name string) *tool.Tool {
	t.Helper()
	tl, ok := f.tools[name]
	require.Truef(t, ok, "no tool %q among the converted tools", name)
	return tl
}

// verdict is the core's default invoker's observation of one call, in
// fields: outcome, code, payload, reason and next step. err is set only for
// the caller's cancellation, which the invoker returns as a Go error.
type verdict struct {
	outcome outcome.Outcome
	code    errcode.Code
	data    any
	reason  string
	next    string
	err     error
}

// invoke is the core's default invoker, the innermost handler of every
// reactguard chain: the tests assert the observations it makes of the
// adapter's results, which is what the model and the loop see.
var invoke = invoker.New(nil)

// call runs tl through the default invoker with the JSON arguments args
// (under tl.Timeout, as the invoker applies it) and returns the verdict.
func call(ctx context.Context, tl *tool.Tool, args string) verdict {
	obs, err := invoke(ctx, invoker.Call{
		ID: "call-1", Name: tl.Name, Args: json.RawMessage(args), Tool: tl,
		Run: "run-1", Round: 1, Attempt: 1, IdempotencyKey: "key-1",
	})
	if err != nil {
		return verdict{err: err}
	}
	return verdict{outcome: obs.Outcome(), code: obs.Code(), data: obs.Data(), reason: obs.Reason(), next: obs.Next()}
}
