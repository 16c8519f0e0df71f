package gemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/gemini"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

const (
	chunkA = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}],"responseId":"r1","modelVersion":"gemini-2.5-flash"}` + "\r\n\r\n"
	chunkB = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"lo"},{"functionCall":{"name":"list_spaces","args":{"page":1}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2},"responseId":"r1"}` + "\r\n\r\n"
)

func streamReply(body string) reply { return reply{Body: body, ContentType: "text/event-stream"} }

func TestGenerateStream(t *testing.T) {
	s := streaming.NewServer(t, streamReply(chunkA+chunkB))
	var texts []string
	var a react.Assembler
	for c, err := range newModel(t, s, nil).GenerateStream(context.Background(), hello) {
		require.NoError(t, err)
		if c.Text != "" {
			texts = append(texts, c.Text)
		}
		require.NoError(t, a.Add(c))
	}
	assert.Equal(t, []string{"Hel", "lo"}, texts, "text as it arrives")
	got := a.Response()
	assert.Equal(t, "Hello", got.Text)
	assert.Equal(t, "STOP", got.FinishReason)
	assert.Equal(t, []react.ToolCall{{ID: "call_r1_0", Name: "list_spaces", Args: json.RawMessage(`{"page":1}`)}}, got.ToolCalls)
	assert.Equal(t, &react.Usage{InputTokens: 5, OutputTokens: 2}, got.Usage)
	assert.Equal(t, "r1", got.ID)
	assert.Equal(t, "gemini-2.5-flash", got.Model)
}

// The edges of a stream: each an error of its kind, never a turn.
func TestGenerateStreamEdges(t *testing.T) {
	for _, tt := range []struct {
		name string
		body string
		kind modelerr.Kind
		why  string
	}{
		{"cut before the finish reason", chunkA, modelerr.Truncated, "no chunk said the candidate finished: the connection closed mid-answer"},
		{"cut mid-event", chunkA + `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]},"finishReason":"ST`, modelerr.Malformed,
			"a data line cut mid-JSON"},
		{"in-band overload", chunkA + `data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}` + "\r\n\r\n", modelerr.Overloaded,
			"an error object sent with status 200"},
		{"in-band quota", chunkA + `data: {"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}` + "\r\n\r\n",
			modelerr.RateLimited, "a rate limit in the stream, with its wait"},
		{"not JSON", "data: <html>\r\n\r\n", modelerr.Malformed, "a data line that is not a chunk"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := streaming.NewServer(t, streamReply(tt.body))
			got, err := react.Collect(newModel(t, s, nil).GenerateStream(context.Background(), hello))
			require.Error(t, err, tt.why)
			assert.Equal(t, react.Response{}, got)
			assert.Equal(t, tt.kind, modelerr.KindOf(err), "%v: %s", err, tt.why)
			var e *modelerr.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "gemini", e.Provider)
		})
	}
}

// Breaking out of the stream closes the connection: the server's held
// stream ends, and goleak sees no goroutine left.
func TestGenerateStreamBreak(t *testing.T) {
	s := streaming.NewServer(t, reply{Body: chunkA, ContentType: "text/event-stream", HangAfterBody: true})
	n := 0
	for _, err := range newModel(t, s, nil).GenerateStream(context.Background(), hello) {
		require.NoError(t, err)
		n++
		break
	}
	assert.Equal(t, 1, n)
}

func TestNoStream(t *testing.T) {
	assert.Nil(t, gemini.New(client(t, "http://127.0.0.1:1"), modelName, &gemini.Options{NoStream: true}).GenerateStream(context.Background(), hello))
}

// A body the SDK's converter panics on is a malformed stream; a panic of
// the caller's own loop body is not swallowed.
func TestGenerateStreamPanics(t *testing.T) {
	s := streaming.NewServer(t, streamReply(`data: {"candidates":""}`+"\r\n\r\n"))
	_, err := react.Collect(newModel(t, s, nil).GenerateStream(context.Background(), hello))
	assert.Equal(t, modelerr.Malformed, modelerr.KindOf(err), "%v", err)

	s = streaming.NewServer(t, streamReply(chunkA+chunkB))
	assert.PanicsWithValue(t, "host", func() {
		for _, err := range newModel(t, s, nil).GenerateStream(context.Background(), hello) {
			_ = err // the first chunk's; the body panics before looking
			panic("host")
		}
	})
}
