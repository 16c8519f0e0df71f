package acceptance

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	rt "github.com/reactguard/reactguard/reacttest"
)

// assertVerdict checks the TOOL invoked event and log record of callID:
// outcome, code, and the log level (WARN exactly when FAILED).
func assertVerdict(t *testing.T, e *env, callID string, o outcome.Outcome, code errcode.Code) {
	t.Helper()
	ev := e.invoked(callID)
	assert.Equal(t, o, ev.Outcome, "TOOL invoked call_id=%s outcome = %v; want %v", callID, ev.Outcome, o)
	assert.Equal(t, code, ev.Code, "TOOL invoked call_id=%s code = %v; want %v", callID, ev.Code, code)
	rec := e.toolLog(callID)
	assert.Equal(t, o.String(), rec["outcome"], "log TOOL invoked call_id=%s outcome", callID)
	if code != 0 {
		assert.Equal(t, code.String(), rec["code"], "log TOOL invoked call_id=%s code", callID)
	}
	level := "INFO"
	if o == outcome.Failed {
		level = "WARN"
	}
	assert.Equal(t, level, rec["level"], "log TOOL invoked call_id=%s level", callID)
}

// assertStalls checks the stall events: one per entry of want, as
// "callID:count".
func assertStalls(t *testing.T, e *env, want ...string) {
	t.Helper()
	var got []string
	for _, ev := range e.kinds("stall") {
		got = append(got, ev.CallID+":"+strconv.Itoa(ev.Count))
	}
	assert.Equal(t, want, got, "REACT stall events (call:count)")
}

// §9 #1: the user asks to create a site (a write) and the model calls the
// write tool directly: TOOL invoked outcome=DEFERRED, no REACT
// no_tool_calls; next round the model calls builtin_node_approval and the
// node suspends for APPROVAL.
func TestScenario01_WriteDeferredThenApprovalSuspends(t *testing.T) {
	lw, ls, cs := siteTools(rt.Succeed("create_site", site))
	m := rt.Script(
		rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
		rt.Calls(rt.Call("c2", "create_site", createArgs)),
		rt.Calls(rt.Approval("c3", "create_site", approvalWhy)),
	)
	e := newEnv(t, prompt.English, m, lw.Tool, ls.Tool, cs.Tool)
	res := e.run(siteNode(), taskEN)

	assertVerdict(t, e, "c2", outcome.Deferred, errcode.ApprovalRequired)
	deferred := message(t, res, "c2")
	assert.Equal(t, e.cat.Message(
		e.cat.Reason(errcode.ApprovalRequired, "tool", "create_site"),
		e.cat.Text(prompt.NextApproval, "tool", "create_site")), deferred.Content)
	assert.True(t, deferred.IsError)
	assert.Contains(t, deferred.Content, "builtin_node_approval", "the next step names the approval tool")

	assert.Empty(t, e.kinds("no_tool_calls"), "a deferred write is not a turn without tool calls")
	assert.Empty(t, e.logRecords("REACT no_tool_calls"))
	assert.Empty(t, e.kinds("stall"), "DEFERRED neither counts a stall…")
	assert.Equal(t, 0, res.Stalls)

	// The next round: the model read the deferral and asked for approval.
	reqs := m.Requests()
	require.Len(t, reqs, 3)
	got, ok := rt.ToolMessage(reqs[2], "c2")
	require.True(t, ok, "round 3's request carries the deferral")
	assert.Equal(t, deferred.Content, got.Content)

	require.Equal(t, react.Suspended, res.Status)
	require.NotNil(t, res.Suspension)
	assert.Equal(t, react.SuspendApproval, res.Suspension.Kind)
	assert.Equal(t, "c3", res.Suspension.CallID)
	require.NotNil(t, res.Suspension.Approval)
	assert.Equal(t, "create_site", res.Suspension.Approval.Tool)
	assert.Equal(t, "c2", res.Suspension.Approval.CallID, "the approval binds to the deferred call")
	assert.JSONEq(t, createArgs, string(res.Suspension.Approval.Args))
	assert.Equal(t, approvalWhy, res.Suspension.Reason)
	assert.NotEmpty(t, res.Snapshot)
	suspended := e.kinds("suspended")
	require.Len(t, suspended, 1)
	assert.Equal(t, 3, suspended[0].Round)
	assert.Len(t, e.logRecords("REACT suspended"), 1)
	assert.Equal(t, 0, cs.Executions(), "nothing was written before the approval")
}

// §9 #2: the model calls builtin_node_approval before any write was
// stopped: REJECTED APPROVAL_NOT_GATED, the next step says to call the
// write tool first, one stall is counted.
func TestScenario02_ApprovalBeforeWriteRejected(t *testing.T) {
	for _, l := range languages {
		t.Run(l.name, func(t *testing.T) {
			lw, ls, cs := siteTools(rt.Succeed("create_site", site))
			m := rt.Script(
				rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
				rt.Calls(rt.Approval("c2", "create_site", approvalWhy)),
				rt.Calls(rt.Call("c3", "create_site", createArgs)),
				rt.Calls(rt.Approval("c4", "create_site", approvalWhy)),
			)
			e := newEnv(t, l.lang, m, lw.Tool, ls.Tool, cs.Tool)
			res := e.run(siteNode(), taskEN)

			assertVerdict(t, e, "c2", outcome.Rejected, errcode.ApprovalNotGated)
			assert.Equal(t, e.cat.Message(
				e.cat.Reason(errcode.ApprovalNotGated, "tool", "create_site"),
				e.cat.Text(prompt.NextCallWriteFirst)), message(t, res, "c2").Content)
			// One stall for the rejection; the DEFERRED write after it
			// neither counts nor resets.
			assertStalls(t, e, "c2:1")
			assert.Empty(t, e.kinds("stall_reset"))
			assertVerdict(t, e, "c3", outcome.Deferred, errcode.ApprovalRequired)
			require.Equal(t, react.Suspended, res.Status)
			assert.Equal(t, 1, res.Stalls)
		})
	}
}

// §9 #3: the model names the wrong tool when asking for approval:
// REJECTED APPROVAL_TOOL_MISMATCH, and the next step names the tool that
// was actually stopped.
func TestScenario03_ApprovalToolMismatch(t *testing.T) {
	for _, l := range languages {
		t.Run(l.name, func(t *testing.T) {
			lw, ls, cs := siteTools(rt.Succeed("create_site", site))
			m := rt.Script(
				rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
				rt.Calls(rt.Call("c2", "create_site", createArgs)),
				rt.Calls(rt.Approval("c3", "create_website", approvalWhy)),
				rt.Calls(rt.Approval("c4", "create_site", approvalWhy)),
			)
			e := newEnv(t, l.lang, m, lw.Tool, ls.Tool, cs.Tool)
			res := e.run(siteNode(), taskEN)

			assertVerdict(t, e, "c3", outcome.Rejected, errcode.ApprovalToolMismatch)
			msg := message(t, res, "c3").Content
			assert.Equal(t, e.cat.Message(
				e.cat.Reason(errcode.ApprovalToolMismatch, "tool", "create_website", "gated", "create_site"),
				e.cat.Text(prompt.NextApprovalTool, "gated", "create_site")), msg)
			_, next, _ := strings.Cut(msg, nextMarker(e.cat))
			assert.Contains(t, next, "create_site", "the next step names the gated tool")
			assert.NotContains(t, next, "create_website")
			assertStalls(t, e, "c3:1")

			require.Equal(t, react.Suspended, res.Status, "the corrected request suspends")
			assert.Equal(t, "c4", res.Suspension.CallID)
			assert.Equal(t, "create_site", res.Suspension.Approval.Tool)
			assert.Equal(t, 1, res.Stalls)
		})
	}
}

// nextMarker is the text between reason and next step in cat.
func nextMarker(cat *prompt.Catalog) string {
	m := cat.Message("R", "N")
	return strings.TrimSuffix(strings.TrimPrefix(m, "R"), "N")
}

// §9 #4: after the user answered a follow-up, the model asks the same
// question again: REJECTED FOLLOW_UP_ANSWERED, the observation carries the
// user's answer and the next step is to go on with it.
func TestScenario04_FollowUpAlreadyAnswered(t *testing.T) {
	cases := []struct {
		name              string
		lang              prompt.Lang
		task, q, q2, answ string
	}{
		{"en", prompt.English, `Create a website called "Spring Sale".`, siteQuestion, siteQuestion, "Marketing"},
		{"en/reworded punctuation", prompt.English, `Create a website called "Spring Sale".`,
			siteQuestion, "which space should the site go in", "Marketing"},
		{"zh", prompt.Chinese, `创建一个名为 "Spring Sale" 的网站。`, "网站要放在哪个空间？", "网站要放在哪个空间？", "Marketing 空间"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw, ls, cs := siteTools(rt.Succeed("create_site", site))
			m := rt.Script(
				rt.Calls(rt.FollowUp("c1", tc.q)),
				rt.Calls(rt.FollowUp("c2", tc.q2)),
				rt.Calls(rt.Finish("c3", "")),
			)
			e := newEnv(t, tc.lang, m, lw.Tool, ls.Tool, cs.Tool)
			res := e.run(siteNode(), tc.task)
			require.Equal(t, react.Suspended, res.Status)
			require.Equal(t, react.SuspendFollowUp, res.Suspension.Kind)
			assert.Equal(t, tc.q, res.Suspension.Question)

			res = e.resume(res, react.Answer(res.Suspension.Ticket, tc.answ))
			assert.Equal(t, e.cat.Text(prompt.ResultFollowUpAnswer, "answer", tc.answ), message(t, res, "c1").Content)

			assertVerdict(t, e, "c2", outcome.Rejected, errcode.FollowUpAnswered)
			msg := message(t, res, "c2").Content
			assert.Equal(t, e.cat.Message(
				e.cat.Reason(errcode.FollowUpAnswered, "answer", tc.answ),
				e.cat.Text(prompt.NextUseAnswer, "answer", tc.answ)), msg)
			assert.Equal(t, 2, strings.Count(msg, tc.answ), "reason and next step both carry the answer")
			assertStalls(t, e, "c2:1")
			assert.Equal(t, react.Finished, res.Status)
		})
	}
}

// §9 #5: the model uses a follow-up to confirm a write verbally, or to
// repeat the user's words: REJECTED FOLLOW_UP_UNGROUNDED, the next step
// is to call the write tool directly, the approval step confirms it.
func TestScenario05_FollowUpUngrounded(t *testing.T) {
	cases := []struct {
		name, reason string
		lang         prompt.Lang
		task         string
		before       []react.Response // turns before the follow-up
		question     string
		detail       prompt.Key
	}{
		{"en/confirm deferred write", "a verbal confirmation of the write the gate stopped", prompt.English, taskEN,
			[]react.Response{
				rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
				rt.Calls(rt.Call("c2", "create_site", createArgs)),
			},
			`Shall I create the site "Spring Sale" in Marketing now?`, prompt.ReasonConfirmsWrite},
		{"en/confirm before write", "a verbal confirmation before calling the write at all", prompt.English, taskEN,
			[]react.Response{rt.Calls(rt.Call("c1", "list_spaces", `{}`))},
			"Please confirm that I may create the site in sp-42.", prompt.ReasonConfirmsWrite},
		{"en/echo", "repeating the user's own words back", prompt.English, taskEN, nil,
			taskEN, prompt.ReasonEchoesUser},
		{"zh/confirm deferred write", "口头确认被拦下的写操作", prompt.Chinese, `在 Marketing 空间创建 "Spring Sale" 网站。`,
			[]react.Response{
				rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
				rt.Calls(rt.Call("c2", "create_site", createArgs)),
			},
			"请确认：现在在 Marketing 空间创建 Spring Sale 网站？", prompt.ReasonConfirmsWrite},
		{"zh/echo", "复述用户原话", prompt.Chinese, `在 Marketing 空间创建 "Spring Sale" 网站。`, nil,
			`在 Marketing 空间创建 "Spring Sale" 网站？`, prompt.ReasonEchoesUser},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw, ls, cs := siteTools(rt.Succeed("create_site", site))
			turns := append(append([]react.Response{}, tc.before...),
				rt.Calls(rt.FollowUp("f1", tc.question)),
				rt.Calls(rt.FailNode("x1", "stop here")))
			e := newEnv(t, tc.lang, rt.Script(turns...), lw.Tool, ls.Tool, cs.Tool)
			res := e.run(siteNode(), tc.task)

			assertVerdict(t, e, "f1", outcome.Rejected, errcode.FollowUpUngrounded)
			assert.Equal(t, e.cat.Message(
				e.cat.Reason(errcode.FollowUpUngrounded, "detail", e.cat.Text(tc.detail)),
				e.cat.Text(prompt.NextWriteDirectly)), message(t, res, "f1").Content, tc.reason)
			assertStalls(t, e, "f1:1")
			assert.Empty(t, e.kinds("suspended"), "an ungrounded follow-up does not suspend the run")
			assert.Equal(t, react.Failed, res.Status)
			assert.Equal(t, 0, cs.Executions())
		})
	}
}

// §9 #6: a parameter whose value does not come from where its contract
// says is stopped: REJECTED, one stall each.
func TestScenario06_ParamProvenanceRejected(t *testing.T) {
	lw, ls, cs := siteTools(rt.Succeed("create_site", site))
	m := rt.Script(
		rt.Calls(rt.Call("c1", "create_site", createArgs)),                                  // before list_spaces
		rt.Calls(rt.Call("c2", "list_spaces", `{}`)),                                        // resets
		rt.Calls(rt.Call("c3", "create_site", `{"name":"Spring Sale","space_id":"sp-99"}`)), // invented
		rt.Calls(rt.Call("c4", "create_site", createArgs)),                                  // from the result
		rt.Calls(rt.Approval("c5", "create_site", "")),
	)
	e := newEnv(t, prompt.English, m, lw.Tool, ls.Tool, cs.Tool)
	res := e.run(siteNode(), taskEN)

	assertVerdict(t, e, "c1", outcome.Rejected, errcode.ParamProvenanceQueryFirst)
	assert.Equal(t, e.cat.Message(
		e.cat.Reason(errcode.ParamProvenanceQueryFirst, "tool", "create_site", "param", "space_id", "source", "list_spaces"),
		e.cat.Text(prompt.NextQueryFirst, "source", "list_spaces", "param", "space_id", "tool", "create_site")),
		message(t, res, "c1").Content)

	assertVerdict(t, e, "c3", outcome.Rejected, errcode.ParamProvenanceMismatch)
	source := e.cat.Text(prompt.SourceResult, "field", "id", "tool", "list_spaces")
	assert.Equal(t, e.cat.Message(
		e.cat.Reason(errcode.ParamProvenanceMismatch, "tool", "create_site", "param", "space_id", "source", source),
		e.cat.Text(prompt.NextProvenance, "param", "space_id", "source", source, "tool", "create_site")),
		message(t, res, "c3").Content)

	assertStalls(t, e, "c1:1", "c3:1")
	resets := e.kinds("stall_reset")
	require.Len(t, resets, 1)
	assert.Equal(t, "c2", resets[0].CallID, "the successful query reset the counter")
	assertVerdict(t, e, "c4", outcome.Deferred, errcode.ApprovalRequired)
	assert.Equal(t, react.Suspended, res.Status)
	assert.Equal(t, 1, res.Stalls)
	assert.Equal(t, 0, cs.Executions(), "a rejected call never runs")
}

// §9 #7: an (MCP) tool times out: FAILED TOOL_TIMEOUT, logged at WARN, one
// stall. The fake blocks past its Timeout; synctest makes the wait instant.
func TestScenario07_ToolTimeoutFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		search := rt.Timeout("search_docs", 30*time.Second)
		m := rt.Script(
			rt.Calls(rt.Call("c1", "search_docs", `{"q":"pricing"}`)),
			rt.Calls(rt.FailNode("c2", "the documentation search is down")),
		)
		e := newEnv(t, prompt.English, m, search.Tool)
		start := time.Now()
		res := e.run(react.Node{Name: "docs", Tools: []string{"search_docs"}}, "What does the pro plan cost?")
		assert.Equal(t, 30*time.Second, time.Since(start), "the call was cut at the tool's Timeout")

		assertVerdict(t, e, "c1", outcome.Failed, errcode.ToolTimeout)
		msg := message(t, res, "c1").Content
		assert.True(t, strings.HasPrefix(msg, e.cat.Reason(errcode.ToolTimeout, "tool", "search_docs", "detail", "")),
			"message %q starts with the TOOL_TIMEOUT reason", msg)
		assert.True(t, strings.HasSuffix(msg, nextMarker(e.cat)+e.cat.Text(invoker.DefaultNext(errcode.ToolTimeout), "tool", "search_docs")),
			"message %q ends with the configured next step for timeouts", msg)
		assertStalls(t, e, "c1:1")
		stalls := e.logRecords("REACT stall")
		require.Len(t, stalls, 1)
		assert.Equal(t, "FAILED", stalls[0]["reason"])
		assert.Equal(t, 1, search.Executions(), "no retry without a retry policy")
		assert.Equal(t, react.Failed, res.Status)
		assert.Equal(t, react.FailedByModel, res.Failure.Kind)
	})
}

// §9 #8: after the user approves, the write runs and succeeds: SUCCESS,
// and the node goes on. The run resumes from its JSON snapshot in a new
// loop value; resuming the same snapshot again never writes twice.
func TestScenario08_ApprovedWriteSucceeds(t *testing.T) {
	lw, ls, cs := siteTools(rt.Succeed("create_site", site))
	m := rt.Script(
		rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
		rt.Calls(rt.Call("c2", "create_site", createArgs)),
		rt.Calls(rt.Approval("c3", "create_site", approvalWhy)),
		// after the approval
		rt.Calls(rt.Call("c4", "create_site", createArgs)),
		rt.Calls(rt.OutputSet("c5", "site_id", "site-1001", react.SourceToolResult, "c4")),
		rt.Calls(rt.Finish("c6", "created")),
	)
	e := newEnv(t, prompt.English, m, lw.Tool, ls.Tool, cs.Tool)
	node := siteNode(react.Output{Key: "site_id", Required: true})
	suspended := e.run(node, taskEN)
	require.Equal(t, react.Suspended, suspended.Status)

	res := e.resume(suspended, react.Approve(suspended.Suspension.Ticket))
	assert.Equal(t, e.cat.Text(prompt.ResultApprovalGranted, "tool", "create_site"), message(t, res, "c3").Content)
	assertVerdict(t, e, "c4", outcome.Success, 0)
	assert.Equal(t, 1, cs.Executions())
	assert.Contains(t, message(t, res, "c4").Content, "site-1001", "the model sees the result")
	// The node went on after the write: two more turns, then finished.
	assert.Equal(t, 6, m.Turns())
	require.Equal(t, react.Finished, res.Status)
	assert.JSONEq(t, `"site-1001"`, string(res.Outputs["site_id"].Value))
	assert.Equal(t, 0, res.Stalls)
	assert.Len(t, e.kinds("finished"), 1)
	assert.Len(t, e.logRecords("REACT finished"), 1)

	t.Run("resumed twice: refused, written once", func(t *testing.T) {
		_, err := e.loop().Resume(context.Background(), suspended.Snapshot, react.Approve(suspended.Suspension.Ticket))
		require.ErrorIs(t, err, react.ErrAlreadyResumed, "a snapshot is resumed once")
		assert.Equal(t, 1, cs.Executions(), "the second resume executed nothing")
		assert.Equal(t, 6, m.Turns(), "and did not call the model")
	})
}

// A write reused by the write gate is a SUCCESS (§4: "含复用已有成功写证据"),
// so its result must be citable like an executed one: as the sourceRef of
// an output, and as the source of a parameter.
func TestReusedWriteResultIsEvidence(t *testing.T) {
	lw, ls, cs := siteTools(rt.Succeed("create_site", site))
	m := rt.Script(
		rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
		rt.Calls(rt.Call("c2", "create_site", createArgs)),
		rt.Calls(rt.Approval("c3", "create_site", approvalWhy)),
		rt.Calls(rt.Call("c4", "create_site", createArgs)),
		// the same write again: reused, not executed
		rt.Calls(rt.Call("c5", "create_site", createArgs)),
		rt.Calls(rt.OutputSet("c6", "site_id", "site-1001", react.SourceToolResult, "c5")),
		rt.Calls(rt.Finish("c7", "created")),
	)
	e := newEnv(t, prompt.English, m, lw.Tool, ls.Tool, cs.Tool)
	suspended := e.run(siteNode(react.Output{Key: "site_id", Required: true}), taskEN)
	res := e.resume(suspended, react.Approve(suspended.Suspension.Ticket))
	assert.Equal(t, 1, cs.Executions())
	assertVerdict(t, e, "c5", outcome.Success, 0)
	assert.True(t, strings.HasPrefix(message(t, res, "c5").Content, e.cat.Text(prompt.ResultWriteReused, "tool", "create_site")))
	assertVerdict(t, e, "c6", outcome.Success, 0)
	assert.Equal(t, react.Finished, res.Status)
}

// §9 #9: a query node whose outputs are optional: after the queries the
// model may finish at once, and no prompt ever tells it to "write outputs".
func TestScenario09_QueryWithOptionalOutputsFinishes(t *testing.T) {
	forbidden := []string{"write outputs", "写 outputs", "写outputs", "写入 outputs", "write the outputs"}
	for _, l := range languages {
		t.Run(l.name, func(t *testing.T) {
			lw, ls, cs := siteTools(rt.Succeed("create_site", site))
			m := rt.Script(
				rt.Calls(rt.Call("c1", "list_websites", `{}`), rt.Call("c2", "list_spaces", `{}`)),
				rt.Calls(rt.Finish("c3", "2 spaces, 1 website")),
			)
			e := newEnv(t, l.lang, m, lw.Tool, ls.Tool, cs.Tool)
			node := siteNode(
				react.Output{Key: "website_list", Description: "the user's websites"},
				react.Output{Key: "space_list", Description: "the spaces"},
			)
			res := e.run(node, "Which websites and spaces do I have?")

			require.Equal(t, react.Finished, res.Status, "finish right after the queries is accepted")
			assert.Equal(t, 2, res.Rounds)
			assert.Empty(t, res.Outputs)
			assertVerdict(t, e, "c3", outcome.Success, 0)
			assert.Empty(t, e.kinds("stall"))
			reqs := m.Requests()
			require.Len(t, reqs, 2)
			for i, req := range reqs {
				text := strings.ToLower(requestText(req))
				for _, f := range forbidden {
					assert.NotContains(t, text, f, "request %d tells the model to write outputs", i+1)
				}
				sys := rt.SystemText(req)
				assert.NotContains(t, sys, e.cat.Text(prompt.PhaseMissing, "keys", "website_list"), "no phase hint without required outputs")
				assert.NotContains(t, sys, e.cat.Text(prompt.PhaseComplete, "keys", "website_list"))
			}
			assert.Equal(t, rt.SystemText(reqs[0]), rt.SystemText(reqs[1]), "evidence alone changes no system text")
		})
	}

	t.Run("required outputs", func(t *testing.T) {
		// Even with a required output the hint states only which keys are
		// missing, never an instruction to write them.
		lw, ls, cs := siteTools(rt.Succeed("create_site", site))
		m := rt.Script(
			rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
			rt.Calls(rt.OutputSet("c2", "space_list", spaces, react.SourceToolResult, "c1")),
			rt.Calls(rt.Finish("c3", "")),
		)
		e := newEnv(t, prompt.English, m, lw.Tool, ls.Tool, cs.Tool)
		res := e.run(siteNode(react.Output{Key: "space_list", Required: true}), "List my spaces.")
		require.Equal(t, react.Finished, res.Status)
		reqs := m.Requests()
		assert.Contains(t, rt.SystemText(reqs[0]), e.cat.Text(prompt.PhaseMissing, "keys", "space_list"))
		assert.Contains(t, rt.SystemText(reqs[2]), e.cat.Text(prompt.PhaseComplete, "keys", "space_list"))
		for i, req := range reqs {
			text := strings.ToLower(requestText(req))
			for _, f := range forbidden {
				assert.NotContains(t, text, f, "request %d tells the model to write outputs", i+1)
			}
		}
	})
}

// §9 #10: builtin_output_set is rejected: the message reads "source check
// failed: …. Next: …" (来源校验失败：…。下一步：…), an optional output's next
// step adds that it may be skipped ("也可以不写"), and the model ends or
// corrects accordingly instead of retrying.
func TestScenario10_OutputSetRejectedOptional(t *testing.T) {
	prefixes := map[prompt.Lang]string{prompt.English: "source check failed: ", prompt.Chinese: "来源校验失败："}
	skips := map[prompt.Lang]string{prompt.English: "you may also skip it", prompt.Chinese: "也可以不写"}
	for _, l := range languages {
		t.Run(l.name+"/skip", func(t *testing.T) {
			lw, ls, cs := siteTools(rt.Succeed("create_site", site))
			m := rt.Script(
				rt.Calls(rt.Call("c1", "list_websites", `{}`)),
				rt.Calls(rt.OutputSet("c2", "web_site_list", "Spring Sale", react.SourceToolResult, "c1")),
				rt.Calls(rt.Finish("c3", "")),
			)
			e := newEnv(t, l.lang, m, lw.Tool, ls.Tool, cs.Tool)
			res := e.run(siteNode(react.Output{Key: "web_site_list"}), "List my websites.")

			assertVerdict(t, e, "c2", outcome.Rejected, errcode.OutputValueMismatch)
			msg := message(t, res, "c2").Content
			reason := e.cat.Reason(errcode.OutputValueMismatch, "key", "web_site_list", "ref", "c1")
			assert.True(t, strings.HasPrefix(msg, prefixes[l.lang]), "message %q starts with %q", msg, prefixes[l.lang])
			assert.True(t, strings.HasPrefix(msg, reason+nextMarker(e.cat)), "message %q is <reason>%s<next>", msg, nextMarker(e.cat))
			next := strings.TrimPrefix(msg, reason+nextMarker(e.cat))
			assert.Contains(t, next, e.cat.Text(prompt.NextOutputValue, "ref", "c1"))
			assert.Contains(t, next, e.cat.Text(prompt.NextOutputOptional, "key", "web_site_list"))
			assert.Contains(t, next, skips[l.lang])

			assertStalls(t, e, "c2:1")
			assert.Equal(t, react.Finished, res.Status, "the model finished without the optional output")
			assert.Empty(t, res.Outputs)
			assert.Equal(t, 1, countCalls(e, react.ToolOutputSet), "no retry of the rejected output")
		})
		t.Run(l.name+"/fix", func(t *testing.T) {
			lw, ls, cs := siteTools(rt.Succeed("create_site", site))
			m := rt.Script(
				rt.Calls(rt.Call("c1", "list_websites", `{}`)),
				rt.Calls(rt.OutputSet("c2", "web_site_list", websites, react.SourceToolResult, "c9")),
				rt.Calls(rt.OutputSet("c3", "web_site_list", websites, react.SourceToolResult, "c1")),
				rt.Calls(rt.Finish("c4", "")),
			)
			e := newEnv(t, l.lang, m, lw.Tool, ls.Tool, cs.Tool)
			res := e.run(siteNode(react.Output{Key: "web_site_list"}), "List my websites.")

			assertVerdict(t, e, "c2", outcome.Rejected, errcode.OutputSourceRefUnknown)
			msg := message(t, res, "c2").Content
			assert.True(t, strings.HasPrefix(msg, prefixes[l.lang]), "message %q starts with %q", msg, prefixes[l.lang])
			assert.Contains(t, msg, nextMarker(e.cat)+e.cat.Text(prompt.NextOutputSourceRef))
			assert.Contains(t, msg, skips[l.lang])

			assertVerdict(t, e, "c3", outcome.Success, 0)
			assertStalls(t, e, "c2:1")
			require.Equal(t, react.Finished, res.Status)
			assert.JSONEq(t, mustJSON(t, websites), string(res.Outputs["web_site_list"].Value))
			assert.Equal(t, "c1", res.Outputs["web_site_list"].Ref)
		})
	}
}

// §9 #11: the approved write fails in the business layer: the next step
// says to tell the user and ask how to proceed; the model calls
// builtin_node_follow_up, which is accepted (the run suspends), and no
// other write is attempted.
func TestScenario11_ApprovedWriteBusinessFailure(t *testing.T) {
	questions := map[prompt.Lang]string{
		prompt.English: "Creating Spring Sale failed: quota exceeded (system.50001). How would you like to proceed?",
		prompt.Chinese: "创建 Spring Sale 失败：配额不足（system.50001）。您希望如何处理？",
	}
	for _, l := range languages {
		t.Run(l.name, func(t *testing.T) {
			lw, ls, cs := siteTools(rt.BusinessFail("create_site", "system", 50001, "quota exceeded"))
			other := rt.Succeed("create_site_v2", site).Write()
			m := rt.Script(
				rt.Calls(rt.Call("c1", "list_spaces", `{}`)),
				rt.Calls(rt.Call("c2", "create_site", createArgs)),
				rt.Calls(rt.Approval("c3", "create_site", approvalWhy)),
				rt.Calls(rt.Call("c4", "create_site", createArgs)),
				rt.Calls(rt.FollowUp("c5", questions[l.lang])),
			)
			e := newEnv(t, l.lang, m, lw.Tool, ls.Tool, cs.Tool, other.Tool)
			node := siteNode()
			node.Tools = append(node.Tools, "create_site_v2")
			suspended := e.run(node, taskEN)
			res := e.resume(suspended, react.Approve(suspended.Suspension.Ticket))

			assertVerdict(t, e, "c4", outcome.Failed, errcode.ToolBusinessFailed)
			msg := message(t, res, "c4").Content
			next := e.cat.Text(prompt.NextApprovedFailed, "tool", "create_site")
			assert.True(t, strings.HasSuffix(msg, nextMarker(e.cat)+next), "message %q ends with NEXT_APPROVED_FAILED", msg)
			assert.Contains(t, next, "builtin_node_follow_up")
			assert.Contains(t, msg, "system.50001")
			assertStalls(t, e, "c4:1")

			require.Equal(t, react.Suspended, res.Status, "the follow-up after a failed write is grounded")
			assert.Equal(t, react.SuspendFollowUp, res.Suspension.Kind)
			assert.Equal(t, questions[l.lang], res.Suspension.Question)
			assert.Equal(t, 1, cs.Executions(), "the approved call ran once")
			assert.Equal(t, 0, other.Executions(), "no other write was attempted")
			assert.Equal(t, 2, countCalls(e, "create_site"), "only the deferred and the approved call")
		})
	}
}

// §9 #12: a downstream system reports a failure inside a successful
// response: errorCode TOOL_BUSINESS_FAILED, the message carries the
// downstream code and "Next:" (下一步：).
func TestScenario12_DownstreamBusinessFailure(t *testing.T) {
	for _, l := range languages {
		t.Run(l.name, func(t *testing.T) {
			quota := rt.BusinessFail("get_quota", "system", 50001, "quota service rejected the tenant")
			m := rt.Script(
				rt.Calls(rt.Call("c1", "get_quota", `{"tenant":"acme"}`)),
				rt.Calls(rt.FailNode("c2", "the quota service refused")),
			)
			e := newEnv(t, l.lang, m, quota.Tool)
			res := e.run(react.Node{Name: "quota", Tools: []string{"get_quota"}}, "How much quota does acme have left?")

			assertVerdict(t, e, "c1", outcome.Failed, errcode.ToolBusinessFailed)
			assert.Equal(t, e.cat.Message(
				e.cat.Reason(errcode.ToolBusinessFailed, "code", "system.50001", "detail", "quota service rejected the tenant", "tool", "get_quota"),
				e.cat.Text(prompt.NextBusiness, "tool", "get_quota")), message(t, res, "c1").Content)
			assert.Contains(t, message(t, res, "c1").Content, "[system.50001]")
			assert.Contains(t, message(t, res, "c1").Content, nextMarker(e.cat))
			assertStalls(t, e, "c1:1")
			assert.Equal(t, 1, quota.Executions())
			assert.Equal(t, react.Failed, res.Status)
		})
	}
}

// countCalls counts the TOOL invoked events of toolName.
func countCalls(e *env, toolName string) int {
	n := 0
	for _, ev := range e.kinds("invoked") {
		if ev.Tool == toolName {
			n++
		}
	}
	return n
}
