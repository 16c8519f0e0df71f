package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/internal/sse"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type received struct {
	kind string
	v    view
}

// post sends a form and reads the SSE answer with an HTTP client, to its
// end or until stop says so.
func post(t *testing.T, ctx context.Context, srv *httptest.Server, path string, form url.Values, stop func(received) bool) []received {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	r := sse.NewReader(res.Body, 0)
	var out []received
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		var v view
		require.NoError(t, json.Unmarshal([]byte(e.Data), &v))
		out = append(out, received{e.Type, v})
		if stop != nil && stop(out[len(out)-1]) {
			return out
		}
	}
}

func kindsOf(rs []received) []string {
	var out []string
	for _, r := range rs {
		if len(out) > 0 && r.kind == "text_delta" && out[len(out)-1] == "text_delta" {
			continue
		}
		out = append(out, r.kind)
	}
	return out
}

func textOf(rs []received) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.v.Text)
	}
	return b.String()
}

// A browser's view of a run: the events stream over SSE until the run
// suspends with what the person must decide; the decision streams the
// rest.
func TestSSE(t *testing.T) {
	backend := &story.Backend{}
	h, err := newHandler(backend, reacttest.Streaming(story.Scripted(), 8))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	first := post(t, context.Background(), srv, "/runs", url.Values{}, nil)
	assert.Equal(t, []string{
		"text_delta", "tool_start", "tool_invoked", "tool_start", "tool_invoked", "round_end",
		"text_delta", "tool_start", "tool_invoked", "round_end",
		"tool_start", "suspended", "run_end",
	}, kindsOf(first))
	assert.Equal(t, "Let me look at the existing websites and the spaces.Marketing is sp-42. Creating the site.", textOf(first))
	ask := first[len(first)-2].v
	assert.Equal(t, "approval", ask.Decide)
	assert.Equal(t, "create_site", ask.Tool)
	assert.JSONEq(t, `{"name":"Spring Sale","space_id":"sp-42"}`, ask.Args)
	var deferred view
	for _, r := range first {
		if r.kind == "tool_invoked" && r.v.Tool == "create_site" {
			deferred = r.v
		}
	}
	assert.Equal(t, "DEFERRED", deferred.Outcome)
	assert.Equal(t, "APPROVAL_REQUIRED", deferred.Code)
	assert.Equal(t, "deferred", deferred.CallStatus)
	end := first[len(first)-1].v
	assert.Equal(t, "suspended", end.Status)
	assert.Zero(t, backend.Executions())

	require.NotEmpty(t, ask.Ticket, "the suspension carries what the decision must name")
	rest := post(t, context.Background(), srv, "/runs/"+url.PathEscape(end.Run)+"/decision", url.Values{"decision": {"approve"}, "ticket": {ask.Ticket}}, nil)
	last := rest[len(rest)-1].v
	assert.Equal(t, "finished", last.Status)
	assert.Empty(t, last.Error)
	assert.Contains(t, textOf(rest), "Approved. Creating the site now.")
	assert.Equal(t, 1, backend.Executions())

	again := post(t, context.Background(), srv, "/runs/"+url.PathEscape(end.Run)+"/decision", url.Values{"decision": {"approve"}, "ticket": {ask.Ticket}}, nil)
	require.Len(t, again, 1, "a run that finished is no longer waiting")
	assert.Contains(t, again[0].v.Error, "already resumed", "the same approval again is refused as already decided")
	assert.Equal(t, 1, backend.Executions())
}

// slow pauses before each chunk of its model, as a real model does, and
// stops when the context is done.
type slow struct{ react.StreamModel }

func (s slow) GenerateStream(ctx context.Context, req react.Request) iter.Seq2[react.Chunk, error] {
	return func(yield func(react.Chunk, error) bool) {
		for c, err := range s.StreamModel.GenerateStream(ctx, req) {
			select {
			case <-ctx.Done():
				yield(react.Chunk{}, ctx.Err())
				return
			case <-time.After(5 * time.Millisecond):
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// A client that goes away in the middle of the stream cancels its run,
// which stays in the run store, interrupted; it resumes with continue.
func TestSSEClientGoesAway(t *testing.T) {
	backend := &story.Backend{}
	h, err := newHandler(backend, slow{reacttest.Streaming(story.Scripted(), 1)})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	var run string
	post(t, ctx, srv, "/runs", url.Values{}, func(r received) bool {
		run = r.v.Run
		return r.kind == "text_delta"
	})
	cancel()
	require.NotEmpty(t, run)

	var rest []received
	require.Eventually(t, func() bool {
		rest = post(t, context.Background(), srv, "/runs/"+url.PathEscape(run)+"/decision", url.Values{"decision": {"continue"}}, nil)
		return rest[len(rest)-1].v.Error == ""
	}, 5*time.Second, 20*time.Millisecond, "the run is kept once the server noticed the client left")
	assert.Equal(t, "suspended", rest[len(rest)-1].v.Status)
	assert.Zero(t, backend.Executions())
}

func TestSSEBadDecision(t *testing.T) {
	h, err := newHandler(&story.Backend{}, story.Scripted())
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := srv.Client().PostForm(srv.URL+"/runs/x/decision", url.Values{"decision": {"maybe"}})
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	res, err = srv.Client().Get(srv.URL + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	assert.Contains(t, string(body), "/runs")
}
