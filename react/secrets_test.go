package react_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/secrettest"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// The secrets careless tool errors carry, and the Go internals a model
// must not read either.
var (
	secretDSN   = secrettest.DSN
	secretToken = secrettest.TokenURL
	secretPath  = secrettest.Path
	secretStack = secrettest.Stack
	secretHuge  = secrettest.Huge
	leaks       = secrettest.Leaks("failArgs", "outputSetArgs")
	logged      = []string{"hunter2", "tok_5ecr3t", "/srv/app/keys", "goroutine 7", secretHuge}
)

// secretError returns the error the lookup tool fails with for a case.
func secretError(c string) error {
	dsn := errors.New("pq: password authentication failed for " + secretDSN)
	switch c {
	case "dsn":
		return fmt.Errorf("query orders: %w", dsn)
	case "token":
		return &url.Error{Op: "Get", URL: secretToken, Err: context.DeadlineExceeded}
	case "refused":
		return fmt.Errorf("connect %s: %w", secretDSN, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	case "path":
		return &fs.PathError{Op: "open", Path: secretPath, Err: fs.ErrPermission}
	case "stack":
		return errors.New("panic: boom\n" + secretStack)
	case "huge":
		return errors.New(secretHuge)
	case "typed":
		return tool.Unreachable(dsn)
	case "safe":
		return tool.WithDetail(dsn, "the orders database is down")
	}
	return errors.New("unknown case " + c)
}

// TestSecretsStayOutOfTheTranscript runs a node whose tools fail with
// errors that carry a DSN, a token URL, a file path, a stack and 10 KB of
// text, through every path: the default invoker, the retry guard, an
// approved write through the write gate, the arg policy and the built-in
// tools fed undecodable arguments. None of it reaches a model request, the
// transcript or either snapshot; the log has all of it.
func TestSecretsStayOutOfTheTranscript(t *testing.T) {
	for _, lang := range []prompt.Lang{prompt.English, prompt.Chinese} {
		t.Run(lang.String(), func(t *testing.T) { secretsRun(t, lang) })
	}
}

func secretsRun(t *testing.T, lang prompt.Lang) {
	caseSchema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"case": {Type: "string", Enum: []any{"dsn", "token", "refused", "path", "stack", "huge", "typed", "safe"}},
	}}
	lookup := newFake("lookup", tool.Read, func(_ context.Context, req tool.Request) (any, error) {
		var c struct {
			Case string `json:"case"`
		}
		_ = json.Unmarshal(req.Args, &c)
		return nil, secretError(c.Case)
	})
	lookup.InputSchema = caseSchema
	flaky := newFake("flaky", tool.Read, fails(fmt.Errorf("connect %s: %w", secretDSN, syscall.ECONNRESET)))
	flaky.Retry = &tool.RetryPolicy{Attempts: 3}
	charge := newFake("charge", tool.Write, fails(tool.Classified(tool.KindUnavailable, "", errors.New("charging via "+secretToken+" failed"))))

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := newScript(
		turn(call("c1", "lookup", `{"case":"dsn"}`)),
		turn(call("c2", "lookup", `{"case":"token"}`)),
		turn(call("c3", "lookup", `{"case":"refused"}`)),
		turn(call("c4", "lookup", `{"case":"path"}`)),
		turn(call("c5", "lookup", `{"case":"stack"}`)),
		turn(call("c6", "lookup", `{"case":"huge"}`)),
		turn(call("c7", "lookup", `{"case":"typed"}`)),
		turn(call("c8", "lookup", `{"case":"safe"}`)),
		turn(call("c9", "flaky", `{}`)),
		turn(call("c10", "lookup", `{"case":{"a":{"a":1}}}`)),
		turn(call("c11", "lookup", `{"case":1e400}`)),
		turn(call("c12", react.ToolFail, `{"reason":1e400}`)),
		turn(call("c13", react.ToolOutputSet, `{"key":"k","value":1,"sourceType":{"a":[1]}}`)),
		turn(call("c14", "charge", `{"amount":5}`)),
		turn(call("c15", react.ToolApproval, `{"tool":"charge"}`)),
	)
	cat, err := tool.NewCatalog(lookup.Tool, flaky.Tool, charge.Tool)
	require.NoError(t, err)
	rec := &recorder{}
	cfg := react.Config{
		Model: m, Tools: cat, Lang: lang, Logger: logger,
		Guards:   &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()},
		Observer: react.Observers(react.NewLogObserver(logger), rec),
		NewRunID: func(context.Context) string { return "run-1" }, Now: (&clock{}).now,
	}
	loop, err := react.New(cfg)
	require.NoError(t, err)
	node := react.Node{
		Name: "secrets", Tools: []string{"lookup", "flaky", "charge"}, NoProgressLimit: 50, MaxRounds: 50,
		Outputs: []react.Output{{Key: "k"}},
	}
	res, err := loop.Run(context.Background(), node, "check my orders")
	require.NoError(t, err)
	require.Equalf(t, react.Suspended, res.Status, "status = %v; want the approval suspension", res.Status)
	first := res.Snapshot

	m2 := newScript(
		turn(call("c16", "charge", `{"amount":5}`)),
		turn(call("c17", react.ToolFollowUp, `{"question":"How should I proceed?"}`)),
	)
	cfg.Model = m2
	loop2, err := react.New(cfg)
	require.NoError(t, err)
	res, err = loop2.Resume(context.Background(), first, react.Approve(ticketOf(t, loop2, first)))
	require.NoError(t, err)
	require.Equalf(t, react.Suspended, res.Status, "status after approval = %v; want the follow-up suspension", res.Status)

	cat0 := prompt.For(lang)
	codes := map[string]errcode.Code{
		"c1": errcode.ToolError, "c2": errcode.ToolTimeout, "c3": errcode.ToolUnreachable, "c4": errcode.ToolIOError,
		"c5": errcode.ToolError, "c6": errcode.ToolError, "c7": errcode.ToolUnreachable, "c8": errcode.ToolError,
		"c9": errcode.ToolUnreachable, "c10": errcode.ArgRejected, "c11": errcode.ArgJSONInvalid,
		"c12": errcode.ArgJSONInvalid, "c13": errcode.ArgJSONInvalid, "c16": errcode.ToolUnavailable,
	}
	got := map[string]string{}
	for _, e := range rec.of("tool") {
		got[e.CallID] = e.Code
	}
	for id, code := range codes {
		assert.Equalf(t, code.String(), got[id], "call %s code = %s; want %v", id, got[id], code)
	}
	assert.Containsf(t, toolMessage(t, res.Transcript, "c8").Content, "the orders database is down", "the detail the tool marked as safe reaches the model")
	assert.Containsf(t, toolMessage(t, res.Transcript, "c16").Content, cat0.Text(prompt.NextApprovedFailed, "tool", "charge"), "the approved write's failure keeps the write gate's next step")
	assert.Equalf(t, 3, flaky.executions(), "flaky ran %d times; want 3 (the retry guard ran)", flaky.executions())
	assert.Equalf(t, 1, charge.executions(), "charge ran %d times; want once, approved", charge.executions())

	check := func(where, text string) {
		t.Helper()
		for _, leak := range leaks {
			assert.NotContainsf(t, text, leak, "%s leaks %q", where, leak)
		}
	}
	for i, msg := range res.Transcript {
		if testing.Verbose() && msg.Role == react.RoleTool {
			t.Logf("%s: %s", msg.ToolCallID, msg.Content)
		}
		check(fmt.Sprintf("transcript message %d (%s)", i, msg.Role), msg.Content)
	}
	check("the approval snapshot", string(first))
	check("the follow-up snapshot", string(res.Snapshot))
	for _, reqs := range [][]react.Request{m.requests(), m2.requests()} {
		for i, req := range reqs {
			for j, msg := range req.Messages {
				check(fmt.Sprintf("request %d message %d", i, j), msg.Content)
			}
		}
	}
	for _, want := range logged {
		assert.Containsf(t, logs.String(), want, "the log lacks %.40q: raw errors go to the log", want)
	}
}
