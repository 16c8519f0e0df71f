package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// TestInMemoryOutcomes walks the classification table over the SDK's
// in-memory transport, one row per case the server can produce on an
// intact connection.
func TestInMemoryOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		tool        string
		args        string
		wantOutcome outcome.Outcome
		wantCode    errcode.Code
		wantData    any
		wantReason  string // a substring of the reason; "" skips the check
		reason      string
	}{
		{
			name: "structured success", tool: "echo", args: `{"text":"hi"}`,
			wantOutcome: outcome.Success, wantData: map[string]any{"echo": "hi"},
			reason: "a tool with an output type answers with structured content, which is the payload",
		},
		{
			name: "text success", tool: "greet", args: `{"text":"ann"}`,
			wantOutcome: outcome.Success, wantData: "hello ann",
			reason: "without structured content the text content is the payload",
		},
		{
			name: "several texts", tool: "lines", args: `{}`,
			wantOutcome: outcome.Success, wantData: "one\ntwo",
			reason: "several text contents are joined line by line",
		},
		{
			name: "no arguments", tool: "lines", args: ``,
			wantOutcome: outcome.Success, wantData: "one\ntwo",
			reason: "empty arguments are sent as an empty object",
		},
		{
			name: "null arguments", tool: "lines", args: `null`,
			wantOutcome: outcome.Success, wantData: "one\ntwo",
			reason: "null arguments are sent as an empty object",
		},
		{
			name: "image only", tool: "picture", args: `{}`,
			wantOutcome: outcome.Success,
			wantData:    []sdk.Content{&sdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}},
			reason:      "a result without text keeps its contents as the payload",
		},
		{
			name: "empty result", tool: "nothing", args: `{}`,
			wantOutcome: outcome.Success, wantData: nil,
			reason: "an empty result is a success with no payload; the response contract decides if empty is legal",
		},
		{
			name: "idempotency key in meta", tool: "meta", args: `{}`,
			wantOutcome: outcome.Success, wantData: "key=key-1",
			reason: "IdempotencyMetaKey sends the runtime's idempotency key in _meta",
		},
		{
			name: "isError result", tool: "fail", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPToolError, wantReason: "disk full",
			reason: "a typed handler's plain error arrives as an isError result: the tool's own error, MCP_TOOL_ERROR",
		},
		{
			name: "isError result without text", tool: "silent_fail", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPToolError, wantReason: "without a message",
			reason: "an isError result with no text is still MCP_TOOL_ERROR, with a stock message",
		},
		{
			name: "isError result with structured content only", tool: "structured_fail", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPToolError, wantReason: `{"error":{"code":"QUOTA_EXCEEDED","retry_in":"1h"}}`,
			reason: "an error result whose detail is only structured gives the model that detail as JSON, not a stock message",
		},
		{
			name: "isError result with long structured content", tool: "structured_fail_long", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPToolError, wantReason: `{"code":"E42","trace":"xxx`,
			reason: "the structured detail is clipped like any other detail",
		},
		{
			name: "schema violation", tool: "count", args: `{"name":"a","count":"x"}`,
			wantOutcome: outcome.Rejected, wantCode: errcode.ArgRejected, wantReason: "argument count of count was rejected",
			reason: `the SDK reports input-schema failures as isError results starting "validating \"arguments\"": ARG_REJECTED, naming the field`,
		},
		{
			name: "missing required argument", tool: "count", args: `{"count":1}`,
			wantOutcome: outcome.Rejected, wantCode: errcode.ArgRejected, wantReason: "argument name of count",
			reason: "a missing required property is an argument rejection naming it",
		},
		{
			name: "arguments not JSON", tool: "count", args: `{"name":`,
			wantOutcome: outcome.Rejected, wantCode: errcode.ArgJSONInvalid, wantReason: "not valid JSON",
			reason: "arguments that do not parse are rejected before anything is sent",
		},
		{
			name: "arguments not an object", tool: "count", args: `[1,2]`,
			wantOutcome: outcome.Rejected, wantCode: errcode.ArgJSONInvalid, wantReason: "not a JSON object",
			reason: "MCP arguments are an object; anything else is rejected before anything is sent",
		},
		{
			name: "JSON-RPC invalid params", tool: "raw_invalid_params", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPInvalidParams, wantReason: "JSON-RPC error -32602",
			reason: "a server's JSON-RPC error -32602 is MCP_INVALID_PARAMS; its message is for the log only",
		},
		{
			name: "JSON-RPC internal error", tool: "raw_internal", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPRPCError, wantReason: "JSON-RPC error -32603",
			reason: "any other JSON-RPC error code is MCP_RPC_ERROR, described by its code",
		},
		{
			name: "JSON-RPC error without a message", tool: "raw_no_message", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPRPCError, wantReason: "JSON-RPC error -32000",
			reason: "a JSON-RPC error without a message is still described, by its code",
		},
		{
			name: "raw handler plain error", tool: "raw_plain", args: `{}`,
			wantOutcome: outcome.Failed, wantCode: errcode.MCPRPCError, wantReason: "JSON-RPC error 0",
			reason: "a raw handler's plain error arrives as a JSON-RPC error with code 0: MCP_RPC_ERROR; its text stays in the log",
		},
	}
	f := inMemory(t, &Options{IdempotencyMetaKey: idempotencyMetaKey})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t.Context(), f.tool(t, tc.tool), tc.args)
			require.NoErrorf(t, got.err, "call(%s, %s) error; want none (%s)", tc.tool, tc.args, tc.reason)
			assert.Equalf(t, tc.wantOutcome, got.outcome, "call(%s, %s) outcome = %v; want %v (%s)", tc.tool, tc.args, got.outcome, tc.wantOutcome, tc.reason)
			assert.Equalf(t, tc.wantCode, got.code, "call(%s, %s) code = %v; want %v (%s)", tc.tool, tc.args, got.code, tc.wantCode, tc.reason)
			if tc.wantOutcome == outcome.Success {
				assert.Equalf(t, tc.wantData, got.data, "call(%s, %s) data = %#v; want %#v (%s)", tc.tool, tc.args, got.data, tc.wantData, tc.reason)
			}
			if tc.wantReason != "" {
				assert.Containsf(t, got.reason, tc.wantReason, "call(%s, %s) reason = %q; want it to contain %q (%s)", tc.tool, tc.args, got.reason, tc.wantReason, tc.reason)
			}
			if tc.wantOutcome == outcome.Rejected {
				assert.NotEmptyf(t, got.next, "call(%s, %s) rejection has no next step (%s)", tc.tool, tc.args, tc.reason)
			}
		})
	}
}

// TestInMemoryArgRejectionTexts checks the texts of an argument rejection:
// the reason names the field and the detail, the next step is NEXT_FIX_ARGS,
// both in the configured language.
func TestInMemoryArgRejectionTexts(t *testing.T) {
	for _, lang := range []prompt.Lang{prompt.English, prompt.Chinese} {
		t.Run(lang.String(), func(t *testing.T) {
			f := inMemory(t, &Options{Lang: lang})
			got := call(t.Context(), f.tool(t, "count"), `{"name":"a","count":1,"items":[{"x":"y"}]}`)
			cat := prompt.For(lang)
			detail := `the value has type "string", want "integer"`
			wantReason := cat.Reason(errcode.ArgRejected, "tool", "count", "field", "items[].x", "detail", detail)
			wantNext := cat.Text(prompt.NextFixArgs, "tool", "count", "field", "items[].x", "expect", detail)
			assert.Equalf(t, wantReason, got.reason, "reason = %q; want %q", got.reason, wantReason)
			assert.Equalf(t, wantNext, got.next, "next = %q; want %q", got.next, wantNext)
		})
	}
}

// TestInMemoryUnknownTool: the SDK answers a call to a tool the server no
// longer has with JSON-RPC -32602, which is MCP_INVALID_PARAMS.
func TestInMemoryUnknownTool(t *testing.T) {
	f := inMemory(t, nil)
	f.server.RemoveTools("echo")
	got := call(t.Context(), f.tool(t, "echo"), `{"text":"hi"}`)
	assert.Equalf(t, errcode.MCPInvalidParams, got.code, "call(removed tool) code = %v; want MCP_INVALID_PARAMS", got.code)
	assert.Containsf(t, got.reason, "JSON-RPC error -32602", "call(removed tool) reason = %q; want the JSON-RPC code", got.reason)
}

// TestInMemoryDeadline: a blocking tool whose deadline passes is
// TOOL_TIMEOUT, and the session stays usable.
func TestInMemoryDeadline(t *testing.T) {
	f := inMemory(t, &Options{Timeout: 50 * time.Millisecond})
	got := call(t.Context(), f.tool(t, "block"), `{}`)
	assert.Equalf(t, outcome.Failed, got.outcome, "call(block) outcome = %v; want FAILED", got.outcome)
	assert.Equalf(t, errcode.ToolTimeout, got.code, "call(block) code = %v; want TOOL_TIMEOUT", got.code)

	after := call(t.Context(), f.tool(t, "greet"), `{"text":"again"}`)
	assert.Equalf(t, "hello again", after.data, "call after timeout = %#v; want the session to stay usable", after.data)
}

// TestTimeoutErrorIsClassified checks the adapter's own classification of a
// deadline: KindTimeout, still matching context.DeadlineExceeded, so the
// invoker decides between TOOL_TIMEOUT and the caller's cancellation.
func TestTimeoutErrorIsClassified(t *testing.T) {
	f := inMemory(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := f.tool(t, "block").Func(ctx, tool.Request{Args: []byte(`{}`)})
	te, ok := tool.AsError(err)
	require.Truef(t, ok, "Func(block) error = %v; want a *tool.Error", err)
	assert.Equalf(t, tool.KindTimeout, te.Kind, "Func(block) kind = %v; want timeout", te.Kind)
	assert.ErrorIsf(t, err, context.DeadlineExceeded, "Func(block) error = %v; want it to match context.DeadlineExceeded", err)
}

// TestInMemoryCallerCancel: the caller's own cancellation is not an outcome;
// the tool returns the context's error, unclassified, and the invoker
// returns it as a Go error.
func TestInMemoryCallerCancel(t *testing.T) {
	f := inMemory(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-f.started
		cancel()
	}()
	_, err := f.tool(t, "block").Func(ctx, tool.Request{Args: []byte(`{}`)})
	assert.ErrorIsf(t, err, context.Canceled, "Func(block) after cancel = %v; want context.Canceled", err)
	_, classified := tool.AsError(err)
	assert.Falsef(t, classified, "Func(block) after cancel = %v; want no *tool.Error (cancellation is not an outcome)", err)
	got := call(ctx, f.tool(t, "block"), `{}`)
	assert.ErrorIsf(t, got.err, context.Canceled, "call(block) after cancel error = %v; want context.Canceled", got.err)
}

// TestInMemoryCallerDeadline: when the caller's own context runs out (no
// per-tool timeout), the error still matches context.DeadlineExceeded, so
// the invoker reports the caller's cancellation rather than an outcome.
func TestInMemoryCallerDeadline(t *testing.T) {
	f := inMemory(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	got := call(ctx, f.tool(t, "block"), `{}`)
	assert.ErrorIsf(t, got.err, context.DeadlineExceeded, "call(block) with the caller's deadline error = %v; want context.DeadlineExceeded", got.err)
}

// TestInMemoryClosedSession: a call on a session the client closed is
// TOOL_UNREACHABLE (mcp.ErrConnectionClosed).
func TestInMemoryClosedSession(t *testing.T) {
	f := inMemory(t, nil)
	require.NoError(t, f.session.Close())
	got := call(t.Context(), f.tool(t, "echo"), `{"text":"hi"}`)
	assert.Equalf(t, errcode.ToolUnreachable, got.code, "call(echo) on a closed session code = %v; want TOOL_UNREACHABLE", got.code)
}

// TestClassifyErr covers the classification of errors no real server is
// needed to produce (and that the transport tests produce only sometimes):
// each row is one rule of classifyErr, in its order.
func TestClassifyErr(t *testing.T) {
	live := context.Background()
	tests := []struct {
		name     string
		err      error
		wantKind tool.Kind // 0: returned unclassified
		reason   string
	}{
		{"deadline", context.DeadlineExceeded, tool.KindTimeout, "a deadline is a timeout, checked first"},
		{"wrapped deadline", errors.Join(errors.New("x"), context.DeadlineExceeded), tool.KindTimeout, "wrapped deadlines count"},
		{"EOF", errors.Join(errors.New("calling tools/call"), errors.New("y"), ioEOF()), tool.KindUnreachable, "a stdio server that died: io.EOF"},
		{"connection closed", sdk.ErrConnectionClosed, tool.KindUnreachable, "a later call on a dead connection"},
		{"session missing", sdk.ErrSessionMissing, tool.KindUnreachable, "an HTTP session the server no longer knows"},
		{"refused", refused(), tool.KindUnreachable, "a refused connection"},
		{"rejected by transport", fmt.Errorf("calling %q: %w", "tools/call", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}), tool.KindUnreachable, "the SDK reports an HTTP transport failure as JSON-RPC -32005"},
		{"first JSON-RPC error decides", errors.Join(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "x"}, &jsonrpc.Error{Code: -32005}), tool.KindMCPRPC, "-32005 deeper in the chain does not make a server's error a transport failure"},
		{"invalid params", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, tool.KindMCPInvalidParams, "-32602 is MCP_INVALID_PARAMS"},
		{"refused cancellation", fmt.Errorf("calling %q: %w", "tools/call", errors.New(`sending "notifications/cancelled": Bad Request`)), tool.KindUnreachable, "a call in flight on a session that failed after a refused cancellation (go-sdk #1212) may have run: uncertain"},
		{"gateway error", fmt.Errorf("calling %q: %w", "tools/call", errors.New(`sending "tools/call": Internal Server Error`)), tool.KindUnreachable, "an HTTP error answer without a JSON-RPC body comes after the request was sent"},
		{"multi-round-trip", errors.New("multi-round-trip: exceeded maximum retries (10)"), tool.KindUnreachable, "a multi-round-trip exchange that gave up had reached the server"},
		{"unknown", errors.New("strange"), tool.KindUnreachable, "no other error proves the request never reached the server: uncertain, never TOOL_ERROR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := classifyErr(live, tc.err)
			te, ok := tool.AsError(got)
			if tc.wantKind == 0 {
				assert.Falsef(t, ok, "classifyErr(%v) = %v; want it unclassified (%s)", tc.err, got, tc.reason)
				return
			}
			require.Truef(t, ok, "classifyErr(%v) = %v; want a *tool.Error (%s)", tc.err, got, tc.reason)
			assert.Equalf(t, tc.wantKind, te.Kind, "classifyErr(%v) kind = %v; want %v (%s)", tc.err, te.Kind, tc.wantKind, tc.reason)
			assert.ErrorIsf(t, got, tc.err, "classifyErr(%v) = %v; want the original error kept in the chain", tc.err, got)
		})
	}
}

func ioEOF() error { return io.EOF }

func refused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// TestInMemoryStructuredErrorClipped: a long structured error detail is
// clipped like any detail the model reads.
func TestInMemoryStructuredErrorClipped(t *testing.T) {
	f := inMemory(t, nil)
	got := call(t.Context(), f.tool(t, "structured_fail_long"), `{}`)
	assert.Equal(t, errcode.MCPToolError, got.code)
	assert.Contains(t, got.reason, `{"code":"E42"`)
	assert.Less(t, len(got.reason), 4000, "reason = %d bytes; want the detail clipped (tool.MaxDetail)", len(got.reason))
	assert.Contains(t, got.reason, "…", "the clip is marked")
}
