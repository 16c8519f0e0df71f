package react_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// approvalScript drives the specification's story: list, write (gated),
// approval (suspends); after the decision: the write again, then finish.
func approvalBefore() *script {
	return newScript(
		turn(call("l", "list_sites", `{}`)),
		turn(call("w1", "create_site", `{"name":"blog"}`)),
		turn(call("a", react.ToolApproval, `{"tool":"create_site","reason":"the user asked for it"}`), call("extra", "list_sites", `{"p":2}`)),
	)
}

func approvalAfter() *script {
	return newScript(
		turn(call("w2", "create_site", `{"name":"blog"}`)),
		turn(call("s", react.ToolOutputSet, `{"key":"site_id","value":42,"sourceType":"tool_result","sourceRef":"w2"}`)),
		turn(finish("f")),
	)
}

var approvalNode = react.Node{Name: "create", Tools: []string{"list_sites", "create_site"}, Outputs: []react.Output{{Key: "site_id", Required: true}}}

func TestSnapshot_Envelope(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res.Snapshot, &env))
	assert.JSONEq(t, `"reactguard.react.snapshot"`, string(env["format"]))
	assert.JSONEq(t, `3`, string(env["version"]))
	assert.Regexp(t, `^"[0-9a-f]{16}"$`, string(env["key"]), "the key is named by an id, never included")
	assert.Regexp(t, `^"hmac-sha256:[0-9a-f]{64}"$`, string(env["mac"]))
	assert.NotContains(t, string(res.Snapshot), "checksum")
	assert.Len(t, toolMessages(res.Transcript), 2, "l and w1; a and extra are answered on resume")
}

func TestSnapshot_Refused(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	snap := res.Snapshot
	ticket := res.Suspension.Ticket

	edit := func(f func(state map[string]any)) []byte {
		var env map[string]any
		require.NoError(t, json.Unmarshal(snap, &env))
		f(env["state"].(map[string]any))
		b, err := json.Marshal(env)
		require.NoError(t, err)
		return b
	}
	envEdit := func(f func(env map[string]any)) []byte {
		var env map[string]any
		require.NoError(t, json.Unmarshal(snap, &env))
		f(env)
		b, err := json.Marshal(env)
		require.NoError(t, err)
		return b
	}
	tests := []struct {
		name string
		in   []byte
		want error
		why  string
	}{
		{"empty", nil, react.ErrSnapshotCorrupt, "no bytes"},
		{"truncated", snap[:len(snap)/2], react.ErrSnapshotCorrupt, "a cut snapshot does not parse"},
		{"not an object", []byte(`[1,2]`), react.ErrSnapshotCorrupt, "not an envelope"},
		{"foreign object", []byte(`{"hello":"world"}`), react.ErrSnapshotForeign, "no format tag"},
		{"other format", envEdit(func(e map[string]any) { e["format"] = "langgraph.checkpoint" }), react.ErrSnapshotForeign, "another library's document"},
		{"version 1", envEdit(func(e map[string]any) { e["version"] = 1 }), react.ErrSnapshotForeign, "unsealed snapshots are no longer read"},
		{"other version", envEdit(func(e map[string]any) { e["version"] = 4 }), react.ErrSnapshotForeign, "a version this package does not read"},
		{"edited stalls", edit(func(s map[string]any) { s["stalls"] = 5 }), react.ErrSnapshotSeal, "the seal covers the content"},
		{"edited transcript", []byte(strings.Replace(string(snap), "create a site called blog", "delete every site", 1)), react.ErrSnapshotSeal, "the seal covers the user's words"},
		{"edited snapshot id", edit(func(s map[string]any) { s["id"] = "another-id" }), react.ErrSnapshotSeal, "the identity that is claimed is sealed too"},
		{"bad mac", envEdit(func(e map[string]any) { e["mac"] = "hmac-sha256:00" }), react.ErrSnapshotSeal, "a seal that does not match"},
		{"no mac", envEdit(func(e map[string]any) { delete(e, "mac") }), react.ErrSnapshotSeal, "an unsealed snapshot"},
		{"unknown key", envEdit(func(e map[string]any) { e["key"] = "0123456789abcdef" }), react.ErrSnapshotKey, "a key this loop does not hold"},
		{"edited call report", edit(func(s map[string]any) {
			s["calls"].([]any)[0].(map[string]any)["execution"] = "timeout"
		}), react.ErrSnapshotSeal, "the seal covers the calls' layers"},
		{"undefined call status", edit(func(s map[string]any) {
			s["calls"].([]any)[0].(map[string]any)["call"] = "fine"
		}), react.ErrSnapshotCorrupt, "an unknown status name does not decode"},
		{"unknown field", envEdit(func(e map[string]any) { e["extra"] = 1 }), react.ErrSnapshotCorrupt, "strict envelope"},
		{"old checksum field", envEdit(func(e map[string]any) { e["checksum"] = "sha256:00" }), react.ErrSnapshotCorrupt, "strict envelope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.loop.Resume(context.Background(), tt.in, react.Approve(ticket))
			require.ErrorIs(t, err, tt.want, "Resume(%s): %s", tt.name, tt.why)
			assert.ErrorIs(t, err, react.ErrSnapshot)
		})
	}
	assert.Equal(t, 0, create.executions(), "no refused snapshot executed anything")
	got, err := e.again(newScript(turn(call("x", react.ToolFail, `{}`)))).Resume(context.Background(), snap, react.Approve(ticket))
	require.NoError(t, err, "the refusals did not claim the genuine snapshot")
	assert.Equal(t, react.Failed, got.Status)
}

func TestSnapshot_DecisionMustFit(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	for _, d := range []react.Decision{react.Answer(res.Suspension.Ticket, "yes"), react.Continue(), {}} {
		_, err := e.loop.Resume(context.Background(), res.Snapshot, d)
		assert.ErrorIs(t, err, react.ErrDecision, "an approval takes Approve or Decline, not %v", d)
	}

	m := newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which space?"}`)))
	e2 := newEnv(t, m)
	res = e2.run(react.Node{}, "hi")
	for _, d := range []react.Decision{react.Approve(res.Suspension.Ticket), react.Decline(res.Suspension.Ticket, ""), react.Answer(res.Suspension.Ticket, "  ")} {
		_, err := e2.loop.Resume(context.Background(), res.Snapshot, d)
		assert.ErrorIs(t, err, react.ErrDecision, "a follow-up takes a non-empty Answer, not %v", d)
	}

	m = newScript(text("hmm"), context.Canceled)
	e3 := newEnv(t, m)
	res, err := e3.loop.Run(context.Background(), react.Node{}, "hi")
	require.Error(t, err)
	require.Equal(t, react.Interrupted, res.Status)
	_, err = e3.loop.Resume(context.Background(), res.Snapshot, react.Approve("t"))
	assert.ErrorIs(t, err, react.ErrTicket, "an interrupted run has no suspension a person's decision could name")
}

// Resuming in a new Loop value over the same stores, as another process
// sharing the stores and the snapshot key would, yields the same transcript
// as resuming in the same Loop.
func TestResume_NewLoopEquivalence(t *testing.T) {
	run := func(newLoop bool) (react.Result, *fake) {
		list, _, create := sitesTools()
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		res := e.run(approvalNode, "create a site called blog")
		require.Equal(t, react.Suspended, res.Status)
		snap := append([]byte(nil), res.Snapshot...)
		l := e.loop
		if newLoop {
			l = e.again(approvalAfter())
		} else {
			e.model.turns = append(e.model.turns, approvalAfter().turns...)
		}
		got, err := l.Resume(context.Background(), snap, react.Approve(res.Suspension.Ticket))
		require.NoError(t, err)
		return got, create
	}
	same, c1 := run(false)
	other, c2 := run(true)
	require.Equal(t, react.Finished, same.Status)
	require.Equal(t, react.Finished, other.Status)
	assert.Equal(t, same.Transcript, other.Transcript)
	assert.Equal(t, same.Outputs, other.Outputs)
	assert.Equal(t, same.Rounds, other.Rounds)
	assert.Equal(t, 1, c1.executions())
	assert.Equal(t, 1, c2.executions())
	requirePaired(t, other.Transcript)
	assert.Equal(t, "the user approved the call of create_site", toolMessage(t, other.Transcript, "a").Content)
	assert.Contains(t, toolMessage(t, other.Transcript, "extra").Content, "was not run", "the calls after a suspending call are skipped on resume")
	assert.JSONEq(t, "42", string(other.Outputs["site_id"].Value))
}

// The evidence of an in-process ledger travels in the snapshot: a loop
// whose ledger never saw the run resumes it with its evidence (the
// approvals and the write ledger are server-side truth and must be shared).
func TestResume_EvidenceTravelsInSnapshot(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	cfg := e.cfg
	cfg.Model = approvalAfter()
	cfg.Guards = &guard.Options{Ledger: evidence.NewMemory(), Approvals: e.guards.Approvals, WriteLedger: e.guards.WriteLedger}
	cfg.KeepRunState = true
	l, err := react.New(cfg)
	require.NoError(t, err)
	got, err := l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, "SUCCESS ", outcomeOf(t, e.rec, "s"), "the output cites w2, recorded in the new ledger")
	recs, err := cfg.Guards.Ledger.Records(context.Background(), "run-1")
	require.NoError(t, err)
	assert.NotEmpty(t, recs, "the fresh ledger holds the imported evidence")
}

// An approval binds to the server-side truth: a loop whose Approvals store
// never gated the run's call (fresh stores, another service) refuses the
// approval and executes nothing, and the snapshot stays resumable where the
// truth is.
func TestResume_ApprovalNeedsTheGatedCall(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	cfg := e.cfg
	cfg.Model = approvalAfter()
	cfg.Guards = memoryStores()
	l, err := react.New(cfg)
	require.NoError(t, err)
	got, err := l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, guard.ErrNotPending)
	assert.Equal(t, react.Suspended, got.Status)
	assert.Equal(t, res.Snapshot, got.Snapshot, "the same snapshot, to give the decision again")
	assert.Equal(t, 0, create.executions())

	got, err = e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err, "the refused resume released its claim")
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, 1, create.executions())
}

// A snapshot is resumed once: the second resume is refused before it does
// anything, and the approved write runs once.
func TestResume_ApproveTwiceRefused(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)

	first, err := e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, first.Status)
	for _, d := range []react.Decision{react.Approve(res.Suspension.Ticket), react.Decline(res.Suspension.Ticket, "changed my mind")} {
		again := newScript(turn(call("w3", "create_site", `{"name":"blog"}`)), turn(call("x", react.ToolFail, `{}`)))
		second, err := e.again(again).Resume(context.Background(), res.Snapshot, d)
		require.ErrorIs(t, err, react.ErrAlreadyResumed, "resume #2 with %v", d)
		assert.NotErrorIs(t, err, react.ErrSnapshot, "an already resumed snapshot is not a broken one")
		assert.Zero(t, second.Status, "nothing ran")
		assert.Empty(t, again.reqs, "the model was not called")
	}
	assert.Equal(t, 1, create.executions())
}

// A declined approval is a legitimate result, not a rule violation.
func TestResume_Declined(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	m := newScript(turn(call("x", react.ToolFail, `{"reason":"the user declined"}`)))
	got, err := e.again(m).Resume(context.Background(), res.Snapshot, react.Decline(res.Suspension.Ticket, "too expensive"))
	require.NoError(t, err)
	msg := toolMessage(t, got.Transcript, "a")
	assert.Equal(t, "the user declined the call of create_site: too expensive", msg.Content)
	assert.False(t, msg.IsError, "a decline is a SUCCESS of the approval call")
	assert.Equal(t, "SUCCESS ", outcomeOf(t, e.rec, "a"))
	assert.Empty(t, e.rec.of("stall"), "no stall is counted for a decline")
	assert.Equal(t, 0, create.executions())
	gated, ok, err := e.guards.Approvals.Gated(context.Background(), "run-1")
	require.NoError(t, err)
	assert.False(t, ok, "the gated call is cleared: %+v", gated)
	assert.Equal(t, react.Failed, got.Status)
}

// A store failure while applying a decision returns the same suspended
// snapshot and its suspension's ticket, so the decision can be given again
// with what the host got back.
func TestResume_StoreFailureKeepsSnapshot(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	cfg := e.cfg
	cfg.Model = approvalAfter()
	cfg.Guards = &guard.Options{Ledger: e.guards.Ledger, Approvals: failingApprovals{e.guards.Approvals}, WriteLedger: e.guards.WriteLedger}
	l, err := react.New(cfg)
	require.NoError(t, err)
	got, err := l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, errStore)
	assert.Equal(t, react.Suspended, got.Status)
	assert.Equal(t, res.Snapshot, got.Snapshot)
	require.NotNil(t, got.Suspension, "the suspension to decide again with")
	assert.Equal(t, res.Suspension.Ticket, got.Suspension.Ticket)
	assert.Equal(t, 0, create.executions())

	got, err = e.again(approvalAfter()).Resume(context.Background(), got.Snapshot, react.Approve(got.Suspension.Ticket))
	require.NoError(t, err, "the decision is given again with the same snapshot once the store is back")
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, 1, create.executions())
}

var errStore = &storeError{}

type storeError struct{}

func (*storeError) Error() string { return "store unreachable" }

type failingApprovals struct{ guard.Approvals }

func (failingApprovals) Approve(context.Context, string, string, string) error { return errStore }

var _ = tool.Read
