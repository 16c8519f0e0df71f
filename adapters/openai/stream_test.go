package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// sse is a hand-written event stream: each data line is one event.
func sse(lines ...string) reply {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("data: ")
		b.WriteString(l)
		b.WriteString("\n\n")
	}
	return reply{ContentType: "text/event-stream", Body: b.String()}
}

const (
	head  = `{"id":"chatcmpl-1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	done  = `[DONE]`
	usage = `{"id":"chatcmpl-1","model":"gpt-4.1-2025-04-14","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":12,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}`
)

func text(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"chatcmpl-1","model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func callStart(index int, id, name string) string {
	return `{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":` + itoa(index) + `,"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":""}}]},"finish_reason":null}]}`
}

func callArgs(index int, frag string) string {
	b, _ := json.Marshal(frag)
	return `{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":` + itoa(index) + `,"function":{"arguments":` + string(b) + `}}]},"finish_reason":null}]}`
}

func finish(reason string) string {
	return `{"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// streamOf collects a stream of m.
func streamOf(t *testing.T, ctx context.Context, m *openai.Model) (react.Response, error) {
	t.Helper()
	return react.Collect(m.GenerateStream(ctx, hello))
}

func TestGenerateStream(t *testing.T) {
	s := adapter.NewServer(t, sse(
		head, text("Publishing "), text("the bakery site."),
		callStart(0, "call_1", "site_publish"), callArgs(0, `{"site`), callArgs(0, `_id":"ba`), callArgs(0, `kery"}`),
		callStart(1, "call_2", "site_get"), callArgs(1, `{}`),
		finish("tool_calls"), usage, done,
	))
	got, err := streamOf(t, context.Background(), newModel(t, s, nil))
	require.NoError(t, err)
	assert.Equal(t, react.Response{
		Text: "Publishing the bakery site.", ID: "chatcmpl-1", Model: "gpt-4.1-2025-04-14", FinishReason: "tool_calls",
		Usage: &react.Usage{InputTokens: 19, OutputTokens: 12, CachedInputTokens: 4, ReasoningTokens: 2},
		ToolCalls: []react.ToolCall{
			{ID: "call_1", Name: "site_publish", Args: json.RawMessage(`{"site_id":"bakery"}`)},
			{ID: "call_2", Name: "site_get", Args: json.RawMessage(`{}`)},
		},
	}, got)
	assert.JSONEq(t, `true`, s.Field(0, "stream"))
	assert.JSONEq(t, `{"include_usage":true}`, s.Field(0, "stream_options"))
	assert.JSONEq(t, `"gpt-4.1"`, s.Field(0, "model"))
}

// The edges of a stream: each is an error of a kind the host can act on,
// never a complete-looking answer.
func TestGenerateStreamEdges(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply reply
		kind  modelerr.Kind
		why   string
	}{
		{"no [DONE]", sse(head, text("Publishing"), callStart(0, "c", "site_publish"), callArgs(0, `{"site_id":"bak`)),
			modelerr.Truncated, "a connection that ends cleanly before [DONE] is a cut answer (the SDK returns no error)"},
		{"no [DONE] after a whole answer", sse(head, text("hi"), finish("stop"), usage),
			modelerr.Truncated, "even with a finish reason: the API promises [DONE]"},
		{"in-band error", sse(head, text("Pub"), `{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}`),
			modelerr.Server, "sent with status 200: the SDK returns it as a plain stream error, not *openai.Error"},
		{"in-band rate limit", sse(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`),
			modelerr.RateLimited, "the code names the kind when the type does not"},
		{"malformed event", sse(head, `{"id":"chatcmpl-1","choices":[{"delta":{"content":`),
			modelerr.Malformed, "a data line that is not JSON"},
		{"not an event stream", reply{Body: `{"id":"x","choices":[]}`},
			modelerr.Malformed, "a JSON body where a stream was asked for"},
		{"negative index", sse(head, `{"choices":[{"delta":{"tool_calls":[{"index":-1,"id":"c","function":{"name":"x"}}]}}]}`, done),
			modelerr.Malformed, "no position in a turn"},
		{"rate limited before the stream", reply{Status: 429, Header: map[string]string{"Retry-After": "7"},
			Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`},
			modelerr.RateLimited, "an HTTP error as Generate reports it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := adapter.NewServer(t, tt.reply)
			got, err := streamOf(t, context.Background(), newModel(t, s, nil))
			require.Error(t, err, tt.why)
			assert.Equal(t, react.Response{}, got)
			me, ok := err.(*modelerr.Error) //nolint:errorlint // the adapter's own type, unwrapped
			require.True(t, ok, "%T: %v", err, err)
			assert.Equal(t, tt.kind, me.Kind, "%s: %v", tt.why, err)
			assert.Equal(t, "openai", me.Provider)
		})
	}
}

// Bare CR line endings, comments, an unknown event type and unknown fields
// are read as the standard says: the answer is whole.
func TestGenerateStreamTolerates(t *testing.T) {
	body := ": keep-alive\r" +
		"data: " + head + "\r\r" +
		"event: vendor.debug\rdata: {\"anything\":true}\r\r" +
		"data: " + strings.Replace(text("hi"), `"choices"`, `"new_field":{"x":1},"choices"`, 1) + "\r\r" +
		"data: " + finish("stop") + "\r\r" +
		"data: [DONE]\r\r"
	s := adapter.NewServer(t, reply{ContentType: "text/event-stream; charset=utf-8", Body: body})
	got, err := streamOf(t, context.Background(), newModel(t, s, nil))
	require.NoError(t, err)
	assert.Equal(t, "hi", got.Text)
	assert.Equal(t, "stop", got.FinishReason)
	assert.Nil(t, got.Usage, "a server that sends no usage gives none")
}

// Servers that send whole calls in one chunk, several at once and without
// an index (as some compatible servers do), still give every call.
func TestGenerateStreamWholeCalls(t *testing.T) {
	s := adapter.NewServer(t, sse(
		`{"id":"x","choices":[{"delta":{"tool_calls":[`+
			`{"id":"a","function":{"name":"site_get","arguments":"{\"site_id\":\"1\"}"}},`+
			`{"id":"b","function":{"name":"site_get","arguments":"{\"site_id\":\"2\"}"}}]},"finish_reason":"tool_calls"}]}`,
		done,
	))
	got, err := streamOf(t, context.Background(), newModel(t, s, nil))
	require.NoError(t, err)
	require.Len(t, got.ToolCalls, 2)
	assert.Equal(t, "a", got.ToolCalls[0].ID)
	assert.JSONEq(t, `{"site_id":"2"}`, string(got.ToolCalls[1].Args))
}

// A server that never ends its stream: the context's deadline ends it.
func TestGenerateStreamDeadline(t *testing.T) {
	r := sse(head, text("thinking"))
	r.HangAfterBody = true
	s := adapter.NewServer(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := streamOf(t, ctx, newModel(t, s, nil))
	require.Error(t, err)
	assert.Equal(t, modelerr.Timeout, modelerr.KindOf(err), "%v", err)
}

// A reader that stops early closes the stream (goleak checks that nothing
// is left behind).
func TestGenerateStreamBreak(t *testing.T) {
	r := sse(head, text("a"), text("b"))
	r.HangAfterBody = true
	s := adapter.NewServer(t, r)
	n := 0
	for c, err := range newModel(t, s, nil).GenerateStream(context.Background(), hello) {
		require.NoError(t, err)
		if c.Text != "" {
			n++
			break
		}
	}
	assert.Equal(t, 1, n)
}

// Through the loop: a stream cut in the middle of a write's arguments is a
// model error; the run is interrupted with a resumable snapshot and the
// write never runs; resumed, the next answer completes it.
func TestLoopStreamCutMidCall(t *testing.T) {
	var creates atomic.Int32
	s := adapter.NewServer(t,
		sse(head, text("Creating"), callStart(0, "call_1", "create_site"), callArgs(0, `{"name":"sh`)),
		sse(head, callStart(0, "call_2", "builtin_node_finish"), callArgs(0, `{}`), finish("tool_calls"), done),
	)
	runs := runstore.NewMemory()
	loop, err := react.New(react.Config{Model: newModel(t, s, nil), Tools: chattest.SiteCatalog(&creates), Runs: runs,
		Observer: react.DiscardObserver})
	require.NoError(t, err)
	var last react.Event
	var lastErr error
	var text strings.Builder
	for e, err := range loop.RunStream(context.Background(), chattest.SiteNode(), "create a shop") {
		last, lastErr = e, err
		if e.Kind == react.EventTextDelta {
			text.WriteString(e.Text)
		}
		assert.NotEqual(t, react.EventToolStart, e.Kind, "nothing of the cut turn runs")
	}
	assert.Equal(t, "Creating", text.String(), "the text came as it was written")
	require.Error(t, lastErr)
	assert.Equal(t, modelerr.Truncated, modelerr.KindOf(lastErr))
	assert.True(t, modelerr.KindOf(lastErr).Retryable())
	res := last.RunEnd.Result
	assert.Equal(t, react.Interrupted, res.Status)
	assert.Zero(t, creates.Load())

	res2, err := loop.ResumeRun(context.Background(), res.Run, react.Continue())
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res2.Status)
	assert.Zero(t, creates.Load())
}
