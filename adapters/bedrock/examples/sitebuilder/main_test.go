package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/internal/chattest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestWithoutCredentialsExplainsAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(nil), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 0, code)
	for _, want := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "BEDROCK_MODEL"} {
		assert.Contains(t, stdout.String(), want)
	}
	assert.Empty(t, stderr.String())
}

func TestFlagsExclusive(t *testing.T) {
	code := run(context.Background(), []string{"-approve", "-decline"}, env(nil), strings.NewReader(""), false, io.Discard, io.Discard)
	assert.Equal(t, 2, code)
}

var endpoint = chattest.Endpoint{Path: "/model/" + defaultModel + "/converse-stream"}

// stream renders a turn as ConverseStream sends it, with the SDK's
// event-stream encoder.
func stream(t *testing.T, turn chattest.Turn) string {
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	ev := func(typ string, payload any) {
		p, err := json.Marshal(payload)
		require.NoError(t, err)
		var msg eventstream.Message
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		msg.Headers.Set(":event-type", eventstream.StringValue(typ))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Payload = p
		require.NoError(t, enc.Encode(&b, msg))
	}
	ev("messageStart", map[string]any{"role": "assistant"})
	i := 0
	if turn.Text != "" {
		ev("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"text": turn.Text}})
		ev("contentBlockStop", map[string]any{"contentBlockIndex": i})
		i++
	}
	for _, c := range turn.Calls {
		ev("contentBlockStart", map[string]any{"contentBlockIndex": i, "start": map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name}}})
		ev("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": map[string]any{"toolUse": map[string]any{"input": c.Args}}})
		ev("contentBlockStop", map[string]any{"contentBlockIndex": i})
		i++
	}
	ev("messageStop", map[string]any{"stopReason": "tool_use"})
	ev("metadata", map[string]any{"usage": map[string]any{"inputTokens": 900, "outputTokens": 40, "totalTokens": 940}, "metrics": map[string]any{"latencyMs": 1}})
	return b.String()
}

var creds = map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret"}

func TestStoryAgainstCannedServer(t *testing.T) {
	var replies []chattest.Reply
	for _, turn := range chattest.StoryTurns() {
		replies = append(replies, chattest.Reply{Body: stream(t, turn), ContentType: "application/vnd.amazon.eventstream"})
	}
	srv := chattest.NewServer(t, endpoint, replies...)
	vars := map[string]string{"BEDROCK_ENDPOINT": srv.URL}
	for k, v := range creds {
		vars[k] = v
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(vars), strings.NewReader(""), false, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr.String(), stdout.String())
	for _, want := range append(chattest.StoryOutput(), "model "+defaultModel+" at 127.0.0.1") {
		assert.Contains(t, stdout.String(), want)
	}
}

func TestModelFailureExitsOne(t *testing.T) {
	srv := chattest.NewServer(t, endpoint, chattest.Reply{Status: 429, Body: `{"message":"Too many requests"}`,
		Header: map[string]string{"X-Amzn-ErrorType": "ThrottlingException"}})
	vars := map[string]string{"BEDROCK_ENDPOINT": srv.URL}
	for k, v := range creds {
		vars[k] = v
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(vars), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "rate_limited, retryable: true")
}
