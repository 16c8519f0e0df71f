package eval_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

// A ModelJudge sends the rubric as the system message, the task, the
// evidence and the answer as JSON, offers one tool, verdict, and reads the
// verdict only from that call (or a JSON object as the whole text).
func TestModelJudge(t *testing.T) {
	var seen react.Request
	reply := func(r react.Response) react.Model {
		return reacttest.Func(func(req react.Request) react.Response { seen = req; return r })
	}
	req := eval.JudgeRequest{Case: "x", Task: "Is order 7 on time?", Evidence: []string{`{"status":"cancelled"}`},
		Answer: "Order 7 is on time.", Rubric: eval.DefaultRubric}
	tests := []struct {
		name    string
		resp    react.Response
		want    eval.JudgeVerdict
		wantErr string
	}{
		{"a verdict call", reacttest.Calls(react.ToolCall{ID: "v", Name: "verdict", Args: json.RawMessage(`{"supported":false,"unsupported":["on time"],"reason":"the order was cancelled"}`)}),
			eval.JudgeVerdict{Supported: false, Unsupported: []string{"on time"}, Reason: "the order was cancelled"}, ""},
		{"a JSON text", react.Response{Text: ` {"supported":true} `}, eval.JudgeVerdict{Supported: true}, ""},
		{"free text", react.Response{Text: "Looks fine to me."}, eval.JudgeVerdict{}, "no verdict call"},
		{"another tool", reacttest.Calls(react.ToolCall{ID: "v", Name: "other", Args: json.RawMessage(`{}`)}), eval.JudgeVerdict{}, "no verdict call"},
		{"no supported", reacttest.Calls(react.ToolCall{ID: "v", Name: "verdict", Args: json.RawMessage(`{"reason":"hm"}`)}), eval.JudgeVerdict{}, "supported true or false"},
		{"not an object", reacttest.Calls(react.ToolCall{ID: "v", Name: "verdict", Args: json.RawMessage(`[1]`)}), eval.JudgeVerdict{}, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := eval.ModelJudge(reply(tt.resp)).Review(context.Background(), req)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			require.Len(t, seen.Messages, 2)
			assert.Equal(t, react.RoleSystem, seen.Messages[0].Role)
			assert.Equal(t, eval.DefaultRubric, seen.Messages[0].Content)
			assert.JSONEq(t, `{"task":"Is order 7 on time?","evidence":["{\"status\":\"cancelled\"}"],"answer":"Order 7 is on time."}`, seen.Messages[1].Content)
			require.Len(t, seen.Tools, 1)
			assert.Equal(t, "verdict", seen.Tools[0].Name)
		})
	}
	_, err := eval.ModelJudge(reacttest.Script()).Review(context.Background(), req)
	assert.ErrorContains(t, err, "eval: judge:", "a model error is the judge's error")
	assert.Panics(t, func() { eval.ModelJudge(nil) })
}

// The judge is off by default, reviews every answered case when set, and
// is reported apart: its verdict never changes a deterministic check; an
// error is "not judged", not a failure.
func TestRun_Judge(t *testing.T) {
	cases := []*eval.Case{builtin(t, "integration-09-status-word"), builtin(t, "permission-10-awaits-approval"), builtin(t, "normal-01-order-status")}
	rep, err := eval.Run(context.Background(), cases, eval.Options{})
	require.NoError(t, err)
	assert.False(t, rep.Judged)
	for _, c := range rep.Cases {
		assert.Nil(t, c.Judge)
	}

	var asked []eval.JudgeRequest
	judge := judgeFunc(func(r eval.JudgeRequest) eval.JudgeVerdict {
		asked = append(asked, r)
		return eval.JudgeVerdict{Supported: !strings.Contains(r.Answer, "DHL"), Unsupported: []string{"DHL"}}
	})
	rep, err = eval.Run(context.Background(), cases, eval.Options{Judge: judge, Rubric: "be strict"})
	require.NoError(t, err)
	assert.True(t, rep.Judged)
	require.Len(t, asked, 2, "the suspended run has no answer to judge")
	assert.Equal(t, "integration-09-status-word", asked[0].Case)
	assert.Equal(t, "be strict", asked[0].Rubric)
	assert.Contains(t, asked[0].Evidence[0], "cancelled", "the tool messages are the evidence")
	assert.NotContains(t, strings.Join(asked[0].Evidence, " "), "Is my order 7781 on time?", "the task is apart")
	assert.Equal(t, eval.Tally{Passed: 1, Total: 2}, rep.Judge)
	assert.True(t, rep.Passed(), "the judge's verdicts never fail the deterministic report")
	assert.Contains(t, markdown(t, rep), "answers supported: 1/2 (50.0%)")

	failing := eval.Options{Judge: judgeErr{}}
	rep, err = eval.Run(context.Background(), cases[:1], failing)
	require.NoError(t, err)
	require.NotNil(t, rep.Cases[0].Judge)
	assert.Equal(t, "unreachable", rep.Cases[0].Judge.Error)
	assert.Equal(t, eval.Tally{}, rep.Judge, "a judge error is not judged")
	assert.Contains(t, markdown(t, rep), "not judged")
}

type judgeErr struct{}

func (judgeErr) Review(context.Context, eval.JudgeRequest) (eval.JudgeVerdict, error) {
	return eval.JudgeVerdict{}, errors.New("unreachable")
}
