package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

// A mediocre model behind an OpenAI-compatible endpoint: it plays each
// case's script, but for every other case answers in plain text first,
// and otherwise appends an invented figure to its final answer. No such
// case passes end to end, and each shows where it went wrong: the turn
// without a tool call as a protocol mistake of that case, the figure as an
// ungrounded claim.
func TestMediocreModelIsCaught(t *testing.T) {
	cases := eval.Builtin()
	byTask := map[string]*eval.Case{}
	textFirst := map[string]bool{}
	invents := map[string]bool{}
	for i, c := range cases {
		byTask[c.Task] = c
		if i%2 == 0 {
			textFirst[c.ID] = true
		} else if endsWithAnswer(c) {
			invents[c.ID] = true
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Stream bool `json:"stream"`
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
		c := byTask[task]
		if c == nil {
			http.Error(w, `{"error":{"message":"unknown task"}}`, http.StatusBadRequest)
			return
		}
		reply := func(turn int, next eval.Turn) {
			if body.Stream { // the adapter streams: the same turn as its event stream
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(chattest.OpenAIStream(string(completion(turn, next, body.Model)))))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(completion(turn, next, body.Model))
		}
		if textFirst[c.ID] {
			if turn == 0 {
				reply(turn, eval.Turn{Text: "Sure, I can help with that."})
				return
			}
			turn--
		}
		if turn >= len(c.Script) {
			http.Error(w, `{"error":{"message":"script over"}}`, http.StatusBadRequest)
			return
		}
		next := c.Script[turn]
		if invents[c.ID] {
			next = withInventedFigure(next)
		}
		reply(turn, next)
	}))
	defer srv.Close()
	m, _, err := command(env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/", "OPENAI_MODEL": "mediocre"})).Models["openai"](context.Background())
	require.NoError(t, err)
	rep, err := eval.Run(context.Background(), cases, eval.Options{Model: func(*eval.Case) react.Model { return m }, ModelName: "mediocre", Replay: true})
	require.NoError(t, err)

	for _, cr := range rep.Cases {
		switch {
		case textFirst[cr.ID]:
			assert.False(t, cr.EndToEnd, "%s: a plain-text first turn does not pass", cr.ID)
			require.NotEmpty(t, cr.Mistakes, cr.ID)
			assert.Equal(t, eval.ProtocolMistake{Kind: eval.MistakeNoCall, Turn: 1, Handled: true}, cr.Mistakes[0], "%s: the mistake, where it happened", cr.ID)
			assert.False(t, cr.Protocol.OK(), cr.ID)
		case invents[cr.ID]:
			assert.False(t, cr.EndToEnd, "%s: an invented figure does not pass", cr.ID)
			assert.Contains(t, cr.Ungrounded, "17.35", cr.ID)
			assert.NotEmpty(t, cr.Flagged, "%s: an invented figure is an unacceptable behaviour", cr.ID)
		}
	}
	assert.Less(t, rep.Total.EndToEnd.Passed, rep.Total.EndToEnd.Total)
	for _, x := range rep.Mistakes {
		if x.Mistake == eval.MistakeNoCall {
			assert.Equal(t, len(textFirst), x.Cases, "every plain-text first turn is counted in its case")
		}
	}
}

// endsWithAnswer reports whether c's script ends with a finish or a fail
// that carries text.
func endsWithAnswer(c *eval.Case) bool {
	last := c.Script[len(c.Script)-1]
	return slices.ContainsFunc(last.Calls, func(cs eval.CallSpec) bool {
		return cs.Name == react.ToolFinish || cs.Name == react.ToolFail
	})
}

// withInventedFigure appends a figure no tool gave to the summary or
// reason of a finish or fail call of turn.
func withInventedFigure(turn eval.Turn) eval.Turn {
	out := eval.Turn{Text: turn.Text}
	for _, cs := range turn.Calls {
		if cs.Name == react.ToolFinish || cs.Name == react.ToolFail {
			var args map[string]any
			if json.Unmarshal(cs.Args, &args) == nil {
				for _, k := range []string{"summary", "reason"} {
					if s, ok := args[k].(string); ok {
						args[k] = strings.TrimSpace(s) + " A fee of 17.35 EUR applies."
					}
				}
				cs.Args, _ = json.Marshal(args)
			}
		}
		out.Calls = append(out.Calls, cs)
	}
	return out
}

// -judge openai: a second OpenAI-compatible model reviews the answers
// with the rubric and answers through the verdict tool; the report shows
// its verdicts apart and -strict ignores them.
func TestJudgeAgainstAnEndpoint(t *testing.T) {
	cases := []*eval.Case{}
	for _, c := range eval.Builtin() {
		if c.ID == "integration-09-status-word" {
			cases = append(cases, c)
		}
	}
	replay, _ := replayServer(t, cases)
	var judged []string
	judge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) != 2 || len(body.Tools) != 1 {
			http.Error(w, `{"error":{"message":"bad judge request"}}`, http.StatusBadRequest)
			return
		}
		judged = append(judged, body.Model+": "+body.Tools[0].Function.Name+": "+body.Messages[1].Content)
		w.Header().Set("Content-Type", "application/json")
		args := `{"supported":false,"unsupported":["because the payment failed"],"reason":"the cause is stated by the tool"}`
		_, _ = fmt.Fprintf(w, `{"id":"j","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"v1","type":"function","function":{"name":"verdict","arguments":%q}}]}}]}`, body.Model, args)
	}))
	defer judge.Close()

	m, _, err := command(env(map[string]string{"OPENAI_BASE_URL": replay.URL + "/v1/"})).Models["openai"](context.Background())
	require.NoError(t, err)
	j, name, err := command(env(map[string]string{"OPENAI_BASE_URL": judge.URL + "/v1/", "OPENAI_JUDGE_MODEL": "judge-1"})).Judges["openai"](context.Background())
	require.NoError(t, err)
	assert.Equal(t, "judge-1 at "+judge.URL+"/v1/", name)
	rep, err := eval.Run(context.Background(), cases, eval.Options{Model: func(*eval.Case) react.Model { return m }, Replay: true, Judge: j})
	require.NoError(t, err)
	require.Len(t, judged, 1)
	assert.True(t, strings.HasPrefix(judged[0], "judge-1: verdict: "), judged[0])
	assert.Contains(t, judged[0], "cancelled", "the evidence reaches the judge")
	require.NotNil(t, rep.Cases[0].Judge)
	assert.Equal(t, []string{"because the payment failed"}, rep.Cases[0].Judge.Unsupported)
	assert.True(t, rep.Passed(), "the deterministic checks pass; the judge is reported apart")
	var b bytes.Buffer
	require.NoError(t, rep.Markdown(&b))
	assert.Contains(t, b.String(), "answers supported: 0/1 (0.0%)")

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-model", "scripted", "-judge", "openai"}, env(nil), &stdout, &stderr)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout.String(), "OPENAI_JUDGE_MODEL", "without an endpoint the judge explains what to set")
}
