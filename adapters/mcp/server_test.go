package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// serverEnv, when set to "1", makes the test binary run the test server over
// stdio instead of the tests (the stdio tests re-execute the binary).
const serverEnv = "REACTGUARD_MCP_TEST_SERVER"

// idempotencyMetaKey is the _meta key the tests send idempotency keys under.
const idempotencyMetaKey = "reactguard.test/idempotency-key"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		started := func(name string) { fmt.Fprintln(os.Stderr, "started "+name) }
		err := newServer(started, nil).Run(context.Background(), &sdk.StdioTransport{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m,
		// After a client-side timeout the SDK sends notifications/cancelled
		// from a goroutine of its own, off the caller's return path (go-sdk
		// issue #1150); it ends once the notification is written or its
		// own timeout passes, which can be after the test returned.
		goleak.IgnoreTopFunction("github.com/modelcontextprotocol/go-sdk/internal/jsonrpc2.(*Connection).Notify"),
	)
}

// Arguments and results of the typed test tools.
type (
	echoIn struct {
		Text string `json:"text"`
	}
	echoOut struct {
		Echo string `json:"echo"`
	}
	countIn struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
		Items []item `json:"items,omitempty"`
	}
	item struct {
		X int `json:"x"`
	}
	empty struct{}
)

// newServer returns an SDK server with the test tools. started, when not
// nil, is told the name of a blocking tool once it runs; release, when not
// nil, unblocks the blocking tools (they also end with their context,
// except "stubborn").
func newServer(started func(string), release <-chan struct{}) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "reactguard-test", Version: "v0.0.1"}, nil)
	text := func(s ...string) *sdk.CallToolResult {
		r := &sdk.CallToolResult{}
		for _, t := range s {
			r.Content = append(r.Content, &sdk.TextContent{Text: t})
		}
		return r
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, echoOut, error) {
			return nil, echoOut{Echo: in.Text}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "greet", Title: "Greeting"},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return text("hello " + in.Text), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "lines", Description: "Two lines of text."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return text("one", "two"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "picture", Description: "An image."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "nothing", Description: "Returns no content."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("disk full")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "silent_fail", Description: "Fails without text."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "structured_fail", Description: "Fails with structured content only."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, StructuredContent: map[string]any{
				"error": map[string]any{"code": "QUOTA_EXCEEDED", "retry_in": "1h"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "structured_fail_long", Description: "Fails with long structured content only."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, StructuredContent: map[string]any{
				"code": "E42", "trace": strings.Repeat("x", 4000)}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "count", Description: "Counts.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: false, Title: "Counter"}},
		func(_ context.Context, _ *sdk.CallToolRequest, in countIn) (*sdk.CallToolResult, any, error) {
			return text(fmt.Sprintf("%s=%d", in.Name, in.Count)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "meta", Description: "Reports the idempotency key."},
		func(_ context.Context, req *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			key, _ := req.Params.Meta[idempotencyMetaKey].(string)
			return text("key=" + key), nil, nil
		})
	raw := func(name string, err error) {
		s.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, err })
	}
	raw("raw_invalid_params", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cursor is stale"})
	raw("raw_internal", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "index corrupt"})
	raw("raw_no_message", &jsonrpc.Error{Code: -32000})
	raw("raw_plain", errors.New("plain failure"))
	block := func(name string, honourCtx bool) {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: "Blocks."},
			func(ctx context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
				if started != nil {
					started(name)
				}
				done := ctx.Done()
				if !honourCtx {
					done = nil
				}
				select {
				case <-done:
					return nil, nil, ctx.Err()
				case <-release:
					return text("released"), nil, nil
				}
			})
	}
	block("block", true)
	block("stubborn", false)
	return s
}
