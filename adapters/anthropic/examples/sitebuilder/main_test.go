package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// call is one tool call of a canned turn.
type call struct{ id, name, args string }

// completion renders a Messages API response with the given tool calls.
func completion(n int, text string, calls ...call) string {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, c := range calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)})
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
	create := `{"name":"Spring Sale","space_id":"sp-42"}`
	turns := []string{
		completion(1, "Let me look at the websites and spaces.", call{"c1", "list_websites", `{}`}, call{"c2", "list_spaces", `{}`}),
		completion(2, "", call{"c3", "create_site", create}),
		completion(3, "", call{"c4", "builtin_node_approval", `{"tool":"create_site","reason":"create Spring Sale in Marketing"}`}),
		completion(4, "", call{"c5", "create_site", create}),
		completion(5, "", call{"c6", "builtin_output_set", `{"key":"site_id","value":"site-1001","sourceType":"tool_result","sourceRef":"c5"}`}),
		completion(6, "", call{"c7", "builtin_node_finish", `{"summary":"Created Spring Sale."}`}),
	}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		defer mu.Unlock()
		if len(turns) == 0 {
			t.Errorf("unexpected request")
			http.Error(w, "{}", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(turns[0]))
		turns = turns[1:]
	}))
	defer srv.Close()

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"ANTHROPIC_BASE_URL": srv.URL}),
		strings.NewReader(""), false, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr.String(), stdout.String())
	out := stdout.String()
	for _, want := range []string{
		"model claude-haiku-4-5 at " + srv.URL,
		"create_site: the write create_site needs the user's approval",
		"-- suspended: create_site(" + create + ") waits for approval",
		"-- stdin is not a terminal: approving",
		"-- finished after 6 rounds: Created Spring Sale.",
		`output site_id = "site-1001" (from tool_result c5)`,
		"create_site executed 1 time(s)",
	} {
		assert.Contains(t, out, want)
	}
}

func TestModelFailureExitsOne(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), nil, env(map[string]string{"ANTHROPIC_BASE_URL": srv.URL}),
		strings.NewReader(""), false, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "rate_limited, retryable: true")
}
