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

func TestWithoutBaseURLExplainsAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(nil), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 0, code, "run() without OPENAI_BASE_URL = %d; want 0", code)
	assert.Contains(t, stdout.String(), "OPENAI_BASE_URL")
	assert.Contains(t, stdout.String(), "OPENAI_MODEL")
	assert.Empty(t, stderr.String())
}

func TestFlagsExclusive(t *testing.T) {
	code := run(context.Background(), []string{"-approve", "-decline"}, env(nil), strings.NewReader(""), false, io.Discard, io.Discard)
	assert.Equal(t, 2, code)
}

// endpoint is the Chat Completions API the program talks to.
var endpoint = chattest.Endpoint{Path: "/v1/chat/completions"}

// completion renders turn n as a chat completion body.
func completion(n int, turn chattest.Turn) string {
	tcs := make([]map[string]any, len(turn.Calls))
	for i, c := range turn.Calls {
		tcs[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}}
	}
	msg := map[string]any{"role": "assistant", "content": turn.Text, "tool_calls": tcs}
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("chatcmpl-story-%d", n), "object": "chat.completion", "created": 1741571000 + n, "model": "qwen3:8b",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": msg}},
	})
	return string(b)
}

// TestStoryAgainstCannedServer runs the program against a server replaying
// the story, so the example is proven to work end to end offline.
func TestStoryAgainstCannedServer(t *testing.T) {
	var replies []chattest.Reply
	for i, turn := range chattest.StoryTurns() {
		// The program streams: the server answers each turn as its event stream.
		replies = append(replies, chattest.Reply{Body: chattest.OpenAIStream(completion(i+1, turn)), ContentType: "text/event-stream"})
	}
	srv := chattest.NewServer(t, endpoint, replies...)

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/"}),
		strings.NewReader(""), false, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr.String(), stdout.String())
	out := stdout.String()
	for _, want := range append(chattest.StoryOutput(), "model qwen3:8b at "+srv.URL) {
		assert.Contains(t, out, want)
	}
}

func TestModelFailureExitsOne(t *testing.T) {
	srv := chattest.NewServer(t, endpoint, chattest.Reply{Status: 429,
		Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/"}),
		strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "rate_limited, retryable: true")
}
