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
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestWithoutBaseURLExplainsAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-model", "openai"}, env(nil), &stdout, &stderr)
	assert.Equal(t, 0, code, "run() without OPENAI_BASE_URL = %d; want 0", code)
	for _, want := range []string{"OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "go run ./cmd/rgeval -model openai"} {
		assert.Contains(t, stdout.String(), want)
	}
	assert.Empty(t, stderr.String())

	stdout.Reset()
	code = run(context.Background(), nil, env(nil), &stdout, &stderr)
	assert.Equal(t, 0, code, "openai is the default model")
	assert.Contains(t, stdout.String(), "OPENAI_BASE_URL")
}

// replayServer is an OpenAI-compatible endpoint that answers every chat
// completion request with the next turn of the case whose task is the
// request's first user message: each case's well-behaved script, replayed
// through the official openai-go client, the adapter and the wire format.
func replayServer(t *testing.T, cases []*eval.Case) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	byTask := map[string]*eval.Case{}
	for _, c := range cases {
		require.NotContains(t, byTask, c.Task, "tasks are distinct")
		byTask[c.Task] = c
	}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools  []json.RawMessage `json:"tools"`
			Stream bool              `json:"stream"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var task string
		turn := 0
		for _, m := range body.Messages {
			switch m.Role {
			case "user":
				if task == "" {
					_ = json.Unmarshal(m.Content, &task)
				}
			case "assistant":
				turn++
			}
		}
		c, ok := byTask[task]
		if !ok || turn >= len(c.Script) || len(body.Tools) == 0 {
			http.Error(w, fmt.Sprintf(`{"error":{"message":"no turn %d for task %q","type":"invalid_request_error"}}`, turn, task), http.StatusBadRequest)
			return
		}
		if body.Stream { // the adapter streams: the same turn as its event stream
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(chattest.OpenAIStream(string(completion(turn, c.Script[turn], body.Model)))))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(completion(turn, c.Script[turn], body.Model))
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// completion renders a scripted turn as a chat completion body.
func completion(n int, turn eval.Turn, model string) []byte {
	calls := make([]map[string]any, 0, len(turn.Calls))
	for _, c := range turn.Calls {
		args := string(c.Args)
		if c.RawArgs != nil {
			args = *c.RawArgs
		}
		calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": args}})
	}
	msg := map[string]any{"role": "assistant", "content": turn.Text}
	finish := "stop"
	if len(calls) > 0 {
		msg["tool_calls"], finish = calls, "tool_calls"
	}
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("chatcmpl-eval-%d", n), "object": "chat.completion", "created": 1741571000 + n, "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
	})
	return b
}

// The whole set through the command, the official client and a local
// server replaying each case's script gives the same report as the
// scripted run: the real-model path changes nothing in the scoring.
func TestReplayedSetMatchesScriptedReport(t *testing.T) {
	srv, requests := replayServer(t, eval.Builtin())
	getenv := env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/", "OPENAI_MODEL": "replay"})
	m, name, err := command(getenv).Models["openai"](context.Background())
	require.NoError(t, err)
	assert.Equal(t, "replay at "+srv.URL+"/v1/", name)

	ctx := context.Background()
	replayed, err := eval.Run(ctx, eval.Builtin(), eval.Options{Model: func(*eval.Case) react.Model { return m }, ModelName: name, Replay: true})
	require.NoError(t, err)
	scripted, err := eval.Run(ctx, eval.Builtin(), eval.Options{ModelName: name})
	require.NoError(t, err)

	assert.True(t, replayed.Passed(), "every case passes end to end through the real client:\n%s", md(t, replayed))
	assert.Equal(t, md(t, scripted), md(t, replayed), "the same report")
	for i := range scripted.Cases {
		assert.Equal(t, scripted.Cases[i].Calls, replayed.Cases[i].Calls, "%s: the same call reports", scripted.Cases[i].ID)
	}
	assert.Positive(t, requests.Load())
}

// The command end to end: flags, the report on stdout, the JSON file.
func TestCommandAgainstReplayServer(t *testing.T) {
	var cases []*eval.Case
	for _, c := range eval.Builtin() {
		if c.Category == eval.IntegrationFailure {
			cases = append(cases, c)
		}
	}
	srv, _ := replayServer(t, cases)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-model", "openai", "-category", "integration_failure", "-strict"},
		env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/"}), &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "model qwen3:8b at "+srv.URL)
	assert.Contains(t, out, "| 6 final integration | 10 | 10/10 (100.0%)")
}

// An endpoint that fails every request: each case records the model
// error, the report says so, and -strict fails.
func TestFailingEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-case", "normal-01-order-status", "-strict"},
		env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/"}), &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout.String(), "ended interrupted")
	assert.Contains(t, stdout.String(), "429")
	assert.True(t, strings.Contains(stderr.String(), "0 of 1 cases passed end to end"), stderr.String())
}

func md(t *testing.T, r *eval.Report) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, r.Markdown(&b))
	return b.String()
}
