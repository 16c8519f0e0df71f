package react_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
)

func TestCutOff(t *testing.T) {
	for _, tt := range []struct {
		reason string
		want   bool
		why    string
	}{
		{"length", true, "OpenAI Chat Completions and compatible servers"},
		{"max_tokens", true, "Anthropic Messages, Bedrock Converse"},
		{"MAX_TOKENS", true, "Gemini"},
		{"max_output_tokens", true, "the Responses API's incomplete reason"},
		{"model_context_window_exceeded", true, "the context window ended the answer"},
		{"Length", true, "case is ignored"},
		{"stop", false, "a natural end"},
		{"tool_calls", false, "OpenAI's end for calls"},
		{"tool_use", false, "Anthropic's end for calls"},
		{"STOP", false, "Gemini's natural end"},
		{"content_filter", false, "a filter is not the output limit"},
		{"", false, "no reason given"},
		{"max_tokens ", false, "only the API's exact words"},
	} {
		assert.Equal(t, tt.want, react.CutOff(tt.reason), "CutOff(%q): %s", tt.reason, tt.why)
	}
}

// A turn that ended at the output limit runs none of its calls, even when
// their arguments parse: the write would run with half its arguments.
func TestCutOffTurnRunsNoCall(t *testing.T) {
	for _, reason := range []string{"length", "max_tokens", "MAX_TOKENS", "max_output_tokens"} {
		t.Run(reason, func(t *testing.T) {
			list, _, create := sitesTools()
			cut := turn(call("a", "list_sites", `{}`), call("b", "create_site", `{"q":"trunc"}`))
			cut.FinishReason = reason
			m := newScript(cut, turn(finish("f")))
			e := newEnv(t, m, list.Tool, create.Tool)
			res := e.run(react.Node{Tools: []string{"list_sites", "create_site"}}, "make a site")
			require.Equal(t, react.Finished, res.Status)
			requirePaired(t, res.Transcript)
			assert.Equal(t, 0, list.executions(), "a read of a cut-off turn does not run either")
			assert.Equal(t, 0, create.executions(), "the cut-off write never runs")
			tools := e.rec.of("tool")
			require.NotEmpty(t, tools)
			assert.Equal(t, "REJECTED TOOL_CALL_CUT_OFF", tools[0].Outcome+" "+tools[0].Code)
			assert.Equal(t, "the call of list_sites was not run: the turn ended at the output limit ("+reason+
				"), so its arguments may be incomplete. Next: call list_sites again with shorter arguments, or with fewer calls in one turn; "+
				"if the call cannot be shorter, tell the user with builtin_node_follow_up that the model's output limit must be raised",
				toolMessage(t, res.Transcript, "a").Content)
			assert.Contains(t, toolMessage(t, res.Transcript, "b").Content, "create_site was not run", "the rest of the turn is skipped")
			assert.Equal(t, 1, len(e.rec.of("stall")), "a rejection stalls once")
			assert.Equal(t, react.CallInvalidArgs, res.Calls[0].Call, "the arguments were not complete")
		})
	}
}

// The same turn with a natural finish reason runs its calls: the rule
// keys on the finish reason alone.
func TestNotCutOffRuns(t *testing.T) {
	list, _, _ := sitesTools()
	whole := turn(call("a", "list_sites", `{}`))
	whole.FinishReason = "tool_use"
	e := newEnv(t, newScript(whole, turn(finish("f"))), list.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites"}}, "list")
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 1, list.executions())
}

// A run interrupted after a cut-off turn was received, before its calls
// were answered, still refuses them when resumed: the mark travels in the
// sealed snapshot.
func TestCutOffSurvivesResume(t *testing.T) {
	_, _, create := sitesTools()
	ctx, cancel := context.WithCancel(context.Background())
	m := newScript(func(react.Request) react.Response {
		cancel() // the host goes away as the turn arrives
		r := turn(call("w", "create_site", `{"name":"half`))
		r.ToolCalls[0].Args = []byte(`{"name":"ha"}`)
		r.FinishReason = "max_tokens"
		return r
	}, turn(finish("f")))
	e := newEnv(t, m, create.Tool)
	res, err := e.loop.Run(ctx, react.Node{Tools: []string{"create_site"}}, "make a site")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, react.Interrupted, res.Status)
	res, err = e.loop.Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 0, create.executions())
	assert.Contains(t, toolMessage(t, res.Transcript, "w").Content, "the turn ended at the output limit (max_tokens)")
}
