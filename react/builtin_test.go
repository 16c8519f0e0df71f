package react_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// outcomeOf returns "OUTCOME CODE" of the tool event for callID.
func outcomeOf(t *testing.T, rec *recorder, callID string) string {
	t.Helper()
	for _, ev := range rec.of("tool") {
		if ev.CallID == callID {
			return ev.Outcome + " " + ev.Code
		}
	}
	t.Fatalf("no tool event for %s", callID)
	return ""
}

func TestApproval_NotGated(t *testing.T) {
	_, _, create := sitesTools()
	m := newScript(turn(call("a", react.ToolApproval, `{"tool":"create_site","reason":"the user asked"}`)), turn(finish("f")))
	e := newEnv(t, m, create.Tool)
	res := e.run(react.Node{Tools: []string{"create_site"}}, "create a site")
	assert.Equal(t, "REJECTED APPROVAL_NOT_GATED", outcomeOf(t, e.rec, "a"))
	assert.Equal(t, "approval was requested for create_site, but no call of a write tool is waiting for approval. Next: call the write tool directly; request approval only after the runtime stops it and asks for approval",
		toolMessage(t, res.Transcript, "a").Content)
	assert.Equal(t, []event{{Kind: "stall", Count: 1, Reason: "REJECTED", CallID: "a"}}, e.rec.of("stall"), "scenario 2: one stall")
}

// TestApproval_NamedToolRule walks the decision of §7.3 ("申请确认的工具名与被拦下
// 的不一致：下一步给出实际被拦下的写工具名（APPROVAL_TOOL_MISMATCH）；没有被拦下记录
// 或申请的不是写工具：下一步为先直接调用写工具（APPROVAL_NOT_GATED）") for every
// kind of name, with and without a write waiting, as docs/observation-contract.md
// records it.
func TestApproval_NamedToolRule(t *testing.T) {
	tests := []struct {
		name   string
		named  string
		gated  bool
		want   string
		reason string
	}{
		{"nothing gated, the write", "create_site", false, "REJECTED APPROVAL_NOT_GATED", "no stopped call: call the write first"},
		{"nothing gated, a read", "list_sites", false, "REJECTED APPROVAL_NOT_GATED", "no stopped call"},
		{"nothing gated, unknown", "create_website", false, "REJECTED APPROVAL_NOT_GATED", "no stopped call"},
		{"gated, a read tool", "list_sites", true, "REJECTED APPROVAL_NOT_GATED", "the requested tool is not a write tool"},
		{"gated, a built-in", react.ToolFinish, true, "REJECTED APPROVAL_NOT_GATED", "a built-in tool is not a write tool"},
		{"gated, unknown name", "create_website", true, "REJECTED APPROVAL_TOOL_MISMATCH", "a wrong name: the next step names the stopped write"},
		{"gated, another write", "delete_site", true, "REJECTED APPROVAL_TOOL_MISMATCH", "another write than the stopped one"},
		{"gated, the write", "create_site", true, "suspended", "the stopped write: the run suspends"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, _, create := sitesTools()
			del := newFake("delete_site", tool.Write, ok(nil))
			var turns []any
			if tc.gated {
				turns = append(turns, turn(call("w", "create_site", `{"name":"blog"}`)))
			}
			turns = append(turns, turn(call("a", react.ToolApproval, `{"tool":"`+tc.named+`"}`)), turn(finish("f")))
			e := newEnv(t, newScript(turns...), list.Tool, create.Tool, del.Tool)
			res := e.run(react.Node{Tools: []string{"list_sites", "create_site", "delete_site"}}, "create a site called blog")
			if tc.want == "suspended" {
				assert.Equalf(t, react.Suspended, res.Status, "approval of %s = %v; want the approval suspension (%s)", tc.named, res.Status, tc.reason)
				return
			}
			got := strings.TrimSpace(outcomeOf(t, e.rec, "a"))
			assert.Equalf(t, tc.want, got, "approval of %s (write waiting: %v) = %s; want %s (%s)", tc.named, tc.gated, got, tc.want, tc.reason)
		})
	}
}

func TestApproval_ToolMismatchNamesGatedTool(t *testing.T) {
	list, _, create := sitesTools()
	m := newScript(
		turn(call("w", "create_site", `{"name":"blog"}`)),
		turn(call("a", react.ToolApproval, `{"tool":"create_website"}`)),
		turn(call("b", react.ToolApproval, `{"tool":"list_sites"}`)),
		turn(call("c", react.ToolApproval, `{"tool":"create_site"}`)),
	)
	e := newEnv(t, m, list.Tool, create.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites", "create_site"}}, "create a site called blog")
	assert.Equal(t, "REJECTED APPROVAL_TOOL_MISMATCH", outcomeOf(t, e.rec, "a"))
	assert.Equal(t, "approval was requested for create_website, but the call waiting for approval is create_site. Next: call builtin_node_approval with tool create_site, the call that is waiting for approval",
		toolMessage(t, res.Transcript, "a").Content)
	assert.Equal(t, "REJECTED APPROVAL_NOT_GATED", outcomeOf(t, e.rec, "b"),
		"a read tool named while a write waits is NOT_GATED (§7.3: 申请的不是写工具), not a mismatch")
	require.Equal(t, react.Suspended, res.Status)
	require.NotNil(t, res.Suspension)
	assert.Equal(t, react.SuspendApproval, res.Suspension.Kind)
	assert.Equal(t, "c", res.Suspension.CallID)
	assert.Equal(t, "create_site", res.Suspension.Approval.Tool)
	assert.Equal(t, "w", res.Suspension.Approval.CallID)
	assert.JSONEq(t, `{"name":"blog"}`, string(res.Suspension.Approval.Args))
	assert.NotEmpty(t, res.Suspension.Approval.Fingerprint)
	assert.Equal(t, []string{"suspended"}, e.rec.kinds()[len(e.rec.kinds())-1:])
}

func TestFollowUp(t *testing.T) {
	m := newScript(
		turn(call("q1", react.ToolFollowUp, `{"question":"Which theme do you want?"}`)),
	)
	e := newEnv(t, m)
	res := e.run(react.Node{Outputs: []react.Output{{Key: "theme"}}}, "make me a site")
	require.Equal(t, react.Suspended, res.Status)
	assert.NotEmpty(t, res.Suspension.Ticket, "the suspension names itself")
	assert.Equal(t, &react.Suspension{Kind: react.SuspendFollowUp, CallID: "q1", Question: "Which theme do you want?", Ticket: res.Suspension.Ticket}, res.Suspension)
	assert.Len(t, toolMessages(res.Transcript), 0, "the answer is written on resume")

	m2 := newScript(
		turn(call("q2", react.ToolFollowUp, `{"question":"which theme do you want"}`)),
		turn(call("s", react.ToolOutputSet, `{"key":"theme","value":"the blue theme","sourceType":"user"}`)),
		turn(finish("f")),
	)
	res, err := e.again(m2).Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "the blue theme"))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status, "outputs: %v", res.Outputs)
	q1 := toolMessage(t, res.Transcript, "q1")
	assert.Equal(t, "the user answered: the blue theme", q1.Content)
	assert.False(t, q1.IsError)
	assert.Equal(t, "REJECTED FOLLOW_UP_ANSWERED", outcomeOf(t, e.rec, "q2"))
	assert.Equal(t, "the user already answered this question: the blue theme. Next: continue with the user's answer: the blue theme",
		toolMessage(t, res.Transcript, "q2").Content, "scenario 4: the observation carries the answer")
	assert.Equal(t, react.OutputValue{Value: []byte(`"the blue theme"`), Source: react.SourceUser}, res.Outputs["theme"], "the answer is part of the user's words")
}

func TestFollowUp_Ungrounded(t *testing.T) {
	_, _, create := sitesTools()
	m := newScript(
		turn(call("a", react.ToolFollowUp, `{"question":"Shall I create the site blog now? Please confirm."}`)),
		turn(call("b", react.ToolFollowUp, `{"question":"Create a site called blog!"}`)),
		turn(call("c", react.ToolFollowUp, `{"question":""}`)),
		turn(call("d", react.ToolFail, `{}`)),
	)
	e := newEnv(t, m, create.Tool)
	res := e.run(react.Node{Tools: []string{"create_site"}, NoProgressLimit: 5}, "create a site called blog")
	assert.Equal(t, "REJECTED FOLLOW_UP_UNGROUNDED", outcomeOf(t, e.rec, "a"))
	assert.Equal(t, "the follow-up does not ask for missing information: it asks the user to confirm a write. Next: call the write tool directly; the approval step confirms it with the user",
		toolMessage(t, res.Transcript, "a").Content)
	assert.Equal(t, "REJECTED FOLLOW_UP_UNGROUNDED", outcomeOf(t, e.rec, "b"))
	assert.Equal(t, "the follow-up does not ask for missing information: it repeats what the user already said. Next: call the write tool directly; the approval step confirms it with the user",
		toolMessage(t, res.Transcript, "b").Content)
	assert.Equal(t, "REJECTED ARG_REJECTED", outcomeOf(t, e.rec, "c"))
	assert.Equal(t, "argument question of builtin_node_follow_up was rejected: it is empty. Next: correct question (a non-empty text) and call builtin_node_follow_up again; if you cannot, ask the user with builtin_node_follow_up or call builtin_node_fail with the reason",
		toolMessage(t, res.Transcript, "c").Content)
	assert.Equal(t, &react.Failure{Kind: react.FailedByModel}, res.Failure)

	// Without a write tool, an echo is told to go on with the user's words.
	m = newScript(turn(call("a", react.ToolFollowUp, `{"question":"Create a site called blog?"}`)), turn(call("d", react.ToolFail, `{}`)))
	e = newEnv(t, m)
	res = e.run(react.Node{}, "create a site called blog")
	assert.Equal(t, "the follow-up does not ask for missing information: it repeats what the user already said. Next: continue with what the user already said, and ask only for information that is missing",
		toolMessage(t, res.Transcript, "a").Content)
}

// After an approved write failed, asking the user how to go on (retry
// included) is what NEXT_APPROVED_FAILED asks for: rule 1 is off.
func TestFollowUp_AfterFailedWriteIsGrounded(t *testing.T) {
	create := newFake("create_site", tool.Write, fails(tool.BusinessFailure("system.50001", "quota exceeded")))
	m := newScript(
		turn(call("w", "create_site", `{"name":"blog"}`)),
		turn(call("a", react.ToolApproval, `{"tool":"create_site"}`)),
	)
	e := newEnv(t, m, create.Tool)
	res := e.run(react.Node{Tools: []string{"create_site"}}, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	m2 := newScript(
		turn(call("w2", "create_site", `{"name":"blog"}`)),
		turn(call("q", react.ToolFollowUp, `{"question":"Creating the site failed (quota exceeded). Do you want me to retry?"}`)),
	)
	res, err := e.again(m2).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, "FAILED TOOL_BUSINESS_FAILED", outcomeOf(t, e.rec, "w2"))
	assert.Contains(t, toolMessage(t, res.Transcript, "w2").Content, "Next: use builtin_node_follow_up to tell the user why the approved create_site failed")
	require.Equal(t, react.Suspended, res.Status)
	assert.Equal(t, react.SuspendFollowUp, res.Suspension.Kind)
	assert.Equal(t, 1, create.executions())
}

func TestFinish_OutputsMissing(t *testing.T) {
	m := newScript(turn(finish("f")), turn(call("x", react.ToolFail, `{"reason":"cannot"}`)))
	e := newEnv(t, m)
	res := e.run(react.Node{Outputs: []react.Output{{Key: "site_url", Required: true}, {Key: "site_id", Required: true}, {Key: "note"}}}, "hi")
	assert.Equal(t, "REJECTED FINISH_OUTPUTS_MISSING", outcomeOf(t, e.rec, "f"))
	assert.Equal(t, "required outputs are not written: site_url, site_id. Next: set site_url, site_id with builtin_output_set first, or call builtin_node_fail if you cannot",
		toolMessage(t, res.Transcript, "f").Content)
	assert.Equal(t, react.Failed, res.Status)
}

// Every check of builtin_output_set, with its own code and next step.
func TestOutputSet_Rejections(t *testing.T) {
	list := newFake("list_sites", tool.Read, ok(map[string]any{"sites": []any{map[string]any{"id": 7, "url": "https://blog.example"}}}))
	broken := newFake("get_stats", tool.Read, fails(tool.Unavailable("down")))
	node := react.Node{Tools: []string{"list_sites", "get_stats"}, NoProgressLimit: 100, Outputs: []react.Output{
		{Key: "site_id", Required: true},
		{Key: "site_url"},
		{Key: "summary", Accepts: []react.SourceType{react.SourceModel}},
	}}
	const optional = "; site_url is optional: you may also skip it and call builtin_node_finish"
	tests := []struct {
		name string
		args string
		want string // "OUTCOME CODE"
		msg  string
		why  string
	}{
		{"undeclared key", `{"key":"site_name","value":"x","sourceType":"model"}`, "REJECTED OUTPUT_KEY_UNDECLARED",
			"output key site_name is not declared. Next: use one of the declared output keys: site_id, site_url, summary", "names the usable keys"},
		{"source type missing", `{"key":"site_id","value":7}`, "REJECTED OUTPUT_SOURCE_TYPE_MISSING",
			`output site_id has no known source type (got ""). Next: use one of the source types that site_id accepts: tool_result, user`, "names the accepted source types"},
		{"source type unknown", `{"key":"site_id","value":7,"sourceType":"database"}`, "REJECTED OUTPUT_SOURCE_TYPE_MISSING",
			"output site_id has no known source type (got database). Next: use one of the source types that site_id accepts: tool_result, user", "an unknown type is a missing one"},
		{"source type not accepted", `{"key":"site_id","value":7,"sourceType":"model"}`, "REJECTED OUTPUT_SOURCE_TYPE_NOT_ACCEPTED",
			"output site_id does not accept source type model. Next: use one of the source types that site_id accepts: tool_result, user", "model is not accepted by default"},
		{"source ref missing", `{"key":"site_id","value":7,"sourceType":"tool_result"}`, "REJECTED OUTPUT_SOURCE_REF_MISSING",
			"output site_id has no sourceRef. Next: set sourceRef to the call id of the successful result the value comes from", "tool_result needs a ref"},
		{"source ref unknown", `{"key":"site_id","value":7,"sourceType":"tool_result","sourceRef":"nope"}`, "REJECTED OUTPUT_SOURCE_REF_UNKNOWN",
			"source check failed: sourceRef nope of output site_id matches no recorded result. Next: set sourceRef to the call id of the successful result the value comes from", "the ref names no call"},
		{"source ref failed", `{"key":"site_id","value":7,"sourceType":"tool_result","sourceRef":"bad"}`, "REJECTED OUTPUT_SOURCE_REF_UNKNOWN",
			"source check failed: sourceRef bad of output site_id matches no recorded result. Next: set sourceRef to the call id of the successful result the value comes from", "a FAILED call is no source"},
		{"value mismatch", `{"key":"site_id","value":8,"sourceType":"tool_result","sourceRef":"l"}`, "REJECTED OUTPUT_VALUE_MISMATCH",
			"source check failed: the value of output site_id differs from l. Next: copy the value exactly as it appears in l", "the value is not in the result"},
		{"optional mismatch", `{"key":"site_url","value":"https://other.example","sourceType":"tool_result","sourceRef":"l"}`, "REJECTED OUTPUT_VALUE_MISMATCH",
			"source check failed: the value of output site_url differs from l. Next: copy the value exactly as it appears in l" + optional, "scenario 10: optional outputs may be skipped"},
		{"optional ref unknown", `{"key":"site_url","value":"x","sourceType":"tool_result","sourceRef":"web_site_list"}`, "REJECTED OUTPUT_SOURCE_REF_UNKNOWN",
			"source check failed: sourceRef web_site_list of output site_url matches no recorded result. Next: set sourceRef to the call id of the successful result the value comes from" + optional, "the case of §1"},
		{"user mismatch", `{"key":"site_id","value":"99","sourceType":"user"}`, "REJECTED OUTPUT_VALUE_MISMATCH",
			"source check failed: the value of output site_id differs from the user's own words. Next: copy the value exactly as it appears in the user's own words", "the user never said 99"},
		{"user object", `{"key":"site_id","value":{"id":7},"sourceType":"user"}`, "REJECTED OUTPUT_VALUE_MISMATCH",
			"source check failed: the value of output site_id differs from the user's own words. Next: copy the value exactly as it appears in the user's own words", "the user's words hold only scalars"},
		{"value missing", `{"key":"summary","sourceType":"model"}`, "REJECTED ARG_REJECTED",
			"argument value of builtin_output_set was rejected: it is empty. Next: correct value (a non-empty text) and call builtin_output_set again; if you cannot, ask the user with builtin_node_follow_up or call builtin_node_fail with the reason; summary is optional: you may also skip it and call builtin_node_finish", "a value is required"},
		{"not json", `{"key":`, "REJECTED ARG_JSON_INVALID", "", "arguments that do not decode"},
		{"from result", `{"key":"site_id","value":7,"sourceType":"tool_result","sourceRef":"l"}`, "SUCCESS ", "output site_id is set", "7 is a field of the result"},
		{"number as text", `{"key":"site_id","value":"7","sourceType":"tool_result","sourceRef":"l"}`, "SUCCESS ", "output site_id is set", `"7" matches 7`},
		{"object from result", `{"key":"site_id","value":{"url":"https://blog.example","id":7},"sourceType":"tool_result","sourceRef":"l"}`, "SUCCESS ", "output site_id is set", "a sub-object, canonically equal"},
		{"from user", `{"key":"site_id","value":"42","sourceType":"user"}`, "SUCCESS ", "output site_id is set", "the user said 42"},
		{"from model", `{"key":"summary","value":"one blog","sourceType":"model"}`, "SUCCESS ", "output summary is set", "summary accepts model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newScript(
				turn(call("l", "list_sites", `{}`)),
				turn(call("bad", "get_stats", `{}`)),
				turn(call("s", react.ToolOutputSet, tt.args)),
				turn(call("x", react.ToolFail, `{}`)),
			)
			e := newEnv(t, m, list.Tool, broken.Tool)
			res := e.run(node, "use site 42")
			assert.Equal(t, tt.want, outcomeOf(t, e.rec, "s"), "builtin_output_set(%s): %s", tt.args, tt.why)
			if tt.msg != "" {
				assert.Equal(t, tt.msg, toolMessage(t, res.Transcript, "s").Content, tt.why)
			}
		})
	}
}

// builtin_output_set is offered only when the node declares outputs.
func TestOutputSet_HiddenWithoutOutputs(t *testing.T) {
	m := newScript(turn(call("s", react.ToolOutputSet, `{"key":"a","value":1,"sourceType":"model"}`)), turn(finish("f")))
	e := newEnv(t, m)
	e.run(react.Node{}, "hi")
	assert.Equal(t, "REJECTED CATALOG_DENIED", outcomeOf(t, e.rec, "s"))
	for _, s := range m.requests()[0].Tools {
		assert.NotEqual(t, react.ToolOutputSet, s.Name)
	}
}

func TestBuiltinSpecs(t *testing.T) {
	m := newScript(turn(finish("f")))
	e := newEnv(t, m)
	e.run(react.Node{Outputs: []react.Output{{Key: "a"}}}, "hi")
	specs := m.requests()[0].Tools
	require.Len(t, specs, 5)
	for _, s := range specs {
		assert.NotEmpty(t, s.Description, s.Name)
		assert.Contains(t, string(s.InputSchema), `"type":"object"`, s.Name)
	}
	assert.Equal(t, react.Builtins(), []string{specs[0].Name, specs[1].Name, specs[2].Name, specs[3].Name, specs[4].Name})
}

// Scenario 10 in Chinese: "来源校验失败：…。下一步：…", with "也可以不写" for an
// optional output; a decline in Chinese keeps its reason.
func TestChineseTexts(t *testing.T) {
	_, _, create := sitesTools()
	m := newScript(
		turn(call("s", react.ToolOutputSet, `{"key":"site_url","value":"x","sourceType":"tool_result","sourceRef":"web_site_list"}`)),
		turn(call("w", "create_site", `{}`)),
		turn(call("a", react.ToolApproval, `{"tool":"create_site"}`)),
	)
	e := newEnv(t, m, create.Tool)
	cfg := e.cfg
	cfg.Lang = 2 // prompt.Chinese
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"create_site"}, Outputs: []react.Output{{Key: "site_url"}}}, "建站")
	require.NoError(t, err)
	assert.Equal(t, "来源校验失败：产出 site_url 的 sourceRef web_site_list 没有对应的记录结果。下一步：把 sourceRef 设为取值所在成功结果的调用 ID；site_url 非必填：也可以不写，直接调用 builtin_node_finish",
		toolMessage(t, res.Transcript, "s").Content)
	require.Equal(t, react.Suspended, res.Status)
	cfg.Model = newScript(turn(call("x", react.ToolFail, `{"reason":"用户拒绝"}`)))
	l2, err := react.New(cfg)
	require.NoError(t, err)
	res, err = l2.Resume(context.Background(), res.Snapshot, react.Decline(res.Suspension.Ticket, "太贵了"))
	require.NoError(t, err)
	assert.Equal(t, "用户拒绝了 create_site 的调用：太贵了", toolMessage(t, res.Transcript, "a").Content)
}
