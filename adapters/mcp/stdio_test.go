package mcp

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
)

// terminateDuration is how long closing a stdio session waits for the
// server to exit before signalling it. The SDK's default is 5 s; a host
// whose servers may be stuck in a handler should set it low too.
const terminateDuration = 200 * time.Millisecond

// stdioFixture is a fixture whose server is this test binary, re-executed
// as an MCP server over stdio.
type stdioFixture struct {
	*fixture
	cmd *exec.Cmd
}

// overStdio starts the test server as a subprocess and connects to it.
func overStdio(t *testing.T, opts *Options) *stdioFixture {
	t.Helper()
	f := &stdioFixture{fixture: newFixture()}
	f.cmd = exec.Command(os.Args[0], "-test.run=^$")
	f.cmd.Env = append(os.Environ(), serverEnv+"=1")
	f.cmd.Stderr = &startWatcher{started: f.started}
	f.connect(t, &sdk.CommandTransport{Command: f.cmd, TerminateDuration: terminateDuration}, opts)
	return f
}

// startWatcher is the subprocess's stderr: it reports each "started <tool>"
// line on started and drops everything else.
type startWatcher struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	started chan<- string
}

func (w *startWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			// An incomplete line: keep it for the next write.
			rest := line
			w.buf.Reset()
			w.buf.WriteString(rest)
			return len(p), nil
		}
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "started "); ok {
			select {
			case w.started <- name:
			default:
			}
		}
	}
}

// TestStdioOutcomes: the outcomes of an intact connection are the same over
// a stdio subprocess as in memory.
func TestStdioOutcomes(t *testing.T) {
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
		{"schema violation", "count", `{"name":"a"}`, outcome.Rejected, errcode.ArgRejected, "the SDK's schema-validation result is an argument rejection"},
		{"invalid params", "raw_invalid_params", `{}`, outcome.Failed, errcode.MCPInvalidParams, "JSON-RPC -32602 survives the stdio transport"},
		{"rpc error", "raw_internal", `{}`, outcome.Failed, errcode.MCPRPCError, "other JSON-RPC codes survive the stdio transport"},
	}
	f := overStdio(t, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t.Context(), f.tool(t, tc.tool), tc.args)
			assert.NoErrorf(t, got.err, "call(%s) error; want none (%s)", tc.tool, tc.reason)
			assert.Equalf(t, tc.wantOutcome, got.outcome, "call(%s) outcome = %v; want %v (%s)", tc.tool, got.outcome, tc.wantOutcome, tc.reason)
			assert.Equalf(t, tc.wantCode, got.code, "call(%s) code = %v; want %v (%s)", tc.tool, got.code, tc.wantCode, tc.reason)
		})
	}
}

// TestStdioDeadline: a tool that ignores cancellation and never answers
// still yields TOOL_TIMEOUT when its deadline passes; the session stays
// usable, and closing it (with the server stuck in the handler) is bounded
// by the transport's TerminateDuration, not the SDK's 5 s default.
func TestStdioDeadline(t *testing.T) {
	f := overStdio(t, &Options{Timeout: 100 * time.Millisecond})
	got := call(t.Context(), f.tool(t, "stubborn"), `{}`)
	assert.Equalf(t, outcome.Failed, got.outcome, "call(stubborn) outcome = %v; want FAILED", got.outcome)
	assert.Equalf(t, errcode.ToolTimeout, got.code, "call(stubborn) code = %v; want TOOL_TIMEOUT", got.code)

	after := call(t.Context(), f.tool(t, "greet"), `{"text":"again"}`)
	assert.Equalf(t, "hello again", after.data, "call(greet) after a timeout = %#v; want the session to stay usable", after.data)
}

// TestStdioKilledMidCall: the server process dies while a call runs:
// TOOL_UNREACHABLE (io.EOF), and so is every later call
// (mcp.ErrConnectionClosed).
func TestStdioKilledMidCall(t *testing.T) {
	f := overStdio(t, nil)
	go func() {
		<-f.started
		_ = f.cmd.Process.Kill()
	}()
	got := call(t.Context(), f.tool(t, "block"), `{}`)
	require.NoErrorf(t, got.err, "call(block) on a killed server error; want an outcome")
	assert.Equalf(t, outcome.Failed, got.outcome, "call(block) on a killed server outcome = %v; want FAILED", got.outcome)
	assert.Equalf(t, errcode.ToolUnreachable, got.code, "call(block) on a killed server code = %v (%s); want TOOL_UNREACHABLE", got.code, got.reason)

	again := call(t.Context(), f.tool(t, "echo"), `{"text":"hi"}`)
	assert.Equalf(t, errcode.ToolUnreachable, again.code, "call(echo) after the kill code = %v (%s); want TOOL_UNREACHABLE", again.code, again.reason)
}
