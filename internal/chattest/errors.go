package chattest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// GenerateErr runs one Generate of req on m and returns its
// *modelerr.Error. It fails the test unless Generate fails with a
// *modelerr.Error in its chain and returns the zero Response (no partial
// turn).
func GenerateErr(t *testing.T, ctx context.Context, m react.Model, req react.Request) *modelerr.Error {
	t.Helper()
	got, err := m.Generate(ctx, req)
	require.Error(t, err, "Generate() = %+v, nil; want an error", got)
	assert.Equal(t, react.Response{}, got, "a failed Generate returns no partial turn")
	var e *modelerr.Error
	require.ErrorAs(t, err, &e)
	return e
}

// ErrorCase is one failure a server causes and the error the adapter must
// return for it.
type ErrorCase struct {
	Name   string
	Reply  Reply          // the server's only reply
	Stop   Stop           // how the caller ends a Hang reply
	Want   modelerr.Error // Kind, StatusCode and RetryAfter are compared
	Reason string
}

// RunErrorCases runs each case as a subtest named after it: one Generate
// of req against a server replaying the case's reply must fail with a
// *modelerr.Error of the wanted kind, status and wait, the adapter's
// Provider, the context's error reachable through errors.Is when the
// context ended, and exactly one request (no SDK retries by default).
// It uses a.Endpoint, a.NewModel and a.Provider.
func (a Adapter) RunErrorCases(t *testing.T, req react.Request, cases []ErrorCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			s := a.NewServer(t, tt.Reply)
			ctx := tt.Stop.Context(s)
			e := GenerateErr(t, ctx, a.Model(t, s), req)
			got := modelerr.Error{Kind: e.Kind, StatusCode: e.StatusCode, RetryAfter: e.RetryAfter}
			assert.Equal(t, tt.Want, got, "Generate() = %v; want %s, HTTP %d, wait %v: %s",
				e, tt.Want.Kind, tt.Want.StatusCode, tt.Want.RetryAfter, tt.Reason)
			assert.Equal(t, a.Provider, e.Provider)
			if err := ctx.Err(); err != nil {
				assert.ErrorIs(t, e, err, "errors.Is sees the context's error through *modelerr.Error")
			}
			assert.Len(t, s.Requests(), 1, "no SDK retries by default")
		})
	}
}

// NoResponseCase is a request that fails before any response: the adapter
// or the SDK cannot build it, or no server answers.
type NoResponseCase struct {
	Name   string
	Model  react.Model // nil: the model of RunNoResponseCases' server
	Req    react.Request
	Kind   modelerr.Kind
	Reason string
}

// RunNoResponseCases runs the cases every chat adapter shares, then extra,
// each as a subtest named after it: Generate must fail with the case's
// kind and no status, and no request may reach the server. The shared
// cases send req's messages with a tool whose schema is not JSON, an
// array, null or two values, a message with an unknown role, a tool
// result without a call id (all modelerr.Request), and req to a port
// where nothing listens (modelerr.Unreachable, "connection refused"). It
// uses a.Endpoint and a.NewModel.
func (a Adapter) RunNoResponseCases(t *testing.T, req react.Request, extra ...NoResponseCase) {
	t.Helper()
	s := a.NewServer(t)
	m := a.Model(t, s)
	withSchema := func(schema string) react.Request {
		return react.Request{Messages: req.Messages, Tools: []react.ToolSpec{{Name: "x", InputSchema: json.RawMessage(schema)}}}
	}
	withMessage := func(msg react.Message) react.Request { return react.Request{Messages: []react.Message{msg}} }
	cases := append([]NoResponseCase{
		{"schema not JSON", nil, withSchema(`{"type":`), modelerr.Request, "a schema that does not parse cannot be sent"},
		{"schema array", nil, withSchema(`[1,2]`), modelerr.Request, "the schema must be an object"},
		{"schema null", nil, withSchema(`null`), modelerr.Request, "null is not a schema object"},
		{"schema trailing", nil, withSchema(`{} {}`), modelerr.Request, "two values are not one schema"},
		{"unknown role", nil, withMessage(react.Message{Role: "robot", Content: "hi"}), modelerr.Request, "roles are a closed set"},
		{"tool result without id", nil, withMessage(react.Message{Role: react.RoleTool, Content: "x"}), modelerr.Request,
			"an unpaired result is rejected by the API"},
		{"connection refused", a.NewModel(t, ClosedURL(t)), req, modelerr.Unreachable, "no server listens"},
	}, extra...)
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			model := tt.Model
			if model == nil {
				model = m
			}
			e := GenerateErr(t, context.Background(), model, tt.Req)
			assert.Equal(t, tt.Kind, e.Kind, "Generate() kind = %s; want %s: %s (%v)", e.Kind, tt.Kind, tt.Reason, e)
			assert.Zero(t, e.StatusCode, "no response, no status")
		})
	}
	assert.Empty(t, s.Requests(), "nothing reaches the server")
}
