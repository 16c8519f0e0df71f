package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// payIn is the input of the pay server's write tool.
type payIn struct {
	Amount int  `json:"amount"`
	Hold   bool `json:"hold,omitempty"` // wait for release before answering
}

// payServer is a real SDK server with a write tool, pay, that records each
// execution by the idempotency key in the request's _meta and then, when
// asked to hold, answers only once released (a backend that committed and
// is slow to reply), and a read tool, slow, that waits for its context or
// the release.
type payServer struct {
	server  *sdk.Server
	started chan string
	release chan struct{}
	once    sync.Once

	mu   sync.Mutex
	paid map[string]int // executions by idempotency key
}

func newPayServer() *payServer {
	p := &payServer{
		server:  sdk.NewServer(&sdk.Implementation{Name: "pay", Version: "v0.0.1"}, nil),
		started: make(chan string, 16),
		release: make(chan struct{}),
		paid:    make(map[string]int),
	}
	sdk.AddTool(p.server, &sdk.Tool{Name: "pay", Description: "Pays."},
		func(_ context.Context, req *sdk.CallToolRequest, in payIn) (*sdk.CallToolResult, any, error) {
			key, _ := req.Params.Meta[idempotencyMetaKey].(string)
			p.mu.Lock()
			p.paid[key]++
			p.mu.Unlock()
			p.started <- "pay"
			if in.Hold {
				<-p.release // committed: the answer comes late, whatever the client does
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "paid"}}}, nil, nil
		})
	sdk.AddTool(p.server, &sdk.Tool{Name: "slow", Description: "Waits.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			p.started <- "slow"
			select {
			case <-ctx.Done(): // never, when the cancellation was refused
			case <-p.release:
			}
			return nil, nil, errors.New("gave up")
		})
	return p
}

// unblock releases every held pay call; it may be called more than once.
func (p *payServer) unblock() { p.once.Do(func() { close(p.release) }) }

// executions returns how often pay ran, all keys together.
func (p *payServer) executions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.paid {
		n += c
	}
	return n
}

// verify is a tool.VerifyFunc backed by the server's own records.
func (p *payServer) verify(_ context.Context, key string) (tool.WriteStatus, any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paid[key] > 0 {
		return tool.WriteApplied, "paid", nil
	}
	return tool.WriteNotApplied, nil, nil
}

// waitStarted waits until the server started the tool called name.
func (p *payServer) waitStarted(t *testing.T, name string) {
	t.Helper()
	for {
		select {
		case got := <-p.started:
			if got == name {
				return
			}
		case <-t.Context().Done():
			t.Fatalf("the server never started %s", name)
		}
	}
}

// refuseCancel answers 400 Bad Request to a POST carrying
// notifications/cancelled, as the server of go-sdk issue #1212 does on
// protocol 2026-07-28, and passes everything else to next. refused, when
// not nil, is signalled after each refusal.
func refuseCancel(next http.Handler, refused chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
				http.Error(w, "Bad Request", http.StatusBadRequest)
				select {
				case refused <- struct{}{}:
				default:
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// loseAnswer lets every tools/call of pay reach next (the server runs it)
// and then answers with an HTML page (status 200) in its place, as a
// gateway or web application firewall does that replaces a reply it
// dislikes. (A 5xx would not do: the SDK reports 500, 502, 503, 504 and 429
// as JSON-RPC -32005, a transport condition.)
func loseAnswer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"tools/call"`)) || !bytes.Contains(body, []byte(`"pay"`)) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(httptest.NewRecorder(), r)
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>Request blocked</body></html>")
	})
}

// payClient is one client session on the pay server over streamable HTTP
// with the SDK's default protocol, and its tools in a catalog.
type payClient struct {
	session *sdk.ClientSession
	tools   *tool.Catalog
}

// connectPay connects a new client session to url (a reconnecting host
// does the same after a session failed) and converts the tools; verify,
// when not nil, becomes pay's Verify; slowTimeout bounds the read tool.
func connectPay(t *testing.T, url string, verify tool.VerifyFunc, slowTimeout time.Duration) *payClient {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	client := sdk.NewClient(&sdk.Implementation{Name: "reactguard-test-client", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(context.WithoutCancel(t.Context()), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	require.NoError(t, err, "Connect")
	t.Cleanup(func() {
		_ = cs.Close()
		hc.CloseIdleConnections()
	})
	list, err := Tools(t.Context(), cs, &Options{IdempotencyMetaKey: idempotencyMetaKey})
	require.NoError(t, err, "Tools")
	for _, tl := range list {
		switch tl.Name {
		case "pay":
			tl.Verify = verify
		case "slow":
			tl.Timeout = slowTimeout
		}
	}
	return &payClient{session: cs, tools: tool.MustCatalog(list...)}
}

// serve starts an HTTP server for p behind wrap and registers its cleanup.
func serve(t *testing.T, p *payServer, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return p.server }, nil)
	srv := httptest.NewServer(wrap(h))
	t.Cleanup(func() {
		p.unblock()
		// A client whose session failed never sends the DELETE that ends
		// the server side of it: end those sessions first, as a server's
		// shutdown would.
		for ss := range p.server.Sessions() {
			_ = ss.Close()
		}
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// writeChain is the default guard chain around the default invoker, with
// stores shared by every call of a test: the chain a loop builds. Writes
// are pre-approved (RequireApproval false): the tests are about execution.
func writeChain() invoker.Handler {
	return invoker.Chain(invoker.New(nil), guard.Default(&guard.Options{
		Ledger:          evidence.NewMemory(),
		Approvals:       guard.NewMemoryApprovals(),
		WriteLedger:     guard.NewMemoryWriteLedger(),
		RequireApproval: func(invoker.Call) bool { return false },
	})...)
}

// through runs one call of name through h, as the loop would in run-1.
func through(t *testing.T, h invoker.Handler, c *payClient, id, name, args string) observation.Observation {
	t.Helper()
	tl, ok := c.tools.Lookup(name)
	require.Truef(t, ok, "no tool %q", name)
	obs, err := h(t.Context(), invoker.Call{ID: id, Name: name, Args: json.RawMessage(args), Tool: tl, Run: "run-1", Round: 1, Attempt: 1})
	require.NoErrorf(t, err, "call %s(%s)", name, args)
	return obs
}

// TestHTTPTimedOutWriteRunsOnce: over streamable HTTP with the SDK's
// default protocol, a write times out on the client after the server ran
// it, and the server refuses the cancellation that follows (go-sdk #1212).
// The same write sent again through the chain does not run again: it waits
// for verification, and once the host reconnects with a verifier it is
// answered from the server's record. The server ran it exactly once.
func TestHTTPTimedOutWriteRunsOnce(t *testing.T) {
	p := newPayServer()
	srv := serve(t, p, func(h http.Handler) http.Handler { return refuseCancel(h, nil) })
	h := writeChain()
	first := connectPay(t, srv.URL, nil, 0)
	pay, _ := first.tools.Lookup("pay")
	pay.Timeout = 50 * time.Millisecond

	const args = `{"amount":5,"hold":true}`
	got := through(t, h, first, "c1", "pay", args)
	assert.Equalf(t, outcome.Failed, got.Outcome(), "first pay outcome = %v; want FAILED", got.Outcome())
	assert.Equalf(t, errcode.ToolTimeout, got.Code(), "first pay code = %v (%s); want TOOL_TIMEOUT", got.Code(), got.Reason())
	p.waitStarted(t, "pay")
	p.unblock()

	again := through(t, h, first, "c2", "pay", args)
	assert.Equalf(t, outcome.Deferred, again.Outcome(), "repeated pay outcome = %v (%s); want DEFERRED", again.Outcome(), again.Reason())
	assert.Equalf(t, errcode.WritePendingVerify, again.Code(), "repeated pay code = %v; want WRITE_PENDING_VERIFY", again.Code())

	second := connectPay(t, srv.URL, p.verify, 0)
	verified := through(t, h, second, "c3", "pay", args)
	assert.Equalf(t, outcome.Success, verified.Outcome(), "pay after reconnecting with a verifier outcome = %v (%s); want SUCCESS (the verified write reused)", verified.Outcome(), verified.Reason())
	assert.Equalf(t, 1, p.executions(), "the server ran pay %d times; want exactly once", p.executions())
}

// TestHTTPWriteLostWithItsSessionRunsOnce reproduces the failure of issue
// 8: a write is running on the server when another call of the session
// times out; the server refuses the cancellation, the session fails, and
// the write's call returns `sending "notifications/cancelled": Bad
// Request` although the server ran it. That error proves nothing about the
// request, so the write is TOOL_UNREACHABLE (uncertain), never TOOL_ERROR,
// and after the host reconnects the same write does not run again.
func TestHTTPWriteLostWithItsSessionRunsOnce(t *testing.T) {
	p := newPayServer()
	refused := make(chan struct{}, 4)
	srv := serve(t, p, func(h http.Handler) http.Handler { return refuseCancel(h, refused) })
	h := writeChain()
	first := connectPay(t, srv.URL, nil, 50*time.Millisecond)

	const args = `{"amount":7,"hold":true}`
	paid := make(chan observation.Observation, 1)
	go func() { paid <- through(t, h, first, "c1", "pay", args) }()
	p.waitStarted(t, "pay")

	slow := through(t, h, first, "c2", "slow", `{}`)
	require.Equalf(t, errcode.ToolTimeout, slow.Code(), "slow code = %v (%s); want TOOL_TIMEOUT", slow.Code(), slow.Reason())
	<-refused
	// The refusal fails the client's session; wait until its connection is
	// done (the SDK takes about 5 s to wind it down) before the server
	// answers the write, so that the answer meets the failed session.
	assert.Errorf(t, first.session.Wait(), "Wait on the session that lost the cancellation = nil; want its failure")
	p.unblock()
	got := <-paid
	assert.Equalf(t, outcome.Failed, got.Outcome(), "pay outcome = %v; want FAILED", got.Outcome())
	assert.Equalf(t, errcode.ToolUnreachable, got.Code(), "pay code = %v (%s); want TOOL_UNREACHABLE: the error came after the request was sent", got.Code(), got.Reason())
	assert.Truef(t, guard.UncertainWrite(got.Code()), "UncertainWrite(%v) = false; want the lost write uncertain", got.Code())

	second := connectPay(t, srv.URL, nil, 0)
	again := through(t, h, second, "c3", "pay", args)
	assert.Equalf(t, errcode.WritePendingVerify, again.Code(), "pay after reconnecting code = %v (%s); want WRITE_PENDING_VERIFY", again.Code(), again.Reason())
	assert.Equalf(t, 1, p.executions(), "the server ran pay %d times; want exactly once", p.executions())
}

// TestHTTPAnswerLostByGatewayRunsOnce: a gateway lets the write reach the
// server and answers an HTML page in place of the server's reply. The SDK
// reports `sending "tools/call": unsupported content type "text/html"`, a
// plain error; the write is uncertain and does not run again.
func TestHTTPAnswerLostByGatewayRunsOnce(t *testing.T) {
	p := newPayServer()
	srv := serve(t, p, loseAnswer)
	h := writeChain()
	first := connectPay(t, srv.URL, nil, 0)

	const args = `{"amount":9}`
	got := through(t, h, first, "c1", "pay", args)
	assert.Equalf(t, errcode.ToolUnreachable, got.Code(), "pay code = %v (%s); want TOOL_UNREACHABLE", got.Code(), got.Reason())
	assert.Truef(t, strings.Contains(got.Reason(), "outcome is unknown"), "pay reason = %q; want it to say the outcome is unknown", got.Reason())

	second := connectPay(t, srv.URL, nil, 0)
	again := through(t, h, second, "c2", "pay", args)
	assert.Equalf(t, errcode.WritePendingVerify, again.Code(), "pay after reconnecting code = %v (%s); want WRITE_PENDING_VERIFY", again.Code(), again.Reason())
	assert.Equalf(t, 1, p.executions(), "the server ran pay %d times; want exactly once", p.executions())
}
