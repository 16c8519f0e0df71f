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
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/internal/chattest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestWithoutCredentialsExplainsAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(nil), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 0, code)
	for _, want := range []string{"GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"} {
		assert.Contains(t, stdout.String(), want)
	}
	assert.Empty(t, stderr.String())
}

func TestFlagsExclusive(t *testing.T) {
	code := run(context.Background(), []string{"-approve", "-decline"}, env(nil), strings.NewReader(""), false, io.Discard, io.Discard)
	assert.Equal(t, 2, code)
}

var endpoint = chattest.Endpoint{Path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent"}

// chunk renders turn n as the API's stream: one data line, finished.
func chunk(n int, turn chattest.Turn) string {
	var parts []any
	if turn.Text != "" {
		parts = append(parts, map[string]any{"text": turn.Text})
	}
	for _, c := range turn.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": json.RawMessage(c.Args)}})
	}
	b, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 900, "candidatesTokenCount": 40},
		"modelVersion":  "gemini-2.5-flash", "responseId": fmt.Sprintf("resp-story-%d", n),
	})
	return "data: " + string(b) + "\r\n\r\n"
}

// TestStoryAgainstCannedServer runs the program against a server replaying
// the story as the Gemini API streams it, end to end offline.
func TestStoryAgainstCannedServer(t *testing.T) {
	var replies []chattest.Reply
	for i, turn := range chattest.StoryTurns() {
		replies = append(replies, chattest.Reply{Body: chunk(i+1, turn), ContentType: "text/event-stream"})
	}
	srv := chattest.NewServer(t, endpoint, replies...)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"GEMINI_BASE_URL": srv.URL + "/"}), strings.NewReader(""), false, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr.String(), stdout.String())
	for _, want := range append(chattest.StoryOutput(), "model gemini-2.5-flash at 127.0.0.1 (gcp.gemini)") {
		assert.Contains(t, stdout.String(), want)
	}
}

func TestModelFailureExitsOne(t *testing.T) {
	srv := chattest.NewServer(t, endpoint, chattest.Reply{Status: 429,
		Body: `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"GEMINI_BASE_URL": srv.URL + "/"}), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "rate_limited, retryable: true")
}
