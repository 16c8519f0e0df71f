package reacttest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

func userReq(text string) react.Request {
	return react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: text}}}
}

func TestScriptReplaysInOrderThenFails(t *testing.T) {
	m := reacttest.Script(
		reacttest.Calls(reacttest.Call("c1", "list_spaces", `{}`)),
		reacttest.Text("thinking"),
	)
	ctx := context.Background()
	require.Equal(t, 2, m.Remaining())

	r1, err := m.Generate(ctx, userReq("hi"))
	require.NoError(t, err)
	assert.Equal(t, []react.ToolCall{{ID: "c1", Name: "list_spaces", Args: []byte(`{}`)}}, r1.ToolCalls)

	r2, err := m.Generate(ctx, userReq("hi"))
	require.NoError(t, err)
	assert.Equal(t, "thinking", r2.Text)
	assert.Equal(t, 0, m.Remaining())

	_, err = m.Generate(ctx, react.Request{Messages: []react.Message{
		{Role: react.RoleTool, ToolName: "list_spaces", Content: "spaces listed"},
	}})
	require.ErrorIs(t, err, reacttest.ErrScriptExhausted)
	assert.Contains(t, err.Error(), "turn 3 requested, the script has 2 turn(s)")
	assert.Contains(t, err.Error(), "last message: tool list_spaces: spaces listed")
	assert.Equal(t, 3, m.Turns(), "Turns() counts the failed turn too")
}

func TestZeroModelIsExhausted(t *testing.T) {
	var m reacttest.Model
	_, err := m.Generate(context.Background(), react.Request{})
	require.ErrorIs(t, err, reacttest.ErrScriptExhausted)
	assert.Contains(t, err.Error(), "last message: (none)")
}

func TestExhaustedErrorTruncatesLongMessages(t *testing.T) {
	m := reacttest.Script()
	_, err := m.Generate(context.Background(), userReq(strings.Repeat("é", 500)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "last message: user: "+strings.Repeat("é", 200)+"…")
	assert.NotContains(t, err.Error(), strings.Repeat("é", 201))
}

func TestStepsMixFixedAndComputedTurns(t *testing.T) {
	boom := errors.New("model unavailable")
	m := reacttest.Steps(
		reacttest.Reply(reacttest.Calls(reacttest.Call("c1", "list_spaces", ""))),
		func(req react.Request) (react.Response, error) {
			msgs := reacttest.LastToolMessages(req)
			return reacttest.Text("saw " + msgs[0].Content), nil
		},
		func(react.Request) (react.Response, error) { return react.Response{}, boom },
	)
	ctx := context.Background()
	r, err := m.Generate(ctx, userReq("go"))
	require.NoError(t, err)
	assert.Nil(t, r.ToolCalls[0].Args, `Call(.., "") = non-nil args; want nil`)

	r, err = m.Generate(ctx, react.Request{Messages: []react.Message{
		{Role: react.RoleUser, Content: "go"},
		{Role: react.RoleAssistant, ToolCalls: r.ToolCalls},
		{Role: react.RoleTool, ToolCallID: "c1", ToolName: "list_spaces", Content: "2 spaces"},
	}})
	require.NoError(t, err)
	assert.Equal(t, "saw 2 spaces", r.Text)

	_, err = m.Generate(ctx, userReq("go"))
	require.ErrorIs(t, err, boom, "a step's error is returned as is")
}

func TestFuncIsNeverExhausted(t *testing.T) {
	m := reacttest.Func(func(req react.Request) react.Response {
		return reacttest.Text(req.Messages[0].Content)
	})
	for i := range 5 {
		r, err := m.Generate(context.Background(), userReq("x"))
		require.NoError(t, err, "turn %d", i+1)
		assert.Equal(t, "x", r.Text)
	}
	assert.Equal(t, -1, m.Remaining())
	assert.Equal(t, 5, m.Turns())
}

func TestConstructorsRefuseNil(t *testing.T) {
	assert.Panics(t, func() { reacttest.Func(nil) })
	assert.Panics(t, func() { reacttest.Respond("x", nil) })
	assert.Panics(t, func() { reacttest.BusinessFail("x", "sys", 0, "ok") })
}

func TestGenerateHonoursCancellation(t *testing.T) {
	m := reacttest.Script(reacttest.Text("only"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Generate(ctx, userReq("x"))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, m.Turns(), "a cancelled request is neither recorded nor consumed")
	r, err := m.Generate(context.Background(), userReq("x"))
	require.NoError(t, err)
	assert.Equal(t, "only", r.Text)
}

func TestRequestsAreDeepCopies(t *testing.T) {
	m := reacttest.Script(reacttest.Text("a"))
	req := react.Request{
		Messages: []react.Message{
			{Role: react.RoleSystem, Content: "rules"},
			{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{{ID: "c1", Name: "t", Args: []byte(`{"a":1}`)}}},
		},
		Tools: []react.ToolSpec{{Name: "t"}},
	}
	_, err := m.Generate(context.Background(), req)
	require.NoError(t, err)

	// The loop reuses its slices between rounds: overwrite everything.
	req.Messages[0].Content = "changed"
	req.Messages[1].ToolCalls[0].Args[2] = 'X'
	req.Tools[0].Name = "u"

	got := m.Requests()
	require.Len(t, got, 1)
	assert.Equal(t, "rules", got[0].Messages[0].Content)
	assert.Equal(t, `{"a":1}`, string(got[0].Messages[1].ToolCalls[0].Args))
	assert.Equal(t, "t", got[0].Tools[0].Name)
}

func TestResponsesAreCopies(t *testing.T) {
	turn := reacttest.Calls(reacttest.Call("c1", "t", `{"a":1}`))
	m := reacttest.Script(turn, turn)
	r, err := m.Generate(context.Background(), userReq("x"))
	require.NoError(t, err)
	r.ToolCalls[0].Args[2] = 'X'
	r.ToolCalls[0].ID = "mutated"
	r, err = m.Generate(context.Background(), userReq("x"))
	require.NoError(t, err)
	assert.Equal(t, react.ToolCall{ID: "c1", Name: "t", Args: []byte(`{"a":1}`)}, r.ToolCalls[0])
}

func TestTurnHasTextAndCalls(t *testing.T) {
	r := reacttest.Turn("let me look", reacttest.Call("c1", "t", `{}`))
	assert.Equal(t, "let me look", r.Text)
	assert.Len(t, r.ToolCalls, 1)
}

func TestConcurrentGenerateServesEachTurnOnce(t *testing.T) {
	const n = 50
	turns := make([]react.Response, n)
	for i := range turns {
		turns[i] = reacttest.Text(strings.Repeat("x", i+1))
	}
	m := reacttest.Script(turns...)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	for range n {
		wg.Go(func() {
			r, err := m.Generate(context.Background(), userReq("x"))
			assert.NoError(t, err)
			mu.Lock()
			seen[r.Text] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.Len(t, seen, n, "every turn served exactly once")
	assert.Len(t, m.Requests(), n)
}

func TestRequestHelpers(t *testing.T) {
	req := react.Request{Messages: []react.Message{
		{Role: react.RoleSystem, Content: "rules"},
		{Role: react.RoleUser, Content: "task"},
		{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{{ID: "c1"}}},
		{Role: react.RoleTool, ToolCallID: "c1", Content: "first"},
		{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{{ID: "c1"}, {ID: "c2"}}},
		{Role: react.RoleTool, ToolCallID: "c1", Content: "second"},
		{Role: react.RoleTool, ToolCallID: "c2", Content: "third"},
		{Role: react.RoleSystem, Content: "phase"},
	}}
	tests := []struct {
		name, reason string
		got, want    any
	}{
		{"LastToolMessages", "only the tool messages after the last assistant turn",
			contents(reacttest.LastToolMessages(req)), []string{"second", "third"}},
		{"LastToolMessages/none", "no assistant turn yet",
			reacttest.LastToolMessages(userReq("x")), []react.Message(nil)},
		{"ToolMessage", "the latest answer to a reused call id wins",
			mustTool(t, req, "c1"), "second"},
		{"SystemText", "every system message, in order",
			reacttest.SystemText(req), "rules\nphase"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.got, "%s = %v; want %v (%s)", tt.name, tt.got, tt.want, tt.reason)
	}
	_, ok := reacttest.ToolMessage(req, "c9")
	assert.False(t, ok, "ToolMessage(c9) found a message; want none")
}

func contents(msgs []react.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

func mustTool(t *testing.T, req react.Request, id string) string {
	t.Helper()
	m, ok := reacttest.ToolMessage(req, id)
	require.True(t, ok)
	return m.Content
}

func TestBuiltinCalls(t *testing.T) {
	tests := []struct {
		name, reason string
		call         react.ToolCall
		tool, args   string
	}{
		{"approval", "tool and reason", reacttest.Approval("a1", "create_site", "the user asked"),
			react.ToolApproval, `{"tool":"create_site","reason":"the user asked"}`},
		{"approval/no reason", "reason left out when empty", reacttest.Approval("a1", "create_site", ""),
			react.ToolApproval, `{"tool":"create_site"}`},
		{"follow-up", "the question", reacttest.FollowUp("f1", "Which space?"),
			react.ToolFollowUp, `{"question":"Which space?"}`},
		{"finish", "summary", reacttest.Finish("d1", "done"), react.ToolFinish, `{"summary":"done"}`},
		{"finish/empty", "no summary", reacttest.Finish("d1", ""), react.ToolFinish, `{}`},
		{"fail", "reason", reacttest.FailNode("x1", "declined"), react.ToolFail, `{"reason":"declined"}`},
		{"output set", "all four fields",
			reacttest.OutputSet("o1", "site_id", "site-1", react.SourceToolResult, "c5"),
			react.ToolOutputSet, `{"key":"site_id","value":"site-1","sourceType":"tool_result","sourceRef":"c5"}`},
		{"output set/no source", "source type and ref left out",
			reacttest.OutputSet("o1", "n", 3, 0, ""), react.ToolOutputSet, `{"key":"n","value":3}`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.tool, tt.call.Name, "%s: tool (%s)", tt.name, tt.reason)
		assert.JSONEq(t, tt.args, string(tt.call.Args), "%s: args (%s)", tt.name, tt.reason)
	}
	assert.Panics(t, func() { reacttest.OutputSet("o1", "k", make(chan int), react.SourceModel, "") })
}
