package task_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/task"
)

// judgeModel answers every request with text (or fails with err) and
// records what it was asked.
type judgeModel struct {
	text string
	err  error
	reqs []react.Request
}

func (j *judgeModel) Generate(_ context.Context, req react.Request) (react.Response, error) {
	j.reqs = append(j.reqs, req)
	return react.Response{Text: j.text}, j.err
}

// endCheck is the check at the finish of a step that called search twice,
// once with success (c1) and once with a failure (c2).
func endCheck() react.Check {
	return react.Check{
		Node: "research", End: true, Summary: "Bern has 3 museums.",
		Calls: []react.CallReport{
			{CallID: "c1", Tool: "search", Outcome: outcome.Success},
			{CallID: "c2", Tool: "search", Outcome: outcome.Failed, Code: errcode.ToolTimeout},
			{CallID: "f", Tool: react.ToolOutputSet, Builtin: true, Outcome: outcome.Success},
		},
		Transcript: []react.Message{
			{Role: react.RoleUser, Content: "How many museums does Bern have?"},
			{Role: react.RoleTool, ToolCallID: "c1", ToolName: "search", Content: `search succeeded {"museums":3}`},
			{Role: react.RoleTool, ToolCallID: "c2", ToolName: "search", Content: "search did not answer in time", IsError: true},
			{Role: react.RoleTool, ToolCallID: "f", ToolName: react.ToolOutputSet, Content: "output museums is set"},
		},
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		reason string
		answer string
		want   react.StepVerdict
	}{
		{"a satisfied verdict citing a result of the step", `{"status":"satisfied","reason":"the count is sourced","evidence":["c1"]}`,
			react.StepVerdict{Status: react.StepSatisfied, Reason: "the count is sourced", Evidence: []string{"c1"}}},
		{"wrapped in a code fence and a sentence", "Here is my verdict:\n```json\n{\"status\":\"satisfied\",\"reason\":\"ok\",\"evidence\":[\"c1\",\"c1\"]}\n```",
			react.StepVerdict{Status: react.StepSatisfied, Reason: "ok", Evidence: []string{"c1"}}},
		{"an insufficient verdict stands", `{"status":"insufficient","reason":"only one source","evidence":["c1"]}`,
			react.StepVerdict{Status: react.StepInsufficient, Reason: "only one source", Evidence: []string{"c1"}}},
		{"satisfied without a citation is not a pass", `{"status":"satisfied","reason":"looks good","evidence":[]}`,
			react.StepVerdict{Status: react.StepInsufficient, Reason: "the judge cited no result of the step"}},
		{"a citation of a failed call, a built-in or an invented id is no citation", `{"status":"satisfied","reason":"x","evidence":["c2","f","c99"]}`,
			react.StepVerdict{Status: react.StepInsufficient, Reason: "the judge cited no result of the step"}},
		{"free text is unreadable", "Looks great to me!",
			react.StepVerdict{Status: react.StepInsufficient, Reason: "the judge's answer could not be read: no JSON object"}},
		{"an unknown status", `{"status":"done","reason":"x","evidence":["c1"]}`,
			react.StepVerdict{Status: react.StepInsufficient, Reason: "the judge's answer could not be read: unknown status"}},
		{"a status that is no verdict", `{"status":"in_progress","evidence":["c1"]}`,
			react.StepVerdict{Status: react.StepInsufficient, Reason: "the judge's answer could not be read: unknown status"}},
		{"a broken object", `{"status":"satisfied",`,
			react.StepVerdict{Status: react.StepInsufficient, Reason: "the judge's answer could not be read: not a JSON object with status, reason and evidence"}},
	}
	for _, tt := range tests {
		m := &judgeModel{text: tt.answer}
		j := &task.Judge{Model: m, Rubric: "the count of museums comes from a search result"}
		v, err := j.Verify(context.Background(), endCheck())
		require.NoError(t, err)
		assert.Equalf(t, tt.want, v, "%s", tt.reason)
	}
	m := &judgeModel{text: `{"status":"satisfied","evidence":["c1"]}`}
	j := &task.Judge{Model: m, Rubric: "RUBRIC-X"}
	_, err := j.Verify(context.Background(), endCheck())
	require.NoError(t, err)
	require.Len(t, m.reqs, 1)
	assert.Contains(t, m.reqs[0].Messages[0].Content, "Rubric: RUBRIC-X")
	user := m.reqs[0].Messages[1].Content
	assert.Contains(t, user, "Task: How many museums does Bern have?")
	assert.Contains(t, user, `[c1] search: search succeeded {"museums":3}`)
	assert.NotContains(t, user, "output museums is set", "built-in results are no evidence")
	assert.Contains(t, user, "The step's answer: Bern has 3 museums.")
	assert.Empty(t, m.reqs[0].Tools, "the judge is offered no tool")

	v, err := j.Verify(context.Background(), react.Check{Node: "research"})
	require.NoError(t, err)
	assert.Equal(t, react.StepNone, v.Status, "no opinion after a tool result")
	_, err = (&task.Judge{Model: &judgeModel{err: errors.New("503")}, Rubric: "r"}).Verify(context.Background(), endCheck())
	assert.ErrorContains(t, err, "503", "a model error interrupts the run")
	_, err = (&task.Judge{Rubric: "r"}).Verify(context.Background(), endCheck())
	assert.Error(t, err)

	zh := &judgeModel{text: "not json"}
	v, err = (&task.Judge{Model: zh, Rubric: "来源可查", Lang: prompt.Chinese}).Verify(context.Background(), endCheck())
	require.NoError(t, err)
	assert.Equal(t, "评审的回答无法读取：no JSON object", v.Reason)
	assert.Contains(t, zh.reqs[0].Messages[0].Content, "评审标准：来源可查")
}

func TestAllOf(t *testing.T) {
	verdict := func(s react.StepStatus, ev ...string) react.Verifier {
		return react.VerifierFunc(func(context.Context, react.Check) (react.StepVerdict, error) {
			return react.StepVerdict{Status: s, Reason: s.String(), Evidence: ev}, nil
		})
	}
	failing := react.VerifierFunc(func(context.Context, react.Check) (react.StepVerdict, error) {
		return react.StepVerdict{}, errors.New("down")
	})
	tests := []struct {
		reason string
		vs     []react.Verifier
		want   react.StepVerdict
		err    bool
	}{
		{"every one satisfied: satisfied with every citation", []react.Verifier{verdict(react.StepSatisfied, "a"), verdict(react.StepSatisfied, "b")},
			react.StepVerdict{Status: react.StepSatisfied, Evidence: []string{"a", "b"}}, false},
		{"code objects: the judge is not asked", []react.Verifier{verdict(react.StepInsufficient), failing},
			react.StepVerdict{Status: react.StepInsufficient, Reason: "insufficient"}, false},
		{"no opinion and satisfied: satisfied", []react.Verifier{verdict(react.StepNone), nil, verdict(react.StepSatisfied, "a")},
			react.StepVerdict{Status: react.StepSatisfied, Evidence: []string{"a"}}, false},
		{"nobody has an opinion", []react.Verifier{verdict(react.StepNone)}, react.StepVerdict{}, false},
		{"an error stops it", []react.Verifier{verdict(react.StepSatisfied), failing}, react.StepVerdict{}, true},
	}
	for _, tt := range tests {
		v, err := task.AllOf(tt.vs...).Verify(context.Background(), react.Check{})
		assert.Equalf(t, tt.err, err != nil, "%s", tt.reason)
		assert.Equalf(t, tt.want, v, "%s", tt.reason)
	}
}

// FuzzJudgeAnswer: whatever a judge model answers, the verdict is a
// verdict (never satisfied without a citation of the step's results) and
// reading it never panics.
func FuzzJudgeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"status":"satisfied","reason":"ok","evidence":["c1"]}`, "```json\n{\"status\":\"failed\"}\n```", `{`, `{"status":1}`,
		`{"status":"satisfied","evidence":"c1"}`, `{"status":"satisfied","evidence":["c1"],"status":"failed"}`, "\xff{\"status\":\"blocked\"}", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		j := &task.Judge{Model: &judgeModel{text: answer}, Rubric: "r"}
		v, err := j.Verify(context.Background(), endCheck())
		if err != nil {
			t.Fatalf("Verify(%q) = %v; a judge's text is never an error", answer, err)
		}
		switch v.Status {
		case react.StepSatisfied:
			if len(v.Evidence) == 0 || strings.Join(v.Evidence, ",") != "c1" {
				t.Fatalf("Verify(%q) satisfied citing %q; want exactly the step's successful call c1", answer, v.Evidence)
			}
		case react.StepInsufficient, react.StepBlocked, react.StepFailed:
		default:
			t.Fatalf("Verify(%q) = status %v; want a verdict", answer, v.Status)
		}
		for _, e := range v.Evidence {
			if e != "c1" {
				t.Fatalf("Verify(%q) cites %q, which the step did not produce", answer, e)
			}
		}
	})
}
