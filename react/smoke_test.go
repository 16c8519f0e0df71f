package react_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

func TestSmoke(t *testing.T) {
	list := newFake("list_sites", tool.Read, ok(map[string]any{"sites": []any{map[string]any{"id": 7}}}))
	m := newScript(
		turn(call("c1", "list_sites", `{}`)),
		turn(call("c2", react.ToolOutputSet, `{"key":"site","value":7,"sourceType":"tool_result","sourceRef":"c1"}`)),
		turn(call("c3", react.ToolFinish, `{}`)),
	)
	e := newEnv(t, m, list.Tool)
	res := e.run(react.Node{Name: "n", Tools: []string{"list_sites"}, Outputs: []react.Output{{Key: "site", Required: true}}}, "list my sites")
	for _, msg := range res.Transcript {
		t.Logf("%s %s %s", msg.Role, msg.ToolCallID, msg.Content)
	}
	require.Equal(t, react.Finished, res.Status)
	assert.JSONEq(t, "7", string(res.Outputs["site"].Value))
	requirePaired(t, res.Transcript)
	t.Log(e.rec.kinds())
	t.Log(m.requests()[2].Messages[0].Content)
}
