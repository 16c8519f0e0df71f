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

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestWithoutKeyExplainsAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(nil), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout.String(), "OPENAI_API_KEY")
	assert.Contains(t, stdout.String(), "OPENAI_BASE_URL")
	assert.Empty(t, stderr.String())
}

func TestFlagsExclusive(t *testing.T) {
	code := run(context.Background(), []string{"-approve", "-decline"}, env(nil), strings.NewReader(""), false, io.Discard, io.Discard)
	assert.Equal(t, 2, code)
}

var endpoint = chattest.Endpoint{Path: "/responses"}

// stream renders turn n as the Responses API streams it: created, its
// items whole, completed.
func stream(n int, turn chattest.Turn) string {
	var output []any
	if turn.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text}}})
	}
	for _, c := range turn.Calls {
		output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": c.Args})
	}
	resp := map[string]any{"id": fmt.Sprintf("resp_story_%d", n), "model": "gpt-5-mini", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": 900, "output_tokens": 40}}
	var b strings.Builder
	ev := func(v map[string]any) {
		d, _ := json.Marshal(v)
		b.WriteString("event: " + v["type"].(string) + "\ndata: " + string(d) + "\n\n")
	}
	ev(map[string]any{"type": "response.created", "response": map[string]any{"id": resp["id"], "model": "gpt-5-mini", "status": "in_progress"}})
	for i, o := range output {
		it := o.(map[string]any)
		ev(map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		if it["type"] == "message" {
			ev(map[string]any{"type": "response.output_text.delta", "output_index": i, "delta": turn.Text})
		}
		ev(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	ev(map[string]any{"type": "response.completed", "response": resp})
	return b.String()
}

func TestStoryAgainstCannedServer(t *testing.T) {
	var replies []chattest.Reply
	for i, turn := range chattest.StoryTurns() {
		replies = append(replies, chattest.Reply{Body: stream(i+1, turn), ContentType: "text/event-stream"})
	}
	srv := chattest.NewServer(t, endpoint, replies...)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"OPENAI_BASE_URL": srv.URL}), strings.NewReader(""), false, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr.String(), stdout.String())
	for _, want := range append(chattest.StoryOutput(), "model gpt-5-mini at "+srv.URL) {
		assert.Contains(t, stdout.String(), want)
	}
}

func TestModelFailureExitsOne(t *testing.T) {
	srv := chattest.NewServer(t, endpoint, chattest.Reply{Status: 429, Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"OPENAI_BASE_URL": srv.URL}), strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "rate_limited, retryable: true")
}
