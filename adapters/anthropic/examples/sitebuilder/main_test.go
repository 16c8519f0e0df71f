package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/internal/chattest"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestWithoutKeyExplainsAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(nil), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 0, code, "run() without ANTHROPIC_API_KEY = %d; want 0", code)
	assert.Contains(t, stdout.String(), "ANTHROPIC_API_KEY")
	assert.Contains(t, stdout.String(), "ANTHROPIC_BASE_URL")
	assert.Empty(t, stderr.String())
}

func TestFlagsExclusive(t *testing.T) {
	code := run(context.Background(), []string{"-approve", "-decline"}, env(nil), strings.NewReader(""), false, io.Discard, io.Discard)
	assert.Equal(t, 2, code)
}

// endpoint is the Messages API the program talks to.
var endpoint = chattest.Endpoint{Path: "/v1/messages"}

// message renders turn n as a Messages API response.
func message(n int, turn chattest.Turn) string {
	var content []any
	if turn.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": turn.Text})
	}
	for _, c := range turn.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
	}
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("msg_story_%d", n), "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
		"content": content, "stop_reason": "tool_use", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 900, "output_tokens": 40},
	})
	return string(b)
}

// TestStoryAgainstCannedServer runs the program against a server replaying
// the story, so the example is proven to work end to end offline.
func TestStoryAgainstCannedServer(t *testing.T) {
	var replies []chattest.Reply
	for i, turn := range chattest.StoryTurns() {
		// The program streams: the server answers each turn as its event stream.
		replies = append(replies, chattest.Reply{Body: chattest.AnthropicStream(message(i+1, turn)), ContentType: "text/event-stream"})
	}
	srv := chattest.NewServer(t, endpoint, replies...)

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"ANTHROPIC_BASE_URL": srv.URL}),
		strings.NewReader(""), false, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr.String(), stdout.String())
	out := stdout.String()
	for _, want := range append(chattest.StoryOutput(), "model claude-haiku-4-5 at "+srv.URL) {
		assert.Contains(t, out, want)
	}
}

func TestModelFailureExitsOne(t *testing.T) {
	srv := chattest.NewServer(t, endpoint, chattest.Reply{Status: 429,
		Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"ANTHROPIC_BASE_URL": srv.URL}),
		strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "rate_limited, retryable: true")
}
