package react_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
)

// hostNode is a node of list_sites and create_site with host-driven
// approval.
func hostNode() react.Node {
	return react.Node{Name: "sites", Tools: []string{"list_sites", "create_site"}, HostApproval: true}
}

// TestHostApproval_SuspendsAtOnce: with Node.HostApproval a gated write
// suspends the run in the turn the model calls it — the same approval
// suspension builtin_node_approval gives, naming the write call — without
// a DEFERRED message to the model and without another model turn. Resumed
// in another Loop with Approve, the write runs at once, exactly once, and
// its own result answers the model's call.
func TestHostApproval_SuspendsAtOnce(t *testing.T) {
	list, _, create := sitesTools()
	m := newScript(turn(call("w", "create_site", `{"name":"blog"}`)))
	e := newEnv(t, m, list.Tool, create.Tool)
	res := e.run(hostNode(), "create a site called blog")

	require.Equalf(t, react.Suspended, res.Status, "status = %v; want the approval suspension at the write", res.Status)
	require.NotNil(t, res.Suspension)
	s := res.Suspension
	assert.Equal(t, react.SuspendApproval, s.Kind)
	assert.Equal(t, "w", s.CallID, "the decision answers the write call itself")
	require.NotNil(t, s.Approval)
	assert.Equal(t, "w", s.Approval.CallID)
	assert.Equal(t, "create_site", s.Approval.Tool)
	assert.JSONEq(t, `{"name":"blog"}`, string(s.Approval.Args))
	assert.NotEmpty(t, s.Approval.Fingerprint)
	assert.Len(t, m.requests(), 1, "the run suspended in the model's first turn")
	assert.Empty(t, toolMessages(res.Transcript), "no DEFERRED message reached the model: the write waits for the decision")
	assert.Zero(t, create.executions())
	assert.Equal(t, []string{"started", "suspended"}, e.rec.kinds())

	m2 := newScript(func(req react.Request) react.Response {
		last := req.Messages[len(req.Messages)-1]
		require.Equal(t, react.RoleTool, last.Role)
		require.Equal(t, "w", last.ToolCallID)
		return turn(finish("f"))
	})
	res, err := e.again(m2).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equalf(t, react.Finished, res.Status, "status after approval = %v (%v)", res.Status, res.Failure)
	assert.Equal(t, 1, create.executions(), "the approved write ran once")
	w := toolMessage(t, res.Transcript, "w")
	assert.False(t, w.IsError)
	assert.Equal(t, "create_site succeeded\n{\"id\":42}", w.Content, "the write's own result answers the model's call")
	requirePaired(t, res.Transcript)
	assert.Len(t, m2.requests(), 1, "the model's next turn sees the result")
}

// TestHostApproval_Decline: a declined write never runs; its call is
// answered RESULT_APPROVAL_DECLINED with the user's reason, the rest of the
// turn is skipped, and the model goes on. A repeated write suspends again.
func TestHostApproval_Decline(t *testing.T) {
	list, _, create := sitesTools()
	m := newScript(turn(call("w", "create_site", `{"name":"blog"}`), call("l", "list_sites", `{}`)))
	e := newEnv(t, m, list.Tool, create.Tool)
	res := e.run(hostNode(), "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	assert.Zero(t, list.executions(), "the calls after the write wait for the decision too")

	m2 := newScript(turn(call("w2", "create_site", `{"name":"blog"}`)))
	res, err := e.again(m2).Resume(context.Background(), res.Snapshot, react.Decline(res.Suspension.Ticket, "not now"))
	require.NoError(t, err)
	assert.Zero(t, create.executions(), "a declined write never runs")
	assert.Equal(t, "the user declined the call of create_site: not now", toolMessage(t, res.Transcript, "w").Content)
	assert.True(t, strings.HasPrefix(toolMessage(t, res.Transcript, "l").Content, "list_sites was not run because an earlier call of the same turn, create_site, exited the node"),
		"the rest of the turn is skipped: %q", toolMessage(t, res.Transcript, "l").Content)
	assert.Zero(t, res.Stalls, "a decline is a legitimate answer, not a stall")
	require.Equal(t, react.Suspended, res.Status, "the model wrote again: the run suspends again")
	assert.Equal(t, "w2", res.Suspension.CallID)
	assert.Equal(t, "w2", res.Suspension.Approval.CallID)
}

// TestHostApproval_RestOfTheTurnGoesOn: a write in the middle of a turn
// suspends after the calls before it ran; approved, it runs and the calls
// after it run too, in order, as if the approval had been given first.
func TestHostApproval_RestOfTheTurnGoesOn(t *testing.T) {
	list, _, create := sitesTools()
	m := newScript(turn(call("a", "list_sites", `{}`), call("w", "create_site", `{"name":"blog"}`), call("b", "list_sites", `{"page":2}`)))
	e := newEnv(t, m, list.Tool, create.Tool)
	res := e.run(hostNode(), "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	assert.Equal(t, 1, list.executions(), "the read before the write ran")
	assert.Len(t, toolMessages(res.Transcript), 1)

	res, err := e.again(newScript(turn(finish("f")))).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 1, create.executions())
	assert.Equal(t, 2, list.executions(), "the read after the write ran after the approval")
	var order []string
	for _, msg := range toolMessages(res.Transcript) {
		order = append(order, msg.ToolCallID)
	}
	assert.Equal(t, []string{"a", "w", "b", "f"}, order, "the tool messages keep the call order")
	requirePaired(t, res.Transcript)
}

// TestHostApproval_ModelThatNeverAsks: the failure that motivated the
// option — a model that keeps calling the write and never calls
// builtin_node_approval burns every round in the default flow, and
// finishes in one approval with HostApproval.
func TestHostApproval_ModelThatNeverAsks(t *testing.T) {
	n := 0
	writer := func(react.Request) react.Response {
		n++
		return turn(call(fmt.Sprintf("w%d", n), "create_site", `{"name":"blog"}`))
	}
	turns := make([]any, 0, 25)
	for range 25 {
		turns = append(turns, writer)
	}

	_, _, create := sitesTools()
	e := newEnv(t, newScript(turns...), create.Tool)
	node := react.Node{Name: "sites", Tools: []string{"create_site"}, MaxRounds: 20}
	res := e.run(node, "create a site called blog")
	assert.Equal(t, react.Failed, res.Status, "model-driven: the write is deferred every round")
	assert.Equal(t, react.FailedRoundLimit, res.Failure.Kind)
	assert.Zero(t, create.executions())

	_, _, create = sitesTools()
	m := newScript(writer, turn(finish("f")))
	e = newEnv(t, m, create.Tool)
	node.HostApproval = true
	res = e.run(node, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	res, err := e.loop.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status, "host-driven: one approval and done")
	assert.Equal(t, 1, create.executions())
	assert.Equal(t, 2, res.Rounds)
}

// TestHostApproval_ResumedOnce: a host-approval snapshot is resumed once,
// like any snapshot; the second resume runs nothing.
func TestHostApproval_ResumedOnce(t *testing.T) {
	_, _, create := sitesTools()
	e := newEnv(t, newScript(turn(call("w", "create_site", `{"name":"blog"}`))), create.Tool)
	res := e.run(react.Node{Name: "sites", Tools: []string{"create_site"}, HostApproval: true}, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	snap := res.Snapshot

	_, err := e.again(newScript(turn(finish("f")))).Resume(context.Background(), snap, react.Approve(ticketOf(t, e.loop, snap)))
	require.NoError(t, err)
	_, err = e.again(newScript(turn(finish("f")))).Resume(context.Background(), snap, react.Approve(ticketOf(t, e.loop, snap)))
	require.ErrorIs(t, err, react.ErrAlreadyResumed)
	_, err = e.again(newScript(turn(finish("f")))).Resume(context.Background(), snap, react.Answer(ticketOf(t, e.loop, snap), "yes"))
	require.Error(t, err, "an answer does not fit an approval suspension")
	assert.Equal(t, 1, create.executions())
}

// TestHostApproval_DefaultIsModelDriven: without the option the model is
// answered DEFERRED APPROVAL_REQUIRED and the run goes on, as the
// specification says.
func TestHostApproval_DefaultIsModelDriven(t *testing.T) {
	_, _, create := sitesTools()
	e := newEnv(t, newScript(turn(call("w", "create_site", `{"name":"blog"}`)), turn(finish("f"))), create.Tool)
	res := e.run(react.Node{Name: "sites", Tools: []string{"create_site"}}, "create a site called blog")
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, "DEFERRED APPROVAL_REQUIRED", outcomeOf(t, e.rec, "w"))
}
