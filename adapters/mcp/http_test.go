package mcp

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
)

// httpFixture is a fixture whose server is the SDK's streamable HTTP
// handler on 127.0.0.1. The handler can be swapped (a restarted server that
// lost every session) and the server stopped.
type httpFixture struct {
	*fixture
	srv     *httptest.Server
	handler atomic.Pointer[http.Handler]
	servers []*sdk.Server // every server the handlers served, the first included
}

// overHTTP starts the test server behind the SDK's streamable HTTP handler
// and connects a client to it.
func overHTTP(t *testing.T, opts *Options) *httpFixture {
	t.Helper()
	f := &httpFixture{fixture: newFixture()}
	f.server = newServer(f.startedFunc(), f.release)
	f.restart()
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*f.handler.Load()).ServeHTTP(w, r)
	}))
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		f.unblock()
		f.srv.CloseClientConnections()
		f.srv.Close()
		client.CloseIdleConnections()
		// A client that lost its server never sends the DELETE that ends
		// the server side of its session: end those sessions here, as a
		// server's shutdown would.
		for _, s := range f.servers {
			for ss := range s.Sessions() {
				_ = ss.Close()
			}
		}
	})
	f.connect(t, &sdk.StreamableClientTransport{Endpoint: f.srv.URL, HTTPClient: client}, opts)
	return f
}

// restart replaces the HTTP handler with a fresh one serving a fresh
// server, as a restarted process would: it knows no session.
func (f *httpFixture) restart() {
	s := f.server
	if f.handler.Load() != nil {
		s = newServer(nil, f.release)
	}
	f.servers = append(f.servers, s)
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	f.handler.Store(&h)
}

// TestHTTPOutcomes: the outcomes of an intact connection are the same over
// streamable HTTP as in memory.
func TestHTTPOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		tool        string
		args        string
		wantOutcome outcome.Outcome
		wantCode    errcode.Code
		reason      string
	}{
		{"success", "echo", `{"text":"hi"}`, outcome.Success, 0, "a plain call succeeds"},
		{"isError result", "fail", `{}`, outcome.Failed, errcode.MCPToolError, "the tool's own error result"},
		{"schema violation", "count", `{"name":1,"count":1}`, outcome.Rejected, errcode.ArgRejected, "the SDK's schema-validation result is an argument rejection"},
		{"invalid params", "raw_invalid_params", `{}`, outcome.Failed, errcode.MCPInvalidParams, "JSON-RPC -32602 survives the HTTP transport"},
		{"rpc error", "raw_internal", `{}`, outcome.Failed, errcode.MCPRPCError, "other JSON-RPC codes survive the HTTP transport"},
	}
	f := overHTTP(t, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t.Context(), f.tool(t, tc.tool), tc.args)
			assert.NoErrorf(t, got.err, "call(%s) error; want none (%s)", tc.tool, tc.reason)
			assert.Equalf(t, tc.wantOutcome, got.outcome, "call(%s) outcome = %v; want %v (%s)", tc.tool, got.outcome, tc.wantOutcome, tc.reason)
			assert.Equalf(t, tc.wantCode, got.code, "call(%s) code = %v; want %v (%s)", tc.tool, got.code, tc.wantCode, tc.reason)
		})
	}
}

// TestHTTPDeadline: a blocking tool whose deadline passes is TOOL_TIMEOUT
// over HTTP too. (Whether the session survives depends on the protocol
// version: see go-sdk issue #1212; it is not asserted.)
func TestHTTPDeadline(t *testing.T) {
	f := overHTTP(t, &Options{Timeout: 50 * time.Millisecond})
	got := call(t.Context(), f.tool(t, "block"), `{}`)
	assert.Equalf(t, errcode.ToolTimeout, got.code, "call(block) code = %v; want TOOL_TIMEOUT", got.code)
}

// TestHTTPServerGoneMidCall: the server drops every connection and stops
// listening while a call is running: TOOL_UNREACHABLE (the SDK reports
// JSON-RPC -32005 with the network error in the chain, classified as a
// transport condition before any JSON-RPC code).
func TestHTTPServerGoneMidCall(t *testing.T) {
	f := overHTTP(t, nil)
	go func() {
		<-f.started
		_ = f.srv.Listener.Close()
		f.srv.CloseClientConnections()
	}()
	got := call(t.Context(), f.tool(t, "block"), `{}`)
	assert.Equalf(t, outcome.Failed, got.outcome, "call(block) with the server gone outcome = %v; want FAILED", got.outcome)
	assert.Equalf(t, errcode.ToolUnreachable, got.code, "call(block) with the server gone code = %v (%s); want TOOL_UNREACHABLE", got.code, got.reason)
}

// TestHTTPRefused: the server stopped between calls; the next call's
// connection is refused: TOOL_UNREACHABLE.
func TestHTTPRefused(t *testing.T) {
	f := overHTTP(t, nil)
	f.srv.CloseClientConnections()
	f.srv.Close()
	got := call(t.Context(), f.tool(t, "echo"), `{"text":"hi"}`)
	assert.Equalf(t, errcode.ToolUnreachable, got.code, "call(echo) to a stopped server code = %v (%s); want TOOL_UNREACHABLE", got.code, got.reason)
	again := call(t.Context(), f.tool(t, "echo"), `{"text":"hi"}`)
	assert.Equalf(t, errcode.ToolUnreachable, again.code, "second call(echo) to a stopped server code = %v (%s); want TOOL_UNREACHABLE", again.code, again.reason)
}

// TestHTTPSessionLost: the server restarted and no longer knows the
// session (HTTP 404, mcp.ErrSessionMissing): TOOL_UNREACHABLE, and so is
// every later call on the dead session.
func TestHTTPSessionLost(t *testing.T) {
	f := overHTTP(t, nil)
	f.restart()
	got := call(t.Context(), f.tool(t, "echo"), `{"text":"hi"}`)
	assert.Equalf(t, errcode.ToolUnreachable, got.code, "call(echo) after a restart code = %v (%s); want TOOL_UNREACHABLE", got.code, got.reason)
	again := call(t.Context(), f.tool(t, "echo"), `{"text":"hi"}`)
	assert.Equalf(t, errcode.ToolUnreachable, again.code, "second call(echo) after a restart code = %v (%s); want TOOL_UNREACHABLE", again.code, again.reason)
}
