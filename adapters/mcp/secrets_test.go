package mcp

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/tool"
)

const (
	secretDSN   = "postgres://app:hunter2@db.internal:5432/orders"
	secretToken = "access_token=tok_5ecr3t"
)

// leaks must never be in a reason or next step the model reads.
var leaks = []string{"hunter2", "db.internal", "tok_5ecr3t", "127.0.0.1", "goroutine 7", "rrrrrrrrrrrrrrrrrrrr", "Go value"}

// TestSecretsStayInTheLog: whatever the server or the transport puts into
// an error — a DSN in a raw handler's error or a JSON-RPC message, a token
// in the endpoint URL of a refused connection — reaches the model as a
// fixed text; the adapter's error (the cause the log gets) keeps it. The
// content of an isError result, which MCP defines as the tool's report for
// the model, is kept to its first line and tool.MaxDetail bytes.
func TestSecretsStayInTheLog(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "leaky", Version: "v0.0.1"}, nil)
	raw := func(name string, err error) {
		s.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, err })
	}
	raw("plain_dsn", errors.New("pq: password authentication failed for "+secretDSN))
	raw("rpc_token", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream GET /orders?" + secretToken + " failed"})
	raw("params_dsn", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cannot reach " + secretDSN})
	huge := "E" + strings.Repeat("rr", 5<<10)
	result := func(name, text string) {
		s.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
			})
	}
	result("huge_result", huge)
	result("stack_result", "order not found\ngoroutine 7 [running]:\nmain.lookup()")

	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	f := newFixture()
	f.connect(t, ct, nil)

	tests := []struct {
		tool   string
		code   errcode.Code
		logged string // what the adapter's error keeps for the log; "" when it is the result text
		want   string // a part of the reason
	}{
		{"plain_dsn", errcode.MCPRPCError, "hunter2", "JSON-RPC error 0"},
		{"rpc_token", errcode.MCPRPCError, "tok_5ecr3t", "JSON-RPC error -32603"},
		{"params_dsn", errcode.MCPInvalidParams, "hunter2", "JSON-RPC error -32602"},
		{"huge_result", errcode.MCPToolError, "", strings.Repeat("r", 100)},
		{"stack_result", errcode.MCPToolError, "", "order not found"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			tl := f.tool(t, tc.tool)
			got := call(t.Context(), tl, `{}`)
			assert.Equalf(t, tc.code, got.code, "call(%s) code = %v (%s); want %v", tc.tool, got.code, got.reason, tc.code)
			assert.Containsf(t, got.reason, tc.want, "call(%s) reason = %q; want it to contain %q", tc.tool, got.reason, tc.want)
			assert.LessOrEqualf(t, len(got.reason), 200+tool.MaxDetail, "call(%s) reason has %d bytes; want the detail clipped", tc.tool, len(got.reason))
			for _, leak := range leaks {
				if tc.logged == "" && strings.HasPrefix(leak, "rrr") {
					continue // the result's text is the model's to read, clipped
				}
				assert.NotContainsf(t, got.reason+got.next, leak, "call(%s) = %q leaks %q", tc.tool, got.reason, leak)
			}
			if tc.logged != "" {
				_, err := tl.Func(t.Context(), tool.Request{Args: []byte(`{}`)})
				assert.Containsf(t, err.Error(), tc.logged, "Func(%s) error = %v; want the server's text kept for the log", tc.tool, err)
			}
		})
	}
}

// TestSecretURLStaysInTheLog: a refused connection to an endpoint whose URL
// holds a token reaches the model as "the MCP server could not be
// reached"; the URL stays in the error the log gets.
func TestSecretURLStaysInTheLog(t *testing.T) {
	f := overHTTP(t, nil)
	// Reconnect through a URL with a token to a server that is then gone.
	srv := httptest.NewServer(f.srv.Config.Handler)
	url := srv.URL + "/mcp?" + secretToken
	g := newFixture()
	g.connect(t, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	srv.CloseClientConnections()
	srv.Close()
	tl := g.tool(t, "echo")
	got := call(t.Context(), tl, `{"text":"hi"}`)
	assert.Equalf(t, errcode.ToolUnreachable, got.code, "code = %v (%s); want TOOL_UNREACHABLE", got.code, got.reason)
	for _, leak := range leaks {
		assert.NotContainsf(t, got.reason+got.next, leak, "reason %q leaks %q", got.reason, leak)
	}
	_, err := tl.Func(t.Context(), tool.Request{Args: []byte(`{"text":"hi"}`)})
	require.Error(t, err)
	assert.Containsf(t, err.Error(), "tok_5ecr3t", "Func error = %v; want the URL kept for the log", err)
}
