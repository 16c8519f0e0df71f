package invoker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var en = prompt.For(prompt.English)

// fnTool returns a tool named name running fn.
func fnTool(name string, fn tool.Func) *tool.Tool {
	return &tool.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}, Func: fn, Effect: tool.Read}
}

// failing returns a tool named name that returns err.
func failing(name string, err error) *tool.Tool {
	return fnTool(name, func(context.Context, tool.Request) (any, error) { return nil, err })
}

func call(t *tool.Tool) invoker.Call {
	c := invoker.Call{ID: "call_1", Args: json.RawMessage(`{}`), Tool: t, Round: 1, Attempt: 1}
	if t != nil {
		c.Name = t.Name
	}
	return c
}

// wrap3 wraps err three levels deep with %w.
func wrap3(err error) error {
	return fmt.Errorf("handler: %w", fmt.Errorf("client: %w", fmt.Errorf("transport: %w", err)))
}

// timeoutErr is a net.Error whose Timeout reports true.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

// nilPtrErr has a pointer receiver that dereferences: a typed nil of it
// panics when asked for its text.
type nilPtrErr struct{ msg string }

func (e *nilPtrErr) Error() string { return e.msg }

func refused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
}

type classCase struct {
	name    string
	reason  string
	tool    *tool.Tool // nil: no tool definition
	outcome outcome.Outcome
	code    errcode.Code
	// text is the exact reason; empty means "the code's template with {tool}
	// and {detail}" is not checked literally, only contains is.
	text     string
	contains string
	next     string // exact next step; empty: the default for code
}

func classificationCases() []classCase {
	rej := tool.Reject(errcode.ApprovalNotGated, "approval was requested, but no write is waiting", "call the write tool directly")
	return []classCase{
		{
			name: "success", reason: "a tool that returns is SUCCESS",
			tool:    fnTool("search", func(context.Context, tool.Request) (any, error) { return []string{"a"}, nil }),
			outcome: outcome.Success, text: "search succeeded",
		},
		{
			name: "no tool", reason: "a call without a definition is not in the catalog",
			tool: nil, outcome: outcome.Rejected, code: errcode.CatalogDenied,
			text: "tool ghost is not available in this node",
		},
		{
			name: "no func", reason: "a definition without a function fails without crashing",
			tool:    &tool.Tool{Name: "hollow"},
			outcome: outcome.Failed, code: errcode.ToolError, text: "hollow failed: it stopped with an internal error",
		},
		{
			name: "rejection", reason: "a built-in tool's rejection keeps its own code, reason and next step",
			tool: failing("builtin_node_approval", rej), outcome: outcome.Rejected, code: errcode.ApprovalNotGated,
			text: "approval was requested, but no write is waiting", next: "call the write tool directly",
		},
		{
			name: "rejection wrapped three levels", reason: "frameworks wrap; the chain is walked",
			tool: failing("builtin_node_approval", wrap3(rej)), outcome: outcome.Rejected, code: errcode.ApprovalNotGated,
			text: "approval was requested, but no write is waiting", next: "call the write tool directly",
		},
		{
			name: "rejection joined with a failure", reason: "a rejection wins over every other row",
			tool:    failing("builtin_node_approval", errors.Join(tool.Unavailable("down"), context.DeadlineExceeded, rej)),
			outcome: outcome.Rejected, code: errcode.ApprovalNotGated, next: "call the write tool directly",
		},
		{
			name: "rejection without reason", reason: "the code's template stands in for a missing reason (§7.2)",
			tool:    failing("builtin_node_approval", tool.Reject(errcode.ApprovalNotGated, "", "call the write tool directly")),
			outcome: outcome.Rejected, code: errcode.ApprovalNotGated,
			text: "approval was requested for builtin_node_approval, but no call of a write tool is waiting for approval",
			next: "call the write tool directly",
		},
		{
			name: "zero rejection", reason: "a Rejection not built by Reject has no code nor next step: a tool bug, never a panic",
			tool: failing("broken", &tool.Rejection{}), outcome: outcome.Failed, code: errcode.ToolError,
			contains: "broken failed: ",
		},
		{
			name: "args error", reason: "a typed tool that cannot decode its arguments rejects the call",
			tool:    tool.New("typed", "", func(context.Context, struct{ N int }) (any, error) { return nil, nil }),
			outcome: outcome.Rejected, code: errcode.ArgJSONInvalid, contains: "the arguments of typed are not a JSON object: ",
		},
		{
			name: "args error wrapped", reason: "wrapped args errors are found too",
			tool:    failing("typed", wrap3(&tool.ArgsError{Tool: "typed", Err: &json.UnmarshalTypeError{Value: "string", Type: reflect.TypeFor[int](), Field: "count"}})),
			outcome: outcome.Rejected, code: errcode.ArgJSONInvalid, text: "the arguments of typed are not a JSON object: field count: want an integer, got a string",
		},
		{
			name: "args error without cause", reason: "a nil cause does not crash the detail",
			tool:    failing("typed", &tool.ArgsError{Tool: "typed"}),
			outcome: outcome.Rejected, code: errcode.ArgJSONInvalid, text: "the arguments of typed are not a JSON object: the arguments do not decode",
		},
		{
			name: "deadline from the tool", reason: "a tool's own deadline while the caller waits is a timeout",
			tool:    failing("slow", wrap3(context.DeadlineExceeded)),
			outcome: outcome.Failed, code: errcode.ToolTimeout, contains: "slow did not answer in time: ",
		},
		{
			name: "net timeout", reason: "a net.Error with Timeout() is a timeout",
			tool:    failing("slow", wrap3(timeoutErr{})),
			outcome: outcome.Failed, code: errcode.ToolTimeout,
		},
		{
			name: "os deadline", reason: "os.ErrDeadlineExceeded reports Timeout()",
			tool:    failing("slow", &fs.PathError{Op: "read", Path: "/dev/tty", Err: os.ErrDeadlineExceeded}),
			outcome: outcome.Failed, code: errcode.ToolTimeout,
		},
		{
			name: "url timeout", reason: "an HTTP client timeout arrives as *url.Error",
			tool:    failing("slow", &url.Error{Op: "Get", URL: "http://x", Err: timeoutErr{}}),
			outcome: outcome.Failed, code: errcode.ToolTimeout,
		},
		{
			name: "timeout joined", reason: "errors.Join trees are walked",
			tool:    failing("slow", errors.Join(errors.New("a"), fmt.Errorf("b: %w", timeoutErr{}))),
			outcome: outcome.Failed, code: errcode.ToolTimeout,
		},
		{
			name: "timeout beats typed", reason: "a deadline inside a typed error is still a timeout (timeouts before typed errors)",
			tool:    failing("slow", tool.Classified(tool.KindUnavailable, "gave up", context.DeadlineExceeded)),
			outcome: outcome.Failed, code: errcode.ToolTimeout,
		},
		{
			name: "typed timeout", reason: "an adapter may say timeout itself",
			tool:    failing("slow", tool.Classified(tool.KindTimeout, "no answer in 5s", nil)),
			outcome: outcome.Failed, code: errcode.ToolTimeout, text: "slow did not answer in time: no answer in 5s",
		},
		{
			name: "not found", reason: "typed",
			tool:    failing("order", tool.NotFound("order %s", "A1")),
			outcome: outcome.Failed, code: errcode.ToolNotFound, text: "order found no such resource: order A1",
		},
		{
			name: "forbidden wrapped three levels", reason: "typed errors are found however deep",
			tool:    failing("hr", wrap3(tool.Forbidden("no access"))),
			outcome: outcome.Failed, code: errcode.ToolForbidden, text: "hr was refused permission: no access",
		},
		{
			name: "unavailable joined", reason: "typed errors are found inside errors.Join",
			tool:    failing("stock", errors.Join(errors.New("attempt 1"), tool.Unavailable("maintenance"))),
			outcome: outcome.Failed, code: errcode.ToolUnavailable, text: "stock is temporarily unavailable: maintenance",
		},
		{
			name: "rate limited", reason: "typed",
			tool:    failing("stock", tool.RateLimited("60/min")),
			outcome: outcome.Failed, code: errcode.ToolRateLimited, text: "stock is rate limited: 60/min",
		},
		{
			name: "business with downstream", reason: "the downstream code goes into the reason, never into the code (§7.1)",
			tool:    failing("pay", tool.BusinessFailure("system.50001", "insufficient balance")),
			outcome: outcome.Failed, code: errcode.ToolBusinessFailed, text: "business failure [system.50001]: insufficient balance",
		},
		{
			name: "business without downstream", reason: "REASON_BUSINESS_FAILED when there is no downstream code",
			tool:    failing("pay", wrap3(tool.BusinessFailure("", "insufficient balance"))),
			outcome: outcome.Failed, code: errcode.ToolBusinessFailed, text: "business failure: insufficient balance",
		},
		{
			name: "typed unreachable", reason: "an adapter may say unreachable itself",
			tool:    failing("crm", tool.Unreachable(errors.New("session lost"))),
			outcome: outcome.Failed, code: errcode.ToolUnreachable, text: "crm could not be reached: details withheld",
		},
		{
			name: "typed io", reason: "typed",
			tool:    failing("fs", tool.Classified(tool.KindIO, "disk full", nil)),
			outcome: outcome.Failed, code: errcode.ToolIOError, text: "fs hit an I/O error: disk full",
		},
		{
			name: "mcp tool error", reason: "an MCP isError result",
			tool:    failing("mcp_search", tool.Classified(tool.KindMCPToolError, "index offline", nil)),
			outcome: outcome.Failed, code: errcode.MCPToolError, text: "MCP tool mcp_search reported an error: index offline",
		},
		{
			name: "mcp rpc error", reason: "a JSON-RPC error",
			tool:    failing("mcp_search", tool.Classified(tool.KindMCPRPC, "internal error", nil)),
			outcome: outcome.Failed, code: errcode.MCPRPCError,
		},
		{
			name: "mcp invalid params", reason: "JSON-RPC -32602 has its own next step",
			tool:    failing("mcp_search", tool.Classified(tool.KindMCPInvalidParams, "missing q", nil)),
			outcome: outcome.Failed, code: errcode.MCPInvalidParams,
		},
		{
			name: "typed zero kind", reason: "an *Error without a kind is a plain tool error",
			tool:    failing("x", &tool.Error{Message: "odd"}),
			outcome: outcome.Failed, code: errcode.ToolError, text: "x failed: odd",
		},
		{
			name: "typed beats transport", reason: "the tool that wrapped a reset connection knew more",
			tool:    failing("stock", tool.Classified(tool.KindUnavailable, "backend restarting", syscall.ECONNRESET)),
			outcome: outcome.Failed, code: errcode.ToolUnavailable,
		},
		{
			name: "connection refused", reason: "a dial that is refused",
			tool:    failing("crm", wrap3(refused())),
			outcome: outcome.Failed, code: errcode.ToolUnreachable, contains: "crm could not be reached: ",
		},
		{
			name: "bare econnrefused", reason: "the errno alone",
			tool:    failing("crm", syscall.ECONNREFUSED),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "econnreset", reason: "the peer dropped the connection",
			tool:    failing("crm", &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "epipe", reason: "writing to a closed connection",
			tool:    failing("crm", fmt.Errorf("write: %w", syscall.EPIPE)),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "eof", reason: "a stdio MCP server that died answers io.EOF",
			tool:    failing("crm", wrap3(io.EOF)),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "unexpected eof", reason: "a response cut short",
			tool:    failing("crm", io.ErrUnexpectedEOF),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "net closed", reason: "use of a closed connection",
			tool:    failing("crm", fmt.Errorf("read: %w", net.ErrClosed)),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "op error", reason: "any *net.OpError is transport",
			tool:    failing("crm", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("weird")}),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "dns error", reason: "no such host",
			tool:    failing("crm", &net.DNSError{Err: "no such host", Name: "crm.internal", IsNotFound: true}),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "url wrapping refused", reason: "an HTTP client error counts through what it wraps",
			tool:    failing("crm", &url.Error{Op: "Post", URL: "http://crm", Err: refused()}),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "url wrapping other", reason: "a *url.Error alone is not transport",
			tool:    failing("crm", &url.Error{Op: "Get", URL: "ftp://x", Err: errors.New("unsupported protocol scheme")}),
			outcome: outcome.Failed, code: errcode.ToolError,
		},
		{
			name: "transport beats io", reason: "a reset connection is also a syscall error",
			tool:    failing("crm", &fs.PathError{Op: "read", Path: "/sock", Err: syscall.ECONNRESET}),
			outcome: outcome.Failed, code: errcode.ToolUnreachable,
		},
		{
			name: "path error", reason: "file system errors are I/O",
			tool:    failing("fs", wrap3(&fs.PathError{Op: "open", Path: "/data/x", Err: fs.ErrNotExist})),
			outcome: outcome.Failed, code: errcode.ToolIOError, contains: "fs hit an I/O error: ",
		},
		{
			name: "syscall error", reason: "a failed system call is I/O",
			tool:    failing("fs", &os.SyscallError{Syscall: "fsync", Err: syscall.EIO}),
			outcome: outcome.Failed, code: errcode.ToolIOError,
		},
		{
			name: "bare errno", reason: "any other errno is I/O",
			tool:    failing("fs", syscall.ENOSPC),
			outcome: outcome.Failed, code: errcode.ToolIOError,
		},
		{
			name: "link error", reason: "rename/link failures are I/O",
			tool:    failing("fs", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: errors.New("cross-device")}),
			outcome: outcome.Failed, code: errcode.ToolIOError,
		},
		{
			name: "short write", reason: "io sentinels are I/O",
			tool:    failing("fs", errors.Join(errors.New("flush"), io.ErrShortWrite)),
			outcome: outcome.Failed, code: errcode.ToolIOError,
		},
		{
			name: "fs closed", reason: "a closed file is I/O",
			tool:    failing("fs", fs.ErrClosed),
			outcome: outcome.Failed, code: errcode.ToolIOError,
		},
		{
			name: "plain error", reason: "anything unknown is TOOL_ERROR; its text is withheld from the model",
			tool:    failing("x", errors.New("something broke")),
			outcome: outcome.Failed, code: errcode.ToolError, text: "x failed: details withheld",
		},
		{
			name: "canceled by the tool", reason: "context.Canceled from the tool while the caller waits is the tool's own failure",
			tool:    failing("x", wrap3(context.Canceled)),
			outcome: outcome.Failed, code: errcode.ToolError,
		},
		{
			name: "typed nil error", reason: "an error value whose methods panic is a tool bug, not a host crash",
			tool:    failing("x", (*nilPtrErr)(nil)),
			outcome: outcome.Failed, code: errcode.ToolError, text: "x failed: it stopped with an internal error",
		},
	}
}

func TestClassification(t *testing.T) {
	inv := invoker.New(&invoker.Options{Logger: slog.New(slog.DiscardHandler)})
	for _, tc := range classificationCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := call(tc.tool)
			name := c.Name
			if tc.tool == nil {
				c.Name, name = "ghost", "ghost"
			}
			if tc.name == "args error" {
				c.Args = json.RawMessage(`{"N":"one"}`)
			}
			got, err := inv(context.Background(), c)
			require.NoErrorf(t, err, "invoke(%s) returned an error; a tool outcome is an observation (%s)", tc.name, tc.reason)
			assert.Equalf(t, tc.outcome, got.Outcome(), "invoke(%s).Outcome() = %v; want %v (%s)", tc.name, got.Outcome(), tc.outcome, tc.reason)
			assert.Equalf(t, tc.code, got.Code(), "invoke(%s).Code() = %v; want %v (%s)", tc.name, got.Code(), tc.code, tc.reason)
			if tc.text != "" {
				assert.Equalf(t, tc.text, got.Reason(), "invoke(%s).Reason() = %q; want %q (%s)", tc.name, got.Reason(), tc.text, tc.reason)
			}
			if tc.contains != "" {
				assert.Containsf(t, got.Reason(), tc.contains, "invoke(%s).Reason() (%s)", tc.name, tc.reason)
			}
			if tc.outcome == outcome.Success {
				assert.Empty(t, got.Next())
				return
			}
			wantNext := tc.next
			if wantNext == "" {
				wantNext = en.Text(invoker.DefaultNext(tc.code), "tool", name)
			}
			assert.Equalf(t, wantNext, got.Next(), "invoke(%s).Next() = %q; want %q", tc.name, got.Next(), wantNext)
			assert.NotContains(t, got.Message(), "{", "no placeholder is left unfilled")
		})
	}
}

func TestSuccessKeepsPayload(t *testing.T) {
	payload := map[string]any{"id": 7}
	inv := invoker.New(nil)
	got, err := inv(context.Background(), call(fnTool("get", func(context.Context, tool.Request) (any, error) { return payload, nil })))
	require.NoError(t, err)
	assert.Equal(t, outcome.Success, got.Outcome())
	assert.Equal(t, payload, got.Data(), "the payload is passed through untouched")
	assert.Equal(t, "get succeeded", got.Message())

	got, err = inv(context.Background(), invoker.Call{Name: "alias", Tool: fnTool("", func(context.Context, tool.Request) (any, error) { return nil, nil })})
	require.NoError(t, err)
	assert.Equal(t, "alias succeeded", got.Reason(), "a definition without a name is called by the call's name")
}

func TestRequestFields(t *testing.T) {
	var got tool.Request
	tl := fnTool("w", func(_ context.Context, req tool.Request) (any, error) { got = req; return nil, nil })
	inv := invoker.New(nil)
	cases := []struct {
		name    string
		reason  string
		attempt int
		want    int
	}{
		{"unset attempt", "attempts count from 1 even when the caller left it 0", 0, 1},
		{"first", "passed through", 1, 1},
		{"retry", "passed through", 3, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := invoker.Call{ID: "c9", Name: "w", Args: json.RawMessage(`{"a":1}`), Tool: tl, Run: "run1", Attempt: tc.attempt, IdempotencyKey: "run1/w/abc", FencingToken: 7}
			_, err := inv(context.Background(), c)
			require.NoError(t, err)
			want := tool.Request{Run: "run1", CallID: "c9", Args: json.RawMessage(`{"a":1}`), Attempt: tc.want, IdempotencyKey: "run1/w/abc", FencingToken: 7}
			assert.Equalf(t, want, got, "Request for Attempt=%d = %+v; want %+v (%s)", tc.attempt, got, want, tc.reason)
		})
	}
}

func TestPanic(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		value  any
	}{
		{"string", "the common case", "boom: secret internal state"},
		{"error", "panic(err)", errors.New("boom: secret internal state")},
		{"nil deref", "a runtime error", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			inv := invoker.New(&invoker.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			tl := fnTool("explode", func(context.Context, tool.Request) (any, error) {
				if tc.value == nil {
					var m map[string]*int
					return *m["x"], nil
				}
				panic(tc.value)
			})
			got, err := inv(context.Background(), call(tl))
			require.NoError(t, err, "a panic is a tool outcome, not an infrastructure error")
			assert.Equal(t, outcome.Failed, got.Outcome())
			assert.Equal(t, errcode.ToolError, got.Code())
			assert.Equal(t, "explode failed: it stopped with an internal error", got.Reason())
			assert.Equal(t, en.Text(prompt.NextToolError, "tool", "explode"), got.Next())
			for _, leak := range []string{"goroutine", "panic", "secret", ".go:", "runtime"} {
				assert.NotContainsf(t, got.Message(), leak, "the model-facing text must not carry the stack or the panic value (%q)", leak)
				js, _ := json.Marshal(got)
				assert.NotContains(t, string(js), leak)
			}
			assert.Contains(t, logs.String(), "goroutine", "the stack goes to the logger")
			assert.Contains(t, logs.String(), "tool panicked")
			if tc.value != nil {
				assert.Contains(t, logs.String(), "secret internal state", "the panic value goes to the logger")
			}
		})
	}
}

func TestTypedNilLogged(t *testing.T) {
	var logs bytes.Buffer
	inv := invoker.New(&invoker.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	got, err := inv(context.Background(), call(failing("x", (*nilPtrErr)(nil))))
	require.NoError(t, err)
	assert.Equal(t, errcode.ToolError, got.Code())
	assert.Contains(t, logs.String(), "panicked while classified")
}

// blocking returns a tool that waits for its context and reports what the
// context said.
func blocking(name string, timeout time.Duration) *tool.Tool {
	tl := fnTool(name, func(ctx context.Context, _ tool.Request) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	tl.Timeout = timeout
	return tl
}

func TestTimeouts(t *testing.T) {
	const short = time.Millisecond
	stubborn := fnTool("stubborn", func(ctx context.Context, _ tool.Request) (any, error) {
		<-ctx.Done()
		return nil, errors.New("aborted") // does not wrap ctx.Err()
	})
	stubborn.Timeout = short
	late := fnTool("late", func(ctx context.Context, _ tool.Request) (any, error) {
		<-ctx.Done()
		return "done anyway", nil
	})
	late.Timeout = short
	cases := []struct {
		name     string
		reason   string
		tool     *tool.Tool
		def      time.Duration
		outcome  outcome.Outcome
		code     errcode.Code
		deadline bool // whether the tool saw a deadline
	}{
		{"per-tool timeout", "the tool's Timeout bounds it", blocking("slow", short), 0, outcome.Failed, errcode.ToolTimeout, true},
		{"default timeout", "DefaultTimeout applies to a tool without one", blocking("slow", 0), short, outcome.Failed, errcode.ToolTimeout, true},
		{"tool timeout wins", "the tool's own Timeout beats the default", blocking("slow", short), time.Hour, outcome.Failed, errcode.ToolTimeout, true},
		{"timeout not wrapped", "the per-tool timeout fired, whatever error the tool made of it", stubborn, 0, outcome.Failed, errcode.ToolTimeout, true},
		{"result after timeout", "a tool that returns a result did execute: SUCCESS", late, 0, outcome.Success, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := invoker.New(&invoker.Options{DefaultTimeout: tc.def})
			got, err := inv(context.Background(), call(tc.tool))
			require.NoError(t, err, "a timeout while the caller waits is a tool outcome")
			assert.Equalf(t, tc.outcome, got.Outcome(), "invoke(%s).Outcome() = %v; want %v (%s)", tc.name, got.Outcome(), tc.outcome, tc.reason)
			assert.Equalf(t, tc.code, got.Code(), "invoke(%s).Code() = %v; want %v (%s)", tc.name, got.Code(), tc.code, tc.reason)
			if tc.code == errcode.ToolTimeout {
				assert.Equal(t, en.Text(prompt.NextTimeout, "tool", tc.tool.Name), got.Next())
			}
		})
	}
}

func TestNoTimeoutByDefault(t *testing.T) {
	var hasDeadline bool
	tl := fnTool("probe", func(ctx context.Context, _ tool.Request) (any, error) {
		_, hasDeadline = ctx.Deadline()
		return nil, nil
	})
	_, err := invoker.New(nil)(context.Background(), call(tl))
	require.NoError(t, err)
	assert.False(t, hasDeadline, "without Timeout and DefaultTimeout the tool gets the caller's context unbounded")

	_, err = invoker.New(&invoker.Options{DefaultTimeout: time.Hour})(context.Background(), call(tl))
	require.NoError(t, err)
	assert.True(t, hasDeadline, "DefaultTimeout gives the tool a deadline")
}

func TestCancellation(t *testing.T) {
	t.Run("cancelled while running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		tl := fnTool("slow", func(ctx context.Context, _ tool.Request) (any, error) {
			close(started)
			<-ctx.Done()
			return nil, fmt.Errorf("query: %w", ctx.Err())
		})
		tl.Timeout = time.Hour
		done := make(chan struct{})
		var got observation.Observation
		var err error
		go func() {
			defer close(done)
			got, err = invoker.New(nil)(ctx, call(tl))
		}()
		<-started
		cancel()
		<-done
		assert.ErrorIs(t, err, context.Canceled, "the host's cancellation comes back as an error")
		assert.True(t, got.IsZero(), "with an error the observation is the zero value")
	})
	t.Run("caller deadline while running", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		got, err := invoker.New(nil)(ctx, call(blocking("slow", time.Hour)))
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the caller's own deadline is the caller's, not TOOL_TIMEOUT")
		assert.True(t, got.IsZero())
	})
	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		tl := fnTool("x", func(context.Context, tool.Request) (any, error) { ran = true; return nil, nil })
		got, err := invoker.New(nil)(ctx, call(tl))
		assert.ErrorIs(t, err, context.Canceled)
		assert.True(t, got.IsZero())
		assert.False(t, ran, "a tool is not started for a caller that already gave up")
	})
	t.Run("rejection while cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		tl := fnTool("builtin", func(context.Context, tool.Request) (any, error) {
			cancel()
			return nil, tool.Reject(errcode.FollowUpAnswered, "answered", "use the answer")
		})
		got, err := invoker.New(nil)(ctx, call(tl))
		require.NoError(t, err, "a rejection is decided before cancellation (order row 1)")
		assert.Equal(t, outcome.Rejected, got.Outcome())
	})
	t.Run("success while cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		tl := fnTool("write", func(context.Context, tool.Request) (any, error) { cancel(); return "ok", nil })
		got, err := invoker.New(nil)(ctx, call(tl))
		require.NoError(t, err, "a tool that returned did execute; its success must not be lost")
		assert.Equal(t, outcome.Success, got.Outcome())
	})
}

func TestToolErrorsInInvoker(t *testing.T) {
	errs := new(invoker.ToolErrors).
		Set(errcode.ToolNotFound, invoker.NextText("ask the user for another order number than the one for {tool}")).
		SetFor("stock", errcode.ToolUnavailable, invoker.NextKey(prompt.NextToolError)).
		SetFor("order", errcode.ToolNotFound, invoker.NextText("call search_orders first"))
	inv := invoker.New(&invoker.Options{ToolErrors: errs})
	cases := []struct {
		name   string
		reason string
		tool   *tool.Tool
		next   string
	}{
		{"per code", "a code override applies to every tool", failing("invoice", tool.NotFound("x")), "ask the user for another order number than the one for invoice"},
		{"per tool", "a tool override beats the code override", failing("order", tool.NotFound("x")), "call search_orders first"},
		{"per tool key", "a tool override with a catalog key", failing("stock", tool.Unavailable("x")), en.Text(prompt.NextToolError, "tool", "stock")},
		{"other tool default", "other tools keep the default", failing("price", tool.Unavailable("x")), en.Text(prompt.NextRetryLater)},
		{"rejection untouched", "a rejection keeps its own next step", failing("order", tool.Reject(errcode.FollowUpAnswered, "answered", "use the answer")), "use the answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := inv(context.Background(), call(tc.tool))
			require.NoError(t, err)
			assert.Equalf(t, tc.next, got.Next(), "invoke(%s).Next() = %q; want %q (%s)", tc.name, got.Next(), tc.next, tc.reason)
		})
	}
}

func TestChineseCatalog(t *testing.T) {
	zh := prompt.For(prompt.Chinese)
	inv := invoker.New(&invoker.Options{Catalog: zh, Logger: slog.New(slog.DiscardHandler)})
	cases := []struct {
		name   string
		reason string
		tool   *tool.Tool
		text   string
		next   string
	}{
		{"success", "the success summary", fnTool("search", func(context.Context, tool.Request) (any, error) { return 1, nil }), "search 执行成功", ""},
		{"timeout", "reason and next in Chinese", blocking("slow", time.Millisecond), zh.Reason(errcode.ToolTimeout, "tool", "slow", "detail", zh.Text(prompt.DetailDeadline, "timeout", "1ms")), zh.Text(prompt.NextTimeout, "tool", "slow")},
		{"business", "the downstream code in the Chinese template", failing("pay", tool.BusinessFailure("system.50001", "余额不足")), zh.Reason(errcode.ToolBusinessFailed, "code", "system.50001", "detail", "余额不足"), zh.Text(prompt.NextBusiness)},
		{"business no code", "REASON_BUSINESS_FAILED in Chinese", failing("pay", tool.BusinessFailure("", "余额不足")), "业务失败：余额不足", zh.Text(prompt.NextBusiness)},
		{"panic", "the panic reason in Chinese", fnTool("x", func(context.Context, tool.Request) (any, error) { panic("boom") }), "x 执行失败：工具内部出错", zh.Text(prompt.NextToolError)},
		{"no tool", "CATALOG_DENIED in Chinese", nil, "工具 ghost 在本节点不可用", zh.Text(prompt.NextCatalogOffered)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := call(tc.tool)
			if tc.tool == nil {
				c.Name = "ghost"
			}
			got, err := inv(context.Background(), c)
			require.NoError(t, err)
			assert.Equalf(t, tc.text, got.Reason(), "invoke(%s).Reason() = %q; want %q (%s)", tc.name, got.Reason(), tc.text, tc.reason)
			assert.Equal(t, tc.next, got.Next())
			if tc.next != "" {
				assert.Contains(t, got.MessageIn(zh), "下一步：")
				assert.NotEqual(t, en.Text(prompt.NextTimeout, "tool", "slow"), got.Next(), "not English")
			}
		})
	}
}

func TestLogger(t *testing.T) {
	var logs bytes.Buffer
	inv := invoker.New(&invoker.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	got, err := inv(context.Background(), call(failing("crm", wrap3(refused()))))
	require.NoError(t, err)
	assert.Equal(t, errcode.ToolUnreachable, got.Code())
	out := logs.String()
	assert.Contains(t, out, "code=TOOL_UNREACHABLE", "classification details go to the logger")
	assert.Contains(t, out, "connection refused", "the raw error goes to the logger")
	assert.Contains(t, out, "call_id=call_1")

	logs.Reset()
	_, _ = inv(context.Background(), invoker.Call{Name: "ghost"})
	assert.Contains(t, logs.String(), "no tool definition")
	logs.Reset()
	_, _ = inv(context.Background(), call(&tool.Tool{Name: "hollow"}))
	assert.Contains(t, logs.String(), "no Func")
}

func TestNilLoggerUsesDefault(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	_, err := invoker.New(&invoker.Options{})(context.Background(), call(fnTool("x", func(context.Context, tool.Request) (any, error) { panic("boom") })))
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "goroutine", "a nil Logger logs to slog.Default at log time")
}

func TestConcurrentUse(t *testing.T) {
	inv := invoker.New(&invoker.Options{DefaultTimeout: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	tools := []*tool.Tool{
		fnTool("ok", func(context.Context, tool.Request) (any, error) { return 1, nil }),
		failing("nf", tool.NotFound("x")),
		fnTool("boom", func(context.Context, tool.Request) (any, error) { panic("boom") }),
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			tl := tools[i%len(tools)]
			got, err := inv(context.Background(), call(tl))
			assert.NoError(t, err)
			assert.False(t, got.IsZero())
		})
	}
	wg.Wait()
}

func TestOptionsCopied(t *testing.T) {
	opts := &invoker.Options{}
	inv := invoker.New(opts)
	opts.Catalog = prompt.For(prompt.Chinese)
	got, err := inv(context.Background(), call(fnTool("x", func(context.Context, tool.Request) (any, error) { return nil, nil })))
	require.NoError(t, err)
	assert.Equal(t, "x succeeded", got.Reason(), "New copies the options")
}

// FuzzInvokeArgs feeds arbitrary model arguments through a typed tool and the
// default invoker: never a panic, always SUCCESS or REJECTED ARG_JSON_INVALID
// with a next step.
func FuzzInvokeArgs(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"q":"x","n":1}`, `{"q":1}`, `[]`, `nul`, `{"q":"x"} {}`, "\x00", `{"n":1e999}`} {
		f.Add([]byte(s))
	}
	type in struct {
		Q string `json:"q"`
		N int    `json:"n,omitempty"`
	}
	tl := tool.New("search", "", func(_ context.Context, a in) (string, error) { return a.Q, nil })
	inv := invoker.New(&invoker.Options{Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, args []byte) {
		got, err := inv(context.Background(), invoker.Call{ID: "c", Name: "search", Args: args, Tool: tl})
		if err != nil {
			t.Fatalf("invoke(%q) error = %v; want an observation", args, err)
		}
		switch {
		case got.Outcome() == outcome.Success:
		case got.Outcome() == outcome.Rejected && got.Code() == errcode.ArgJSONInvalid && got.Next() != "":
			if strings.Contains(got.Next(), "{") {
				t.Fatalf("invoke(%q).Next() = %q has an unfilled placeholder", args, got.Next())
			}
		default:
			t.Fatalf("invoke(%q) = %v; want SUCCESS or REJECTED ARG_JSON_INVALID", args, got)
		}
	})
}

func TestNextNeverEmpty(t *testing.T) {
	errs := new(invoker.ToolErrors).Set(errcode.ToolError, invoker.NextText("{tool}"))
	inv := invoker.New(&invoker.Options{ToolErrors: errs})
	got, err := inv(context.Background(), invoker.Call{Tool: failing("", errors.New("x"))})
	require.NoError(t, err, "a step that renders empty must not make the observation factory panic")
	assert.Equal(t, en.Text(prompt.NextToolError), got.Next(), "an empty rendered step falls back to NEXT_TOOL_ERROR")
}

// The success message is rendered once per tool name and stays the
// catalog's text, in either language.
func TestInvoker_SuccessMessageKept(t *testing.T) {
	for _, cat := range []*prompt.Catalog{prompt.Default(), prompt.For(prompt.Chinese)} {
		inv := invoker.New(&invoker.Options{Catalog: cat})
		tl := &tool.Tool{Name: "lookup", Func: func(context.Context, tool.Request) (any, error) { return 1, nil }}
		for range 3 {
			obs, err := inv(context.Background(), invoker.Call{ID: "c", Name: "lookup", Tool: tl})
			require.NoError(t, err)
			assert.Equal(t, cat.Text(prompt.ResultToolSucceeded, "tool", "lookup"), obs.Reason())
		}
		allocs := testing.AllocsPerRun(50, func() {
			_, _ = inv(context.Background(), invoker.Call{ID: "c", Name: "lookup", Tool: tl})
		})
		assert.LessOrEqual(t, allocs, 1.0, "a success after the first renders no text (the one allocation boxes the result)")
	}
}

// Each success names its own tool however calls of different tools
// interleave (the invoker keeps the last message looked up), and once each
// name was seen, a success allocates nothing for its message.
func TestSuccessMessagesInterleaved(t *testing.T) {
	inv := invoker.New(nil)
	ok := func(context.Context, tool.Request) (any, error) { return nil, nil }
	tools := []*tool.Tool{fnTool("a", ok), fnTool("b", ok), fnTool("c", ok)}
	for _, i := range []int{0, 1, 0, 0, 2, 1, 2, 0} {
		got, err := inv(context.Background(), call(tools[i]))
		require.NoError(t, err)
		assert.Equal(t, tools[i].Name+" succeeded", got.Message())
	}
	ctx := context.Background()
	calls := []invoker.Call{call(tools[0]), call(tools[1])}
	allocs := testing.AllocsPerRun(100, func() {
		for _, c := range calls {
			_, _ = inv(ctx, c)
		}
	})
	assert.Zero(t, allocs, "alternating tools allocate nothing for their messages")
}
