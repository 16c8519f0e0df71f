package chattest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
)

// Adapter is what a chat adapter's tests supply to the shared scenarios:
// how to reach the adapter's model, and how to read the API's request
// bodies. Every field is required by the scenarios that use it (see each
// method); the zero Adapter is not usable. An Adapter is read-only during
// the scenarios and may be shared by parallel tests.
type Adapter struct {
	// Provider is the Provider the adapter's *modelerr.Error carries,
	// e.g. "openai".
	Provider string
	// Endpoint is the API the scenarios' servers stand in for.
	Endpoint Endpoint
	// ModelName is the model name NewModel configures; every request's
	// top-level "model" field must be it. "" for an API that names the
	// model in the path (Gemini, Bedrock): Endpoint.Path checks it.
	ModelName string
	// NewModel returns a fresh model (default options, no SDK retries)
	// talking to the server whose URL is serverURL (no trailing slash);
	// the adapter appends its API's base path. Resources it opens are
	// released through t.Cleanup.
	NewModel func(t testing.TB, serverURL string) react.Model
	// Valid checks one recorded request body against the rules the API
	// enforces on a history (roles, pairing of calls and results, unique
	// call ids); nil when valid. It runs on every request of the loop
	// scenarios.
	Valid func(req map[string]any) error
	// ToolNames lists the names of the tools a request offers, sorted.
	ToolNames func(req map[string]any) []string
	// ToolResult returns the text of the tool result answering callID in
	// a request, and whether there is one.
	ToolResult func(req map[string]any, callID string) (text string, ok bool)
	// Serve, when not nil, turns a canned reply of the loop scenarios
	// (a File of [LoopReplies]) into the reply the server sends: the
	// response rendered as the API streams it, for an Adapter whose
	// NewModel streams. nil sends the file as it is.
	Serve func(t testing.TB, r Reply) Reply
}

// serve applies a.Serve to replies.
func (a Adapter) serve(t testing.TB, replies []Reply) []Reply {
	if a.Serve == nil {
		return replies
	}
	out := make([]Reply, len(replies))
	for i, r := range replies {
		out[i] = a.Serve(t, r)
	}
	return out
}

// NewServer starts a [Server] for a.Endpoint; see [NewServer].
func (a Adapter) NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	return NewServer(t, a.Endpoint, replies...)
}

// Model returns a.NewModel for s.
func (a Adapter) Model(t testing.TB, s *Server) react.Model {
	t.Helper()
	return a.NewModel(t, s.URL)
}

// RunConcurrent calls Generate with req n times at once on one model
// against a server replaying reply n times; every call must succeed. Run
// it under -race: it shows the model is safe for concurrent use. It uses
// a.Endpoint and a.NewModel.
func (a Adapter) RunConcurrent(t *testing.T, n int, reply Reply, req react.Request) {
	t.Helper()
	replies := make([]Reply, n)
	for i := range replies {
		replies[i] = reply
	}
	m := a.Model(t, a.NewServer(t, replies...))
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := m.Generate(context.Background(), req)
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
}
