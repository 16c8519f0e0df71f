package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// codeRejectedByTransport is the JSON-RPC code with which the SDK reports
// that its transport could not deliver a message (an HTTP request that
// failed, a server that is gone).
const codeRejectedByTransport = -32005

// argumentsPrefix starts the text of the error result the SDK's typed tools
// return when the arguments fail the tool's input schema.
const argumentsPrefix = `validating "arguments": `

// classify turns the outcome of one tools/call into the tool's result. It
// is the only place the adapter classifies; the order matters:
//
//  1. the caller's cancellation: ctx's own error, unclassified, so that the
//     invoker returns it as a Go error;
//  2. a deadline: [tool.KindTimeout], still matching
//     context.DeadlineExceeded (it also satisfies net.Error, hence first);
//  3. transport conditions: [tool.KindUnreachable] (before JSON-RPC codes:
//     the SDK reports an HTTP transport failure as JSON-RPC code -32005);
//  4. JSON-RPC errors: -32602 [tool.KindMCPInvalidParams], any other code
//     [tool.KindMCPRPC];
//  5. any other error: [tool.KindUnreachable] with an unknown outcome. No
//     error CallTool returns proves that the request never reached the
//     server (see the package documentation), so it is uncertain, never a
//     definitive TOOL_ERROR;
//  6. an isError result: an argument rejection when the text is the SDK's
//     schema-validation message, otherwise [tool.KindMCPToolError] with
//     the result's text as the detail the model reads (MCP defines that
//     text as the tool's report for the model; the invoker clips it), or,
//     for a result with structured content and no text, that content as
//     compact JSON (an error code a server put there reaches the model,
//     clipped like any detail);
//  7. success: the structured content, else the text content.
func (c *caller) classify(ctx context.Context, res *sdk.CallToolResult, err error) (any, error) {
	if err != nil {
		return nil, classifyErr(ctx, err)
	}
	if res == nil {
		return nil, nil
	}
	if res.IsError {
		text := joinText(res.Content)
		if r, ok := strings.CutPrefix(text, argumentsPrefix); ok {
			return nil, c.argRejection(r)
		}
		if text == "" {
			text = structuredText(res.StructuredContent)
		}
		if text == "" {
			text = "the tool reported an error without a message"
		}
		return nil, tool.Classified(tool.KindMCPToolError, text, nil)
	}
	return payload(res), nil
}

// outcomeUnknown is what the model is told when CallTool failed in a way
// that leaves the call's outcome unknown.
const outcomeUnknown = "the exchange with the MCP server failed and the call's outcome is unknown"

// classifyErr classifies an error CallTool returned (steps 1 to 5 of
// classify). It never returns an unclassified error except the caller's
// cancellation: whatever CallTool reports after it was called may have
// happened after the server received the request.
func classifyErr(ctx context.Context, err error) error {
	ctxErr := ctx.Err()
	switch {
	case errors.Is(ctxErr, context.Canceled):
		return fmt.Errorf("mcp: call cancelled: %w", ctxErr)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctxErr, context.DeadlineExceeded):
		if !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
		}
		return tool.Classified(tool.KindTimeout, "", err)
	}
	if msg, ok := transportFailure(err); ok {
		return tool.Classified(tool.KindUnreachable, msg, err)
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		// The server's message goes to the log only: a JSON-RPC error is a
		// protocol answer, not text written for the model, and a raw
		// handler's plain error arrives as one with all it holds.
		cause := &rpcError{wire: wire, err: err}
		msg := "JSON-RPC error " + strconv.FormatInt(wire.Code, 10)
		if wire.Code == jsonrpc.CodeInvalidParams {
			return tool.Classified(tool.KindMCPInvalidParams, msg, cause)
		}
		return tool.Classified(tool.KindMCPRPC, msg, cause)
	}
	// Anything else: the SDK wraps most failures in plain errors, and
	// several of them come after the request was sent (a session failed by
	// a refused notifications/cancelled retires the calls in flight with
	// that error; a gateway's 5xx after the server acted; a result that
	// does not decode). None can be told apart from a failure before
	// sending, so each is uncertain.
	return tool.Classified(tool.KindUnreachable, outcomeUnknown, err)
}

// rpcError keeps err's chain while reading as what the server said: the
// SDK's wrapping ("calling \"tools/call\": ") adds nothing for the model.
type rpcError struct {
	wire *jsonrpc.Error // the first JSON-RPC error of err's chain
	err  error
}

func (e *rpcError) Error() string {
	if e.wire.Message == "" {
		return fmt.Sprintf("JSON-RPC error %d", e.wire.Code)
	}
	return e.wire.Message
}

func (e *rpcError) Unwrap() error { return e.err }

// transportFailure reports whether err says the server could not be reached
// or the connection to it was lost, with what the model is told.
func transportFailure(err error) (string, bool) {
	var (
		wire *jsonrpc.Error
		nerr net.Error
		exit *exec.ExitError
	)
	switch {
	case errors.Is(err, sdk.ErrSessionMissing):
		return "the MCP server no longer knows the session", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the MCP server refused the connection", true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, sdk.ErrConnectionClosed), errors.Is(err, net.ErrClosed),
		errors.Is(err, os.ErrClosed), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.As(err, &exit):
		return "the connection to the MCP server was lost", true
	case errors.As(err, &nerr):
		return "the MCP server could not be reached", true
	case errors.As(err, &wire) && wire.Code == codeRejectedByTransport:
		// The first JSON-RPC error decides: errors.Is would match -32005
		// anywhere in the chain, which newer protocol versions also use
		// for errors that are not transport failures.
		return "the MCP server could not be reached", true
	}
	return "", false
}

// argRejection builds the rejection for the SDK's schema-validation
// message (after its `validating "arguments": ` prefix), with the texts the
// arg-policy guard gives the same violation: REASON_MISSING_ARGUMENT for
// missing required arguments, the ARG_REJECTED reason otherwise, and
// NEXT_FIX_ARGS with the validator's message as what the field expects.
func (c *caller) argRejection(msg string) *tool.Rejection {
	v := parseValidation(msg)
	field := c.cat.List(v.fields)
	reason := c.cat.Reason(errcode.ArgRejected, "tool", c.name, "field", field, "detail", v.detail)
	if v.missing {
		reason = c.cat.Text(prompt.ReasonMissingArgument, "tool", c.name, "field", field)
	}
	return tool.Reject(errcode.ArgRejected, reason,
		c.cat.Text(prompt.NextFixArgs, "tool", c.name, "field", field, "expect", v.detail))
}

// structuredText is the structured content of a result as compact JSON,
// "" when there is none or it does not encode.
func structuredText(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return ""
	}
	return string(b)
}

// joinText returns the text contents of content, one per line.
func joinText(content []sdk.Content) string {
	var b strings.Builder
	for _, ct := range content {
		if t, ok := ct.(*sdk.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// payload returns what a successful result gives the model: the structured
// content when present; otherwise the text as a string (several text
// contents joined by newlines); otherwise the contents themselves (images,
// resources), or nil for an empty result.
func payload(res *sdk.CallToolResult) any {
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	texts := 0
	for _, ct := range res.Content {
		if _, ok := ct.(*sdk.TextContent); ok {
			texts++
		}
	}
	switch {
	case texts > 0:
		return joinText(res.Content)
	case len(res.Content) > 0:
		return res.Content
	}
	return nil
}
