package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// ev is one event of a hand-written stream: its JSON data, with the
// "event:" line naming its type.
func ev(data string) string {
	var e struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(data), &e)
	return "event: " + e.Type + "\ndata: " + data + "\n\n"
}

func sse(events ...string) reply {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(ev(e))
	}
	return reply{ContentType: "text/event-stream", Body: b.String()}
}

const (
	msgStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"usage":{"input_tokens":25,"cache_read_input_tokens":100,"cache_creation_input_tokens":0,"output_tokens":1}}}`
	ping     = `{"type":"ping"}`
	msgStop  = `{"type":"message_stop"}`
)

func textStart(i int) string {
	return `{"type":"content_block_start","index":` + itoa(i) + `,"content_block":{"type":"text","text":""}}`
}

func textDelta(i int, s string) string {
	b, _ := json.Marshal(s)
	return `{"type":"content_block_delta","index":` + itoa(i) + `,"delta":{"type":"text_delta","text":` + string(b) + `}}`
}

func toolStart(i int, id, name string) string {
	return `{"type":"content_block_start","index":` + itoa(i) + `,"content_block":{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}}`
}

func inputDelta(i int, frag string) string {
	b, _ := json.Marshal(frag)
	return `{"type":"content_block_delta","index":` + itoa(i) + `,"delta":{"type":"input_json_delta","partial_json":` + string(b) + `}}`
}

func blockStop(i int) string { return `{"type":"content_block_stop","index":` + itoa(i) + `}` }

func msgDelta(reason string, out int) string {
	return `{"type":"message_delta","delta":{"stop_reason":"` + reason + `","stop_sequence":null},"usage":{"output_tokens":` + itoa(out) + `}}`
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func streamOf(t *testing.T, ctx context.Context, m *anthropic.Model) (react.Response, error) {
	t.Helper()
	return react.Collect(m.GenerateStream(ctx, hello))
}

func TestGenerateStream(t *testing.T) {
	s := adapter.NewServer(t, sse(
		msgStart, ping,
		textStart(0), textDelta(0, "Publishing "), textDelta(0, "the site."), blockStop(0),
		`{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"sig"}}`,
		blockStop(1),
		toolStart(2, "toolu_1", "site_publish"), inputDelta(2, `{"site`), inputDelta(2, `_id": "bak`), inputDelta(2, `ery"}`), blockStop(2),
		toolStart(3, "toolu_2", "list_spaces"), blockStop(3),
		msgDelta("tool_use", 89), msgStop,
	))
	got, err := streamOf(t, context.Background(), newModel(t, s, nil))
	require.NoError(t, err)
	assert.Equal(t, react.Response{
		Text: "Publishing the site.", ID: "msg_1", Model: "claude-sonnet-4-5-20250929", FinishReason: "tool_use",
		Usage: &react.Usage{InputTokens: 125, OutputTokens: 89, CachedInputTokens: 100},
		ToolCalls: []react.ToolCall{
			{ID: "toolu_1", Name: "site_publish", Args: json.RawMessage(`{"site_id": "bakery"}`)},
			{ID: "toolu_2", Name: "list_spaces", Args: json.RawMessage(`{}`)},
		},
		Parts: []react.Part{
			{Kind: react.PartText, Text: "Publishing the site."},
			{Kind: react.PartOpaque, API: anthropic.API, Data: []byte(`{"type":"thinking","thinking":"hm","signature":"sig"}`)},
			{Kind: react.PartCall, Call: 0},
			{Kind: react.PartCall, Call: 1},
		},
	}, got)
	assert.JSONEq(t, `true`, s.Field(0, "stream"))
	assert.JSONEq(t, `"claude-sonnet-4-5"`, s.Field(0, "model"))
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
		{"no message_stop", sse(msgStart, toolStart(0, "toolu_1", "site_publish"), inputDelta(0, `{"site_id":"ba`)),
			modelerr.Truncated, "a connection that ends cleanly before message_stop is a cut answer (the SDK returns no error)"},
		{"no message_stop after a whole answer", sse(msgStart, textStart(0), textDelta(0, "hi"), blockStop(0), msgDelta("end_turn", 3)),
			modelerr.Truncated, "even with a stop reason: the API promises message_stop"},
		{"overloaded in-band", sse(msgStart, textStart(0), textDelta(0, "Pub"), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			modelerr.Overloaded, "sent with HTTP status 200: retry logic keyed on status misses it"},
		{"api error in-band", sse(`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
			modelerr.Server, "a server failure mid-answer"},
		{"malformed event", sse(msgStart, `{"type":"content_block_delta","index":0,`),
			modelerr.Malformed, "a data line that is not JSON"},
		{"no type", sse(msgStart, `{"index":0}`), modelerr.Malformed, "an event says what it is"},
		{"event line contradicts data", reply{ContentType: "text/event-stream",
			Body: ev(msgStart) + "event: message_stop\ndata: " + textStart(0) + "\n\n"},
			modelerr.Malformed, "a stream whose names and contents disagree"},
		{"delta of a block that did not start", sse(msgStart, textDelta(4, "x"), msgStop), modelerr.Malformed, "nothing to add to"},
		{"delta after the block stopped", sse(msgStart, textStart(0), blockStop(0), textDelta(0, "x"), msgStop), modelerr.Malformed, "a closed block"},
		{"input delta for a text block", sse(msgStart, textStart(0), inputDelta(0, "{"), msgStop), modelerr.Malformed, "a fragment of the wrong kind"},
		{"content before message_start", sse(textStart(0), msgStop), modelerr.Malformed, "the message starts first"},
		{"not an event stream", reply{Body: `{"type":"message"}`}, modelerr.Malformed, "a JSON body where a stream was asked for"},
		{"overloaded before the stream", reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			modelerr.Overloaded, "an HTTP error as Generate reports it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := adapter.NewServer(t, tt.reply)
			got, err := streamOf(t, context.Background(), newModel(t, s, nil))
			require.Error(t, err, tt.why)
			assert.Equal(t, react.Response{}, got)
			me, ok := err.(*modelerr.Error) //nolint:errorlint // the adapter's own type, unwrapped
			require.True(t, ok, "%T: %v", err, err)
			assert.Equal(t, tt.kind, me.Kind, "%s: %v", tt.why, err)
			assert.Equal(t, "anthropic", me.Provider)
		})
	}
}

// A stream without "event:" lines, with bare CR line endings, comments and
// an event type the adapter does not know is read whole: the type is in
// the data.
func TestGenerateStreamTolerates(t *testing.T) {
	var b strings.Builder
	for _, d := range []string{msgStart, `{"type":"vendor_debug","x":1}`, textStart(0), textDelta(0, "hi"),
		`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`, blockStop(0), msgDelta("end_turn", 2), msgStop} {
		b.WriteString(": keep-alive\rdata: " + d + "\r\r")
	}
	s := adapter.NewServer(t, reply{ContentType: "text/event-stream", Body: b.String()})
	got, err := streamOf(t, context.Background(), newModel(t, s, nil))
	require.NoError(t, err)
	assert.Equal(t, "hi", got.Text)
	assert.Equal(t, "end_turn", got.FinishReason)
	assert.Equal(t, int64(2), got.Usage.OutputTokens)
}

// A tool input cut by max_tokens is passed on as it came: invalid JSON,
// never a valid-looking {} (the SDK's accumulator's answer).
func TestGenerateStreamMaxTokensCut(t *testing.T) {
	s := adapter.NewServer(t, sse(msgStart, toolStart(0, "toolu_1", "site_publish"), inputDelta(0, `{"site_id":"bak`), blockStop(0), msgDelta("max_tokens", 4096), msgStop))
	got, err := streamOf(t, context.Background(), newModel(t, s, nil))
	require.NoError(t, err)
	require.Len(t, got.ToolCalls, 1)
	assert.Equal(t, `{"site_id":"bak`, string(got.ToolCalls[0].Args))
	assert.False(t, json.Valid(got.ToolCalls[0].Args))
	assert.Equal(t, "max_tokens", got.FinishReason)
}

// A server that never ends its stream: the context's deadline ends it.
func TestGenerateStreamDeadline(t *testing.T) {
	r := sse(msgStart, textStart(0), textDelta(0, "thinking"))
	r.HangAfterBody = true
	s := adapter.NewServer(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := streamOf(t, ctx, newModel(t, s, nil))
	require.Error(t, err)
	assert.Equal(t, modelerr.Timeout, modelerr.KindOf(err), "%v", err)
}

// Through the loop: a stream cut in the middle of a write's arguments is a
// model error; the run is interrupted with a resumable snapshot and the
// write never runs; resumed, the next answer completes it. A write whose
// input max_tokens cut is answered REJECTED and does not run either.
func TestLoopStreamCutMidCall(t *testing.T) {
	var creates atomic.Int32
	s := adapter.NewServer(t,
		sse(msgStart, textStart(0), textDelta(0, "Creating"), blockStop(0), toolStart(1, "toolu_1", "create_site"), inputDelta(1, `{"name":"sh`)),
		sse(msgStart, toolStart(0, "toolu_2", "create_site"), inputDelta(0, `{"name":"sh`), blockStop(0), msgDelta("max_tokens", 4096), msgStop),
		sse(msgStart, toolStart(0, "toolu_3", "builtin_node_finish"), inputDelta(0, `{}`), blockStop(0), msgDelta("tool_use", 5), msgStop),
	)
	loop, err := react.New(react.Config{Model: newModel(t, s, nil), Tools: chattest.SiteCatalog(&creates), Runs: runstore.NewMemory(),
		Observer: react.DiscardObserver})
	require.NoError(t, err)
	var last react.Event
	var lastErr error
	for e, err := range loop.RunStream(context.Background(), chattest.SiteNode(), "create a shop") {
		last, lastErr = e, err
		assert.NotEqual(t, react.EventToolStart, e.Kind, "nothing of the cut turn runs")
	}
	require.Error(t, lastErr)
	assert.Equal(t, modelerr.Truncated, modelerr.KindOf(lastErr))
	res := last.RunEnd.Result
	assert.Equal(t, react.Interrupted, res.Status)
	assert.Zero(t, creates.Load())

	again, err := loop.ResumeRun(context.Background(), res.Run, react.Continue())
	require.NoError(t, err)
	assert.Equal(t, react.Finished, again.Status)
	assert.Zero(t, creates.Load())
	require.NotEmpty(t, again.Calls)
	assert.Equal(t, "TOOL_CALL_CUT_OFF", again.Calls[0].Code.String(), "a call of a turn max_tokens cut never runs")
}
