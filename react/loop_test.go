package react_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// tools used across the loop tests.
func sitesTools() (list, broken, create *fake) {
	list = newFake("list_sites", tool.Read, ok(map[string]any{"sites": []any{map[string]any{"id": 7, "name": "blog"}}}))
	broken = newFake("get_stats", tool.Read, fails(tool.Unavailable("stats backend down")))
	create = newFake("create_site", tool.Write, ok(map[string]any{"id": 42}))
	return
}

func sitesNode() react.Node {
	return react.Node{Name: "sites", Tools: []string{"list_sites", "get_stats", "create_site"}}
}

func finish(id string) react.ToolCall { return call(id, react.ToolFinish, `{}`) }

// §6 rule 1: every call gets exactly one tool message, paired by call id.
func TestRule_EveryCallGetsOneToolMessage(t *testing.T) {
	list, broken, create := sitesTools()
	m := newScript(
		turn(call("a", "list_sites", `{}`), call("b", "get_stats", `{}`), call("c", "list_sites", `{"page":2}`), call("d", "create_site", `{}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
	res := e.run(sitesNode(), "hi")
	require.Equal(t, react.Finished, res.Status)
	requirePaired(t, res.Transcript)
	assert.Len(t, toolMessages(res.Transcript), 5, "four calls of the first turn and the finish")
	for _, id := range []string{"c", "d"} {
		msg := toolMessage(t, res.Transcript, id)
		assert.True(t, msg.IsError, "skipped call %s is marked as not a success", id)
		assert.Contains(t, msg.Content, "was not run because an earlier call of the same turn did not succeed. Next: call", "skipped %s: REASON_SKIPPED. Next: NEXT_SKIPPED", id)
	}
	assert.Equal(t, 0, create.executions(), "a skipped write never runs")
	assert.Len(t, e.rec.of("skipped"), 2)
}

// §6 rule 2: a control tool that exits the node stops the loop; the calls
// after it are answered as skipped and the model is not asked again.
func TestRule_ControlToolExitStops(t *testing.T) {
	list, _, _ := sitesTools()
	m := newScript(turn(call("a", "list_sites", `{}`), finish("f"), call("b", "list_sites", `{"x":1}`)))
	e := newEnv(t, m, list.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites"}}, "hi")
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 1, res.Rounds)
	assert.Equal(t, 1, list.executions())
	assert.Equal(t, "list_sites was not run because an earlier call of the same turn, builtin_node_finish, exited the node. Next: call list_sites again in a later turn if it is still needed",
		toolMessage(t, res.Transcript, "b").Content, "after an accepted finish the skip says the node was exited, not that a call failed")
	requirePaired(t, res.Transcript)
	assert.Len(t, m.requests(), 1, "no model turn after the node ended")

	m = newScript(turn(call("x", react.ToolFail, `{"reason":"no such site"}`), call("y", "list_sites", `{}`)))
	e = newEnv(t, m, list.Tool)
	res = e.run(react.Node{Tools: []string{"list_sites"}}, "hi")
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, &react.Failure{Kind: react.FailedByModel, Reason: "no such site"}, res.Failure)
	assert.Equal(t, "the node ended as failed: no such site", toolMessage(t, res.Transcript, "x").Content)
	assert.Contains(t, toolMessage(t, res.Transcript, "y").Content, "an earlier call of the same turn, builtin_node_fail, exited the node")
	requirePaired(t, res.Transcript)
}

// The skip text says why a call was not run: an earlier call of the turn
// did not succeed, or an earlier call exited the node — including a
// suspension the user decided (a granted approval, an answered follow-up),
// which succeeded.
func TestSkipTextSaysWhy(t *testing.T) {
	list, _, create := sitesTools()
	tests := []struct {
		name     string
		first    react.ToolCall
		decision func(ticket string) react.Decision
		want     string
	}{
		{"granted approval", call("a", react.ToolApproval, `{"tool":"create_site"}`), react.Approve,
			"list_sites was not run because an earlier call of the same turn, builtin_node_approval, exited the node"},
		{"declined approval", call("a", react.ToolApproval, `{"tool":"create_site"}`), func(t string) react.Decision { return react.Decline(t, "no") },
			"list_sites was not run because an earlier call of the same turn, builtin_node_approval, exited the node"},
		{"answered follow-up", call("a", react.ToolFollowUp, `{"question":"Which space?"}`), func(t string) react.Decision { return react.Answer(t, "Sales") },
			"list_sites was not run because an earlier call of the same turn, builtin_node_follow_up, exited the node"},
		{"failed call", call("a", "get_stats", `{}`), nil,
			"list_sites was not run because an earlier call of the same turn did not succeed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, broken, _ := sitesTools()
			m := newScript(
				turn(call("w", "create_site", `{"name":"blog"}`)),
				turn(tc.first, call("b", "list_sites", `{}`)),
				turn(finish("f")),
			)
			e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
			res := e.run(react.Node{Tools: []string{"list_sites", "get_stats", "create_site"}}, "create a site called blog")
			if res.Status == react.Suspended {
				var err error
				res, err = e.loop.Resume(context.Background(), res.Snapshot, tc.decision(res.Suspension.Ticket))
				require.NoError(t, err)
			}
			require.Equal(t, react.Finished, res.Status)
			got := toolMessage(t, res.Transcript, "b").Content
			assert.Truef(t, strings.HasPrefix(got, tc.want), "skip text after a %s = %q; want it to start %q", tc.name, got, tc.want)
		})
	}
}

// §6 rule 3: a rejected finish counts one stall and ends the wave.
func TestRule_FinishRejectedCountsOneStall(t *testing.T) {
	list, _, _ := sitesTools()
	m := newScript(
		turn(finish("f1"), call("a", "list_sites", `{}`)),
		turn(call("b", "list_sites", `{}`)),
		turn(call("s", react.ToolOutputSet, `{"key":"site","value":7,"sourceType":"tool_result","sourceRef":"b"}`)),
		turn(finish("f2")),
	)
	e := newEnv(t, m, list.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites"}, Outputs: []react.Output{{Key: "site", Required: true}}}, "hi")
	require.Equal(t, react.Finished, res.Status)
	f1 := toolMessage(t, res.Transcript, "f1")
	assert.Equal(t, "required outputs are not written: site. Next: set site with builtin_output_set first, or call builtin_node_fail if you cannot", f1.Content)
	stalls := e.rec.of("stall")
	require.Len(t, stalls, 1)
	assert.Equal(t, event{Kind: "stall", Count: 1, Reason: "finish_rejected", CallID: "f1"}, stalls[0])
	assert.Contains(t, toolMessage(t, res.Transcript, "a").Content, "was not run", "the rest of the wave is skipped")
	assert.Len(t, e.rec.of("reset"), 1, "the next success resets the counter")
}

// §6 rule 4: Stalls() counts one stall, skips the rest of the wave and goes
// to the next round.
func TestRule_StallCountsOneAndSkipsRest(t *testing.T) {
	list, broken, _ := sitesTools()
	m := newScript(
		turn(call("a", "get_stats", `{}`), call("b", "list_sites", `{}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool, broken.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites", "get_stats"}}, "hi")
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 0, list.executions(), "the call after a FAILED one is skipped")
	assert.Equal(t, []event{{Kind: "stall", Count: 1, Reason: "FAILED", CallID: "a"}}, e.rec.of("stall"))
	assert.Equal(t, 2, res.Rounds)
	assert.Equal(t, 1, res.Stalls, "rule 2 comes before rule 6: the finish exits the node without resetting")
}

// §6 rule 4: the stall past the no-progress limit fails the node.
func TestRule_StallPastLimitFailsNode(t *testing.T) {
	_, broken, _ := sitesTools()
	stats := func(id string) react.Response { return turn(call(id, "get_stats", `{"n":"`+id+`"}`)) }
	m := newScript(stats("a"), stats("b"), stats("c"), stats("d"))
	e := newEnv(t, m, broken.Tool)
	res := e.run(react.Node{Tools: []string{"get_stats"}, NoProgressLimit: 2}, "hi")
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, react.FailedNoProgress, res.Failure.Kind)
	assert.Equal(t, 3, res.Stalls, "limit 2 tolerates two stalls; the third fails the node")
	assert.Equal(t, 3, res.Rounds)
	assert.Equal(t, "failed", e.rec.kinds()[len(e.rec.kinds())-1])
}

// §6 rule 5: DEFERRED skips the rest of the wave and neither counts nor
// resets the counter.
func TestRule_DeferredNeitherCountsNorResets(t *testing.T) {
	list, broken, create := sitesTools()
	m := newScript(
		turn(call("a", "get_stats", `{}`)),
		turn(call("w", "create_site", `{"name":"blog"}`), call("b", "list_sites", `{}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
	res := e.run(sitesNode(), "create a site called blog")
	require.Equal(t, react.Finished, res.Status)
	w := toolMessage(t, res.Transcript, "w")
	assert.Equal(t, "the write create_site needs the user's approval. Next: call builtin_node_approval with tool create_site to ask the user to approve this exact call; do not call create_site again before the answer", w.Content)
	assert.Contains(t, toolMessage(t, res.Transcript, "b").Content, "was not run")
	assert.Equal(t, 0, create.executions())
	assert.Len(t, e.rec.of("stall"), 1, "only the FAILED call stalled")
	assert.Empty(t, e.rec.of("reset"), "DEFERRED does not reset the counter (and the finish exits before rule 6)")
	assert.Equal(t, 1, res.Stalls)
	assert.Empty(t, e.rec.of("no_tool_calls"), "scenario 1: no REACT no_tool_calls")
}

// §6 rule 6: Advances() resets the counter.
func TestRule_SuccessResets(t *testing.T) {
	list, broken, _ := sitesTools()
	m := newScript(
		turn(call("a", "get_stats", `{}`)),
		turn(call("b", "get_stats", `{"again":true}`)),
		turn(call("c", "list_sites", `{}`)),
		turn(call("d", "get_stats", `{"third":true}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool, broken.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites", "get_stats"}, NoProgressLimit: 2}, "hi")
	require.Equal(t, react.Finished, res.Status, "the reset keeps the node under its limit")
	counts := []int{}
	for _, s := range e.rec.of("stall") {
		counts = append(counts, s.Count)
	}
	assert.Equal(t, []int{1, 2, 1}, counts)
}

// A round without a tool call counts one stall and tells the model so.
func TestRule_NoToolCallsCountsOneStall(t *testing.T) {
	m := newScript(text("I think we are done."), turn(finish("f")))
	e := newEnv(t, m)
	res := e.run(react.Node{}, "hi")
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, []string{"started", "no_tool_calls", "stall", "tool", "finished"}, e.rec.kinds())
	nudge := res.Transcript[2]
	assert.Equal(t, react.RoleUser, nudge.Role)
	assert.Equal(t, "the turn contained no tool call. Next: answer with a tool call: builtin_node_finish when the task is done, builtin_node_follow_up to ask the user, builtin_node_fail if it cannot be done", nudge.Content)
	assert.Equal(t, "I think we are done.", res.Transcript[1].Content, "the model's text is kept")

	m = newScript(text("a"), text("b"), text("c"), text("d"))
	e = newEnv(t, m)
	res = e.run(react.Node{}, "hi")
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, react.FailedNoProgress, res.Failure.Kind)
	assert.Equal(t, 4, res.Rounds, "three stalls tolerated by the default limit, the fourth fails")
}

// The round limit bounds everything, DEFERRED included.
func TestRule_RoundLimitBoundsEverything(t *testing.T) {
	_, _, create := sitesTools()
	gated := func(react.Request) react.Response { return turn(call("", "create_site", `{}`)) }
	var turns []any
	for range 5 {
		turns = append(turns, gated)
	}
	m := newScript(turns...)
	e := newEnv(t, m, create.Tool)
	res := e.run(react.Node{Tools: []string{"create_site"}, MaxRounds: 3}, "hi")
	require.Equal(t, react.Failed, res.Status)
	assert.Equal(t, react.FailedRoundLimit, res.Failure.Kind)
	assert.Equal(t, 3, res.Rounds)
	assert.Len(t, m.requests(), 3)
}

func TestCatalogDenied(t *testing.T) {
	list, _, create := sitesTools()
	m := newScript(
		turn(call("a", "create_site", `{}`)),
		turn(call("b", "drop_database", `{}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool, create.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites"}}, "hi")
	require.Equal(t, react.Finished, res.Status)
	want := "tool %s is not available in this node. Next: use one of the available tools: list_sites, builtin_node_approval, builtin_node_follow_up, builtin_node_finish, builtin_node_fail"
	for id, name := range map[string]string{"a": "create_site", "b": "drop_database"} {
		msg := toolMessage(t, res.Transcript, id)
		assert.Equal(t, strings.Replace(want, "%s", name, 1), msg.Content, "%s is invisible", name)
	}
	assert.Equal(t, 0, create.executions())
	for _, ev := range e.rec.of("tool")[:2] {
		assert.Equal(t, "REJECTED", ev.Outcome)
		assert.Equal(t, "CATALOG_DENIED", ev.Code)
	}
}

func TestMalformedCalls(t *testing.T) {
	list, _, _ := sitesTools()
	m := newScript(
		turn(call("", "list_sites", `{}`)),
		turn(call("x", "list_sites", `{}`), call("x", "list_sites", `{"p":2}`)),
		turn(call("x", "list_sites", `{"p":3}`)),
		turn(call("y", "", `{}`)),
		turn(call("z", "list_sites", `{not json`)),
		turn(call("v", react.ToolFinish, `[1,2]`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites"}, NoProgressLimit: 10}, "hi")
	require.Equal(t, react.Finished, res.Status)
	requirePaired(t, res.Transcript)
	tools := e.rec.of("tool")
	codes := []string{}
	for _, ev := range tools {
		codes = append(codes, ev.Outcome+" "+ev.Code)
	}
	assert.Equal(t, []string{
		"REJECTED TOOL_CALL_INVALID", // no id
		"SUCCESS ",                   // x
		"REJECTED TOOL_CALL_INVALID", // x repeated in the turn
		"REJECTED TOOL_CALL_INVALID", // x repeated from an earlier turn
		"REJECTED TOOL_CALL_INVALID", // no name
		"REJECTED ARG_JSON_INVALID",  // catalog tool, not JSON
		"REJECTED ARG_JSON_INVALID",  // built-in, not an object
		"SUCCESS ",
	}, codes)
	assert.Equal(t, "rg_1_1", tools[0].CallID, "a missing id is generated from round and position")
	assert.Equal(t, "the tool call is malformed: it has no call id. Next: send the tool call again with a unique call id and a tool name", toolMessage(t, res.Transcript, "rg_1_1").Content)
	assert.Equal(t, "rg_2_2", tools[2].CallID)
	assert.Contains(t, toolMessage(t, res.Transcript, "rg_2_2").Content, "its call id x is already used in this node")
	assert.Equal(t, "rg_3_1", tools[3].CallID)
	assert.Contains(t, toolMessage(t, res.Transcript, "y").Content, "it names no tool")
	assert.Equal(t, 1, list.executions())
	// The stored assistant turn carries the repaired ids.
	assert.Equal(t, "rg_1_1", res.Transcript[1].ToolCalls[0].ID)
}

func TestModelErrorInterruptsWithSnapshot(t *testing.T) {
	list, _, _ := sitesTools()
	boom := errors.New("503 from the model API")
	m := newScript(turn(call("a", "list_sites", `{}`)), boom)
	e := newEnv(t, m, list.Tool)
	res, err := e.loop.Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "hi")
	require.ErrorIs(t, err, boom)
	assert.Equal(t, react.Interrupted, res.Status)
	require.NotEmpty(t, res.Snapshot)
	assert.Equal(t, 1, res.Rounds, "the failed turn is not counted")
	assert.Len(t, res.Transcript, 3, "user, assistant, tool: nothing lost, nothing invented")

	m2 := newScript(turn(finish("f")))
	res2, err := e.again(m2).Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res2.Status)
	assert.Equal(t, 2, res2.Rounds)
	assert.Equal(t, res.Transcript, res2.Transcript[:3])
	assert.Equal(t, 1, list.executions(), "the executed call is not repeated")
}

// Cancelling the context stops the loop at the next safe point (here:
// between two calls of a wave) with a snapshot that resumes the wave at
// the next call; the transcript equals an uninterrupted run's.
func TestCancellationResumesAtNextCall(t *testing.T) {
	build := func(cancel func()) (*fake, *fake, *script) {
		first := newFake("first", tool.Read, func(context.Context, tool.Request) (any, error) {
			if cancel != nil {
				cancel()
			}
			return "one", nil
		})
		second := newFake("second", tool.Read, ok("two"))
		m := newScript(turn(call("a", "first", `{}`), call("b", "second", `{}`)), turn(finish("f")))
		return first, second, m
	}
	node := react.Node{Tools: []string{"first", "second"}}

	first, second, m := build(nil)
	want := newEnv(t, m, first.Tool, second.Tool).run(node, "hi")
	require.Equal(t, react.Finished, want.Status)

	ctx, cancel := context.WithCancel(context.Background())
	first, second, m = build(cancel)
	e := newEnv(t, m, first.Tool, second.Tool)
	res, err := e.loop.Run(ctx, node, "hi")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, react.Interrupted, res.Status)
	assert.Equal(t, 0, second.executions(), "stopped before the next call")
	assert.Len(t, toolMessages(res.Transcript), 1)

	got, err := e.again(m).Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, want.Transcript, got.Transcript)
	assert.Equal(t, 1, first.executions())
	assert.Equal(t, 1, second.executions())

	// A context cancelled before the run starts stops before the model.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	res, err = newEnv(t, newScript()).loop.Run(ctx, react.Node{}, "hi")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, react.Interrupted, res.Status)
	assert.NotEmpty(t, res.Snapshot)
}

// Parallel reads run concurrently, bounded, and are processed in call
// order: the messages and counting equal a sequential run's.
func TestParallelReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inflight, peak atomic.Int64
		slow := func(name string, result any, err error) *fake {
			return newFake(name, tool.Read, func(ctx context.Context, _ tool.Request) (any, error) {
				n := inflight.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(time.Second)
				inflight.Add(-1)
				return result, err
			})
		}
		r1, r2, r3 := slow("r1", "one", nil), slow("r2", nil, tool.NotFound("no such thing")), slow("r3", "three", nil)
		r4 := slow("r4", "four", nil)
		wr := newFake("w", tool.Write, ok("written"))
		mk := func() *script {
			return newScript(
				turn(call("a", "r1", `{}`), call("b", "r3", `{}`), call("c", "r4", `{}`), call("d", "r1", `{"x":1}`)),
				turn(call("e", "r1", `{"y":1}`), call("f", "r2", `{}`), call("g", "r3", `{"z":1}`), call("h", "w", `{}`)),
				turn(finish("z")),
			)
		}
		node := react.Node{Tools: []string{"r1", "r2", "r3", "r4", "w"}}
		seq := newEnv(t, mk(), r1.Tool, r2.Tool, r3.Tool, r4.Tool, wr.Tool).run(node, "hi")
		assert.Equal(t, int64(1), peak.Load(), "sequential by default")

		peak.Store(0)
		node.ParallelReads, node.MaxParallel = true, 3
		e := newEnv(t, mk(), r1.Tool, r2.Tool, r3.Tool, r4.Tool, wr.Tool)
		par := e.run(node, "hi")
		assert.Equal(t, int64(3), peak.Load(), "four reads, at most three at a time")
		assert.Equal(t, seq.Transcript, par.Transcript, "results are processed in call order")
		assert.Contains(t, toolMessage(t, par.Transcript, "g").Content, "was not run", "r3 ran in the batch but is reported as skipped after r2 failed")
		assert.Equal(t, 0, wr.executions())
		requirePaired(t, par.Transcript)
	})
}

func TestResultTruncated(t *testing.T) {
	big := newFake("big", tool.Read, ok(strings.Repeat("é", 100)))
	m := newScript(turn(call("a", "big", `{}`)), turn(finish("f")))
	e := newEnv(t, m, big.Tool)
	cfg := e.cfg
	cfg.MaxResultBytes = 21
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"big"}}, "hi")
	require.NoError(t, err)
	got := toolMessage(t, res.Transcript, "a").Content
	assert.Equal(t, "big succeeded\n\""+strings.Repeat("é", 10)+"\n[result truncated to 21 of 202 bytes; full payload: a]", got, "cut on a rune boundary, with the call id as the reference")
}

func TestDurationsUseInjectedClock(t *testing.T) {
	list, _, _ := sitesTools()
	e := newEnv(t, newScript(turn(call("a", "list_sites", `{}`)), turn(finish("f"))), list.Tool)
	e.run(react.Node{Tools: []string{"list_sites"}}, "hi")
	for _, ev := range e.rec.of("tool") {
		assert.Equal(t, time.Millisecond, ev.Dur, "the fake clock advances 1ms per reading")
	}
}

func TestSystemPromptEachRound(t *testing.T) {
	list, _, _ := sitesTools()
	m := newScript(
		turn(call("a", "list_sites", `{}`)),
		turn(call("s", react.ToolOutputSet, `{"key":"site_id","value":7,"sourceType":"tool_result","sourceRef":"a"}`)),
		turn(finish("f")),
	)
	e := newEnv(t, m, list.Tool)
	node := react.Node{Instructions: "Find the user's blog.", Tools: []string{"list_sites"}, Outputs: []react.Output{
		{Key: "site_id", Required: true}, {Key: "note"},
	}}
	e.run(node, "hi")
	reqs := m.requests()
	require.Len(t, reqs, 3)
	for i, req := range reqs {
		sys := req.Messages[0]
		assert.Equal(t, react.RoleSystem, sys.Role)
		assert.True(t, strings.HasPrefix(sys.Content, "Find the user's blog.\n\nYou complete the task by calling tools."), "round %d: instructions, then the rules", i+1)
		assert.NotContains(t, strings.ToLower(sys.Content), "write outputs")
	}
	assert.True(t, strings.HasSuffix(reqs[0].Messages[0].Content, "Required outputs not yet set: site_id."))
	assert.True(t, strings.HasSuffix(reqs[2].Messages[0].Content, "All required outputs are set: site_id."))
	names := []string{}
	for _, s := range reqs[0].Tools {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"list_sites", react.ToolApproval, react.ToolFollowUp, react.ToolOutputSet, react.ToolFinish, react.ToolFail}, names)

	// Chinese: the rules and the hint in Chinese.
	m = newScript(turn(finish("f")), turn(call("x", react.ToolFail, `{"reason":"无"}`)))
	e = newEnv(t, m, list.Tool)
	cfg := e.cfg
	cfg.Lang = 2 // prompt.Chinese
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Outputs: []react.Output{{Key: "site_id", Required: true}}}, "你好")
	require.NoError(t, err)
	sys := m.requests()[0].Messages[0].Content
	assert.True(t, strings.HasPrefix(sys, "你通过调用工具完成任务。"))
	assert.True(t, strings.HasSuffix(sys, "尚未写入的必填产出：site_id。"))
	assert.Equal(t, "必填产出尚未写入：site_id。下一步：先用 builtin_output_set 写入 site_id，无法写入时调用 builtin_node_fail", toolMessage(t, res.Transcript, "f").Content)
}

func TestNoModelAndInvalidNode(t *testing.T) {
	_, err := react.New(react.Config{})
	require.ErrorIs(t, err, react.ErrNoModel)

	list, _, _ := sitesTools()
	e := newEnv(t, newScript(), list.Tool)
	many := make([]react.Output, 40) // past the size where duplicates are found with a map
	for i := range many {
		many[i].Key = fmt.Sprintf("k%d", i)
	}
	many[len(many)-1].Key = "k0"
	tests := []struct {
		name   string
		node   react.Node
		reason string
	}{
		{"unknown tool", react.Node{Tools: []string{"nope"}}, "every visible tool must be in the catalog"},
		{"builtin listed", react.Node{Tools: []string{react.ToolFinish}}, "built-in tools are always visible"},
		{"duplicate tool", react.Node{Tools: []string{"list_sites", "list_sites"}}, "a tool listed twice"},
		{"empty key", react.Node{Outputs: []react.Output{{}}}, "an output needs a key"},
		{"duplicate key", react.Node{Outputs: []react.Output{{Key: "a"}, {Key: "a"}}}, "keys are unique"},
		{"duplicate key among many", react.Node{Outputs: many}, "keys are unique however many there are"},
		{"bad source", react.Node{Outputs: []react.Output{{Key: "a", Accepts: []react.SourceType{9}}}}, "source types must be valid"},
		{"negative limit", react.Node{MaxRounds: -1}, "limits are not negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.loop.Run(context.Background(), tt.node, "hi")
			assert.ErrorIs(t, err, react.ErrInvalidNode, "Run(%+v): %s", tt.node, tt.reason)
		})
	}
}

// A custom handler replaces the guard chain; an error from it interrupts
// the run (infrastructure), and a zero observation is answered TOOL_ERROR.
func TestCustomHandler(t *testing.T) {
	list, _, _ := sitesTools()
	boom := errors.New("store unreachable")
	var n atomic.Int64
	m := newScript(turn(call("a", "list_sites", `{}`)), turn(call("b", "list_sites", `{"x":1}`)), turn(finish("f")))
	e := newEnv(t, m, list.Tool)
	cfg := e.cfg
	cfg.Handler = func(ctx context.Context, c invoker.Call) (observation.Observation, error) {
		switch n.Add(1) {
		case 1:
			return observation.Observation{}, boom
		case 2:
			return observation.Observation{}, nil
		}
		return observation.Success("ok", nil), nil
	}
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "hi")
	require.ErrorIs(t, err, boom)
	require.Equal(t, react.Interrupted, res.Status)
	res, err = l.Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	assert.Equal(t, "list_sites failed: no verdict. Next: do not repeat the same call; continue without it if you can, otherwise call builtin_node_fail with the reason",
		toolMessage(t, res.Transcript, "a").Content, "the call interrupted by the error is dispatched again on resume")
	assert.Equal(t, "ok", toolMessage(t, res.Transcript, "b").Content)
	assert.Equal(t, 0, list.executions(), "the custom handler replaced the chain")
}

// A loop keeps what it derives from the last node's tools (the specs, the
// visible tools, the system prompt) for the next run: runs of different
// nodes on one loop, in turn, each see exactly their own tools, instructions
// and built-ins, and the calls of a tool another node sees are refused.
func TestNodesInTurnSeeTheirOwnTools(t *testing.T) {
	list, broken, create := sitesTools()
	nodes := []react.Node{
		{Name: "read", Tools: []string{"list_sites"}, Instructions: "Read."},
		{Name: "write", Tools: []string{"create_site"}, Instructions: "Write."},
		{Name: "read-out", Tools: []string{"list_sites"}, Instructions: "Read.", Outputs: []react.Output{{Key: "k"}}},
		{Name: "both", Tools: []string{"list_sites", "get_stats"}, Instructions: "Read."},
	}
	var turns []any
	for range 3 {
		for range nodes {
			turns = append(turns, turn(call("a", "list_sites", `{}`), call("b", "create_site", `{}`)), turn(finish("f")))
		}
	}
	m := newScript(turns...)
	e := newEnv(t, m, list.Tool, broken.Tool, create.Tool)
	var want [][]string
	for range 3 {
		for _, n := range nodes {
			res, err := e.loop.Run(context.Background(), n, "go")
			require.NoError(t, err)
			require.Equal(t, react.Finished, res.Status, "node %s", n.Name)
			first := res.Calls[0]
			if n.Tools[0] == "list_sites" {
				assert.Equal(t, outcome.Success, first.Outcome, "node %s sees list_sites", n.Name)
			} else {
				assert.Equal(t, errcode.CatalogDenied, first.Code, "node %s does not see list_sites", n.Name)
			}
			names := slices.Clone(n.Tools)
			names = append(names, react.ToolApproval, react.ToolFollowUp, react.ToolFail, react.ToolFinish)
			if len(n.Outputs) > 0 {
				names = append(names, react.ToolOutputSet)
			}
			want = append(want, names, names)
		}
	}
	reqs := m.requests()
	require.Len(t, reqs, len(want))
	prompts := map[string][]string{}
	for i, req := range reqs {
		var got []string
		for _, s := range req.Tools {
			got = append(got, s.Name)
		}
		assert.ElementsMatch(t, want[i], got, "request %d", i)
		node := nodes[(i/2)%len(nodes)]
		assert.True(t, strings.HasPrefix(req.Messages[0].Content, node.Instructions), "request %d: system prompt of node %s", i, node.Name)
		prompts[node.Name] = append(prompts[node.Name], req.Messages[0].Content)
	}
	for name, ps := range prompts {
		for _, p := range ps {
			assert.Equal(t, ps[0], p, "node %s: the same system prompt in every round of every run", name)
		}
	}
	assert.Equal(t, prompts["read"][0], prompts["read-out"][0], "the same instructions and no required output: the same prompt")
	assert.NotEqual(t, prompts["read"][0], prompts["write"][0], "other instructions: another prompt")
}

// Runs of different nodes on one loop at the same time (a service with
// several agents) each see exactly their own tools: the plan a loop keeps
// for the last node is swapped and read concurrently (run under -race).
func TestNodesConcurrentlySeeTheirOwnTools(t *testing.T) {
	list, broken, create := sitesTools()
	cat, err := tool.NewCatalog(list.Tool, broken.Tool, create.Tool)
	require.NoError(t, err)
	nodes := []react.Node{
		{Name: "read", Tools: []string{"list_sites"}},
		{Name: "stats", Tools: []string{"get_stats"}},
		{Name: "both", Tools: []string{"list_sites", "get_stats"}, Outputs: []react.Output{{Key: "k"}}},
	}
	model := react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
		if len(req.Messages) > 2 { // the call was answered: finish
			return turn(finish("f")), nil
		}
		return turn(call("a", "list_sites", `{}`)), nil
	})
	l, err := react.New(react.Config{Model: model, Tools: cat, Guards: memoryStores(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8*30)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				n := nodes[(g+i)%len(nodes)]
				res, err := l.Run(context.Background(), n, "go")
				if err != nil {
					errs <- err
					return
				}
				seesList := slices.Contains(n.Tools, "list_sites")
				if got := res.Calls[0].Outcome == outcome.Success; got != seesList {
					errs <- fmt.Errorf("node %s: list_sites answered %v/%v; the node sees it: %v", n.Name, res.Calls[0].Outcome, res.Calls[0].Code, seesList)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
