package react_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// TestDeclinedWriteNeverRuns: after the user declined a write, a model
// that calls it again — with the same arguments or changed ones, in the
// turn right after the decision — never gets it executed: the write gate
// defers it for approval again (the model-driven flow), or the run
// suspends again for it (HostApproval). The decision is delivered through
// Resume (the snapshot) and through ResumeRun (the run store), in another
// Loop. A decline recorded as an approval, or any grant left by a decline,
// makes the same-arguments rows fail.
func TestDeclinedWriteNeverRuns(t *testing.T) {
	for _, via := range []string{"Resume", "ResumeRun"} {
		for _, host := range []bool{false, true} {
			for _, args := range []string{`{"name":"blog"}`, `{"name":"blog2"}`, `{ "name" : "blog" }`} {
				name := via + "/model-driven/" + args
				if host {
					name = via + "/host/" + args
				}
				t.Run(name, func(t *testing.T) {
					declinedWriteCalledAgain(t, via, host, args)
				})
			}
		}
	}
}

func declinedWriteCalledAgain(t *testing.T, via string, host bool, args string) {
	ctx := context.Background()
	list, _, create := sitesTools()
	node := approvalNode
	first := approvalBefore()
	declinedCall := "a" // the call the decline answers
	if host {
		node = hostNode()
		first = newScript(turn(call("w1", "create_site", `{"name":"blog"}`)))
		declinedCall = "w1"
	}
	store := runstore.NewMemory()
	e := newEnv(t, first, list.Tool, create.Tool)
	e.cfg.Runs = store
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	e.loop = l
	res := e.run(node, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	require.Equal(t, react.SuspendApproval, res.Suspension.Kind)

	// The model calls the declined write again at once, then asks for
	// approval again (a model that does not take no for an answer).
	again := newScript(
		turn(call("w2", "create_site", args)),
		turn(call("a2", react.ToolApproval, `{"tool":"create_site","reason":"please"}`)),
	)
	var got react.Result
	switch via {
	case "Resume":
		got, err = e.again(again).Resume(ctx, res.Snapshot, react.Decline(res.Suspension.Ticket, "too expensive"))
	case "ResumeRun":
		got, err = e.again(again).ResumeRun(ctx, "run-1", react.Decline(res.Suspension.Ticket, "too expensive"))
	}
	require.NoError(t, err)
	assert.Zero(t, create.executions(), "a declined write never runs, whatever the model calls next")
	assert.Equal(t, "the user declined the call of create_site: too expensive", toolMessage(t, got.Transcript, declinedCall).Content)
	require.Equal(t, react.Suspended, got.Status, "the write waits for a new decision")
	require.Equal(t, react.SuspendApproval, got.Suspension.Kind)
	assert.Equal(t, "w2", got.Suspension.Approval.CallID, "the new call is the one that waits, not the declined one")
	if !host {
		w2 := toolMessage(t, got.Transcript, "w2")
		assert.Contains(t, w2.Content, "needs the user's approval", "the write gate defers it again")
		var rep react.CallReport
		for _, c := range got.Calls {
			if c.CallID == "w2" {
				rep = c
			}
		}
		assert.Equal(t, errcode.ApprovalRequired, rep.Code)
		assert.Equal(t, react.CallDeferred, rep.Call)
		assert.Equal(t, react.ExecNone, rep.Execution)
	}
	for _, c := range got.Calls {
		if c.Tool == "create_site" {
			assert.Equal(t, react.ExecNone, c.Execution, "call %s of create_site did not execute", c.CallID)
		}
	}

	// Declined a second time: still nothing runs, and the model's next
	// attempt is deferred again.
	third := newScript(turn(call("w3", "create_site", args)), turn(call("x", react.ToolFail, `{"reason":"the user declined"}`)))
	switch via {
	case "Resume":
		got, err = e.again(third).Resume(ctx, got.Snapshot, react.Decline(got.Suspension.Ticket, "no"))
	case "ResumeRun":
		got, err = e.again(third).ResumeRun(ctx, "run-1", react.Decline(got.Suspension.Ticket, "no"))
	}
	require.NoError(t, err)
	assert.Zero(t, create.executions(), "declined twice, never run")
	if !host {
		assert.Equal(t, react.Failed, got.Status)
		assert.Contains(t, toolMessage(t, got.Transcript, "w3").Content, "needs the user's approval")
	}
	gated, _, err := e.guards.Approvals.Gated(ctx, "run-1")
	require.NoError(t, err)
	for _, fp := range []string{gated.Fingerprint, res.Suspension.Approval.Fingerprint} {
		if fp == "" {
			continue
		}
		ok, err := e.guards.Approvals.Consume(ctx, "run-1", fp)
		require.NoError(t, err)
		assert.False(t, ok, "no decline left a grant behind")
	}
}
