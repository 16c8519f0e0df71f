package react_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// The newcomer's run of the issue: the refund ran, then the model answered
// in plain text. Under the specification's rule (the default) those rounds
// are no progress and the run fails; its Failure says that the stalls were
// rounds without a tool call and names the remedy. With Node.TextAnswers
// the same text ends the run as the answer.
func TestTextAnswers(t *testing.T) {
	refund := newFake("refund", tool.Read, ok(map[string]any{"refunded": "A-17"}))
	answer := func() *script {
		return newScript(turn(call("c1", "refund", `{"order_id":"A-17"}`)),
			text("Your refund of order A-17 is done."), text("Done, as I said."), text("It is refunded."), text("Really."), text("Yes."))
	}
	for _, c := range []struct {
		name        string
		node        react.Node
		status      react.Status
		summary     string
		noToolCalls int
		remedy      []string
		why         string
	}{
		{name: "specification", node: react.Node{Tools: []string{"refund"}}, status: react.Failed, noToolCalls: 4,
			remedy: []string{react.ToolFinish, "Node.TextAnswers"}, why: "a text-only round is no progress: the run fails and says why"},
		{name: "text answers", node: react.Node{Tools: []string{"refund"}, TextAnswers: true}, status: react.Finished,
			summary: "Your refund of order A-17 is done.", why: "the text ends the turn as the answer"},
		{name: "text answers, outputs missing", node: react.Node{Tools: []string{"refund"}, TextAnswers: true, Outputs: []react.Output{{Key: "order", Required: true}}},
			status: react.Failed, noToolCalls: 4, remedy: []string{"order missing", react.ToolOutputSet}, why: "a text ends the turn only once every required output is set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, answer(), refund.Tool)
			res := e.run(c.node, "Refund order A-17.")
			require.Equal(t, c.status, res.Status, c.why)
			assert.Equal(t, c.summary, res.Summary)
			if c.status == react.Finished {
				assert.Nil(t, res.Failure)
				assert.Equal(t, react.GoalUnverified, res.Goal, "judged as for builtin_node_finish without required outputs")
				assert.Equal(t, []string{"started", "tool", "finished"}, e.rec.kinds())
				return
			}
			require.NotNil(t, res.Failure)
			assert.Equal(t, react.FailedNoProgress, res.Failure.Kind)
			assert.Equal(t, c.noToolCalls, res.Failure.NoToolCalls)
			assert.Contains(t, res.Failure.Reason, "4 consecutive rounds without progress (limit 3), 4 of them without a tool call")
			for _, want := range c.remedy {
				assert.Contains(t, res.Failure.Remedy, want)
			}
			assert.Equal(t, react.GoalUnmet, res.Goal)
			if c.node.TextAnswers {
				last := res.Transcript[len(res.Transcript)-1]
				assert.Equal(t, "the turn contained no tool call. Next: set order with builtin_output_set before you answer in text", last.Content,
					"the model is told which outputs are missing")
			}
		})
	}
}

// Stalls of another kind reset nothing of the count of text-only rounds,
// and progress resets it: the Failure counts only the rounds without a
// tool call of the streak that failed the run.
func TestNoToolCallsCountsTheFailingStreak(t *testing.T) {
	read := newFake("read", tool.Read, ok(map[string]any{"x": 1}))
	m := newScript(text("thinking"), turn(call("c1", "read", `{}`)), // a text round, then progress
		turn(call("c2", "nope", `{}`)), text("a"), turn(call("c3", "nope", `{}`)), text("b")) // REJECTED, text, REJECTED, text
	e := newEnv(t, m, read.Tool)
	res := e.run(react.Node{Tools: []string{"read"}}, "go")
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, 2, res.Failure.NoToolCalls, "the text round before the progress is not counted")
	assert.Contains(t, res.Failure.Reason, "2 of them without a tool call")
	assert.NotEmpty(t, res.Failure.Remedy)

	rejected := newScript(turn(call("c1", "nope", `{}`)), turn(call("c2", "nope", `{}`)), turn(call("c3", "nope", `{}`)), turn(call("c4", "nope", `{}`)))
	e = newEnv(t, rejected, read.Tool)
	res = e.run(react.Node{Tools: []string{"read"}}, "go")
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, 0, res.Failure.NoToolCalls)
	assert.Empty(t, res.Failure.Remedy, "rejected calls: no text-only remedy")
	assert.Equal(t, "4 consecutive rounds without progress (limit 3)", res.Failure.Reason)
}

// Text-only rounds counted before an interruption still count after the
// run is continued: the snapshot keeps them.
func TestNoToolCallsSurviveResume(t *testing.T) {
	m := newScript(text("hmm"), text("hmm"), errors.New("the model is down"), text("a"), text("b"))
	e := newEnv(t, m)
	res, err := e.loop.Run(context.Background(), react.Node{}, "refund my order")
	require.Error(t, err)
	require.Equal(t, react.Interrupted, res.Status)
	res, err = e.loop.Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, 4, res.Failure.NoToolCalls, "two before the interruption, two after")
}

// The system prompt says that a text answer ends the turn only with the
// option, also when one loop runs nodes of the same instructions with and
// without it, in either order (the loop keeps a node's prompt for the
// next run of the same instructions and option).
func TestTextAnswersRule(t *testing.T) {
	for _, order := range [][]bool{{false, true, false}, {true, false, true}} {
		m := newScript()
		for range order {
			m.turns = append(m.turns, newScript(turn(reacttest.Finish("c1", ""))).turns...)
		}
		e := newEnv(t, m)
		for i, opt := range order {
			e.run(react.Node{Instructions: "Help.", TextAnswers: opt}, "hi")
			sys := m.requests()[i].Messages[0].Content
			assert.Equal(t, opt, strings.Contains(sys, "answer the user in plain text without a tool call"), "order %v, run %d: TextAnswers %v", order, i, opt)
		}
	}
}

// With Node.TextAnswers, a text cut off at the model's output limit is not
// the answer: the run does not finish on it (the model is told to answer
// again, shorter) and finishes on the next, whole text; a model whose
// every answer is cut off fails the run with a remedy that names the
// output limit. Without the option nothing changes: a text-only round is
// no progress, cut off or not.
func TestTextAnswerCutOff(t *testing.T) {
	cut := func(s, reason string) react.Response { return react.Response{Text: s, FinishReason: reason} }
	node := react.Node{TextAnswers: true}
	for _, reason := range []string{"length", "max_tokens", "MAX_TOKENS", "max_output_tokens"} {
		t.Run(reason, func(t *testing.T) {
			e := newEnv(t, newScript(cut("Your refund of order A-17 is d", reason), cut("Refunded.", "stop")))
			res := e.run(node, "Refund order A-17.")
			require.Equal(t, react.Finished, res.Status)
			assert.Equal(t, "Refunded.", res.Summary, "the whole text is the answer, never the cut one")
			msgs := res.Transcript
			require.GreaterOrEqual(t, len(msgs), 3)
			assert.Equal(t, "the turn contained no tool call. Next: answer again, shorter: your answer was cut off at the model's output limit and did not reach the user",
				msgs[len(msgs)-2].Content)
		})
	}
	t.Run("every answer cut off", func(t *testing.T) {
		e := newEnv(t, newScript(cut("a", "length"), cut("b", "length"), cut("c", "length"), cut("d", "length")))
		res := e.run(node, "Refund order A-17.")
		require.Equal(t, react.Failed, res.Status)
		require.NotNil(t, res.Failure)
		assert.Equal(t, react.FailedNoProgress, res.Failure.Kind)
		assert.Equal(t, 4, res.Failure.NoToolCalls)
		assert.Contains(t, res.Failure.Remedy, "output limit")
		assert.NotContains(t, res.Failure.Remedy, "missing")
	})
	t.Run("a stop is an answer", func(t *testing.T) {
		e := newEnv(t, newScript(cut("Refunded.", "stop")))
		res := e.run(node, "Refund order A-17.")
		require.Equal(t, react.Finished, res.Status)
		assert.Equal(t, "Refunded.", res.Summary)
	})
}
