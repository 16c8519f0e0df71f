package bedrock_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/bedrock"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

var (
	start     = frame{event: "messageStart", payload: `{"role":"assistant"}`}
	textDelta = frame{event: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`}
	toolStart = frame{event: "contentBlockStart", payload: `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"create_site"}}}`}
	toolDelta = frame{event: "contentBlockDelta", payload: `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"name\":\"Spr"}}}`}
)

// The edges of a ConverseStream: each an error of its kind, never a turn;
// a call cut mid-input never reaches the loop.
func TestGenerateStreamEdges(t *testing.T) {
	for _, tt := range []struct {
		name string
		body func(t *testing.T) string
		kind modelerr.Kind
		why  string
	}{
		{"cut mid-call", func(t *testing.T) string { return encode(t, start, textDelta, toolStart, toolDelta) }, modelerr.Truncated,
			"the stream ended without messageStop"},
		{"throttled in the stream", func(t *testing.T) string {
			return encode(t, start, textDelta, frame{exception: "throttlingException", payload: `{"message":"slow down"}`})
		}, modelerr.RateLimited, "an exception frame"},
		{"unavailable in the stream", func(t *testing.T) string {
			return encode(t, start, frame{exception: "serviceUnavailableException", payload: `{"message":"busy"}`})
		}, modelerr.Overloaded, "an overload"},
		{"model stream error", func(t *testing.T) string {
			return encode(t, start, frame{exception: "modelStreamErrorException", payload: `{"message":"model failed","originalStatusCode":500}`})
		}, modelerr.Server, "the model failed mid-answer"},
		{"validation in the stream", func(t *testing.T) string {
			return encode(t, start, frame{exception: "validationException", payload: `{"message":"bad"}`})
		}, modelerr.Request, "a validation error"},
		{"garbage frame", func(t *testing.T) string { return encode(t, start) + "\x00\x00\x00\x10garbage-bytes" }, modelerr.Malformed,
			"bytes that are no event-stream message"},
		{"delta for no call", func(t *testing.T) string { return encode(t, start, toolDelta) }, modelerr.Malformed,
			"an input delta for a block that is not a toolUse"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := streaming.NewServer(t, reply{Body: tt.body(t), ContentType: "application/vnd.amazon.eventstream"})
			got, err := react.Collect(newModel(t, s, nil).GenerateStream(context.Background(), hello))
			require.Error(t, err, tt.why)
			assert.Equal(t, react.Response{}, got)
			assert.Equal(t, tt.kind, modelerr.KindOf(err), "%v: %s", err, tt.why)
			var e *modelerr.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "bedrock", e.Provider)
		})
	}
}

func TestGenerateStreamBreak(t *testing.T) {
	s := streaming.NewServer(t, reply{Body: encode(t, start, textDelta), ContentType: "application/vnd.amazon.eventstream", HangAfterBody: true})
	n := 0
	for _, err := range newModel(t, s, nil).GenerateStream(context.Background(), hello) {
		require.NoError(t, err)
		n++
		break
	}
	assert.Equal(t, 1, n, "breaking out closes the stream; goleak sees no goroutine left")
}

func TestNoStream(t *testing.T) {
	s := streaming.NewServer(t)
	assert.Nil(t, newModel(t, s, &bedrock.Options{NoStream: true}).GenerateStream(context.Background(), hello))
}
