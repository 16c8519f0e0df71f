package openairesponses_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/adapters/openairesponses"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

func ev(data string) string { return "data: " + data + "\n\n" }

const created = `{"type":"response.created","response":{"id":"resp_s","model":"gpt-5","status":"in_progress","output":[]}}`

// The edges of a stream: each an error of its kind, never a turn.
func TestGenerateStreamEdges(t *testing.T) {
	callAdded := `{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"create_site","arguments":""}}`
	for _, tt := range []struct {
		name string
		body string
		kind modelerr.Kind
		why  string
	}{
		{"cut mid-call", ev(created) + ev(callAdded) + ev(`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"name\":\"Spr"}`),
			modelerr.Truncated, "the connection closed before response.completed: nothing of the turn runs"},
		{"error event", ev(created) + ev(`{"type":"error","code":"rate_limit_exceeded","message":"slow down"}`), modelerr.RateLimited, "an error event names its code"},
		{"failed", ev(created) + ev(`{"type":"response.failed","response":{"id":"resp_s","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}}`),
			modelerr.Server, "response.failed is the server's failure"},
		{"not JSON", ev(created) + ev(`{"type":`), modelerr.Malformed, "an event that is not JSON"},
		{"delta for no call", ev(created) + ev(`{"type":"response.function_call_arguments.delta","output_index":3,"delta":"x"}`), modelerr.Malformed,
			"arguments for an item that is not a call"},
		{"index out of range", ev(created) + ev(`{"type":"response.output_item.added","output_index":-1,"item":{"type":"function_call"}}`), modelerr.Malformed,
			"a negative output index"},
		{"added twice", ev(created) + ev(callAdded) + ev(callAdded), modelerr.Malformed, "one output index, two items"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := streaming.NewServer(t, reply{Body: tt.body, ContentType: "text/event-stream"})
			got, err := react.Collect(newModel(t, s, nil).GenerateStream(context.Background(), hello))
			require.Error(t, err, tt.why)
			assert.Equal(t, react.Response{}, got)
			assert.Equal(t, tt.kind, modelerr.KindOf(err), "%v: %s", err, tt.why)
		})
	}
}

// An item done without argument deltas gives its arguments whole;
// events this adapter does not know are skipped.
func TestGenerateStreamWholeArguments(t *testing.T) {
	body := ev(created) +
		ev(`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"list_spaces","arguments":""}}`) +
		ev(`{"type":"response.some_future_event","output_index":0}`) +
		ev(`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"list_spaces","arguments":"{\"page\":1}"}}`) +
		ev(`{"type":"response.completed","response":{"id":"resp_s","model":"gpt-5","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"list_spaces","arguments":"{\"page\":1}"}]}}`)
	s := streaming.NewServer(t, reply{Body: body, ContentType: "text/event-stream"})
	got, err := react.Collect(newModel(t, s, nil).GenerateStream(context.Background(), hello))
	require.NoError(t, err)
	require.Len(t, got.ToolCalls, 1)
	assert.Equal(t, `{"page":1}`, string(got.ToolCalls[0].Args))
	assert.Equal(t, "resp_s", got.ID)
	assert.JSONEq(t, `true`, s.Field(0, "stream"))
}

func TestGenerateStreamBreak(t *testing.T) {
	s := streaming.NewServer(t, reply{Body: ev(created), ContentType: "text/event-stream", HangAfterBody: true})
	n := 0
	for _, err := range newModel(t, s, nil).GenerateStream(context.Background(), hello) {
		require.NoError(t, err)
		n++
		break
	}
	assert.Equal(t, 1, n, "breaking out closes the body; goleak sees no goroutine left")
}

func TestNoStream(t *testing.T) {
	s := streaming.NewServer(t)
	assert.Nil(t, newModel(t, s, &openairesponses.Options{NoStream: true}).GenerateStream(context.Background(), hello))
	assert.True(t, strings.HasPrefix(s.URL, "http://"))
}
