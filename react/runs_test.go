package react_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// runsEnv is an env whose loops keep stopped runs in a run store.
func runsEnv(t *testing.T, m *script, store runstore.Store) (*env, *fake) {
	t.Helper()
	list, _, create := sitesTools()
	e := newEnv(t, m, list.Tool, create.Tool)
	e.cfg.Runs = store
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	e.loop = l
	return e, create
}

func TestRuns_SuspendedRunIsKeptUntilItEnds(t *testing.T) {
	store := runstore.NewMemory()
	e, create := runsEnv(t, approvalBefore(), store)
	res := e.run(approvalNode, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)

	rec, ok, err := store.Get(context.Background(), "run-1")
	require.NoError(t, err)
	require.True(t, ok, "a suspended run is saved")
	assert.Equal(t, runstore.Approval, rec.Kind)
	assert.Equal(t, "create", rec.Node)
	assert.Equal(t, react.Owner{}, rec.Owner, "a run started without WithOwner is the zero owner's")
	assert.Equal(t, res.Snapshot, rec.Snapshot)
	p, err := e.loop.Pending(context.Background(), "run-1")
	require.NoError(t, err)
	require.NotNil(t, p.Suspension)
	require.NotNil(t, p.Suspension.Approval)
	assert.Equal(t, "create_site", p.Suspension.Approval.Tool, "the inbox reads the sealed call")
	assert.JSONEq(t, `{"name":"blog"}`, string(p.Suspension.Approval.Args))
	assert.Equal(t, "the user asked for it", p.Suspension.Reason)
	assert.Equal(t, res.Suspension.Ticket, p.Suspension.Ticket)
	assert.False(t, rec.Stopped.IsZero(), "the stop time comes from Config.Now")

	page, err := store.List(context.Background(), runstore.Filter{Kind: runstore.Approval})
	require.NoError(t, err)
	require.Len(t, page.Runs, 1, "the approvals inbox lists it")

	got, err := e.again(approvalAfter()).ResumeRun(context.Background(), "run-1", react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, 1, create.executions())
	_, ok, err = store.Get(context.Background(), "run-1")
	require.NoError(t, err)
	assert.False(t, ok, "a run that ended is deleted from the store")

	_, err = e.again(approvalAfter()).ResumeRun(context.Background(), "run-1", react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, react.ErrAlreadyResumed, "the same approval again, after the run ended: already decided")
	var decided *react.DecidedError
	require.ErrorAs(t, err, &decided)
	assert.Equal(t, runstore.Approved, decided.Decided.Kind)
	_, err = e.again(approvalAfter()).ResumeRun(context.Background(), "run-1", react.Approve(""))
	require.ErrorIs(t, err, react.ErrRunNotFound, "without a ticket of the run, it is not found")
	assert.Equal(t, 1, create.executions())
}

func TestRuns_FollowUpAndInterruption(t *testing.T) {
	store := runstore.NewMemory()
	m := newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which space?"}`)), context.DeadlineExceeded)
	e, _ := runsEnv(t, m, store)
	res := e.run(react.Node{Name: "ask"}, "hi")
	require.Equal(t, react.Suspended, res.Status)
	rec, _, err := store.Get(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, runstore.FollowUp, rec.Kind)
	p, err := e.loop.Pending(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, "Which space?", p.Suspension.Question)

	got, err := e.loop.ResumeRun(context.Background(), "run-1", react.Answer(res.Suspension.Ticket, "the red one"))
	require.ErrorIs(t, err, context.DeadlineExceeded, "the model fails after the answer")
	require.Equal(t, react.Interrupted, got.Status)
	rec, _, err = store.Get(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, runstore.Interrupted, rec.Kind, "the interrupted run replaces the suspended one")
	assert.Equal(t, got.Snapshot, rec.Snapshot)

	e.model.turns = append(e.model.turns, newScript(turn(finish("f"))).turns...)
	got, err = e.loop.ResumeRun(context.Background(), "run-1", react.Continue())
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
}

func TestRuns_Errors(t *testing.T) {
	e := newEnv(t, newScript())
	_, err := e.loop.ResumeRun(context.Background(), "run-1", react.Approve("t"))
	assert.ErrorIs(t, err, react.ErrNoRunStore)

	broken := &failingRuns{Store: runstore.NewMemory()}
	e2, _ := runsEnv(t, approvalBefore(), broken)
	res, err := e2.loop.Run(context.Background(), approvalNode, "create a site called blog")
	require.ErrorIs(t, err, errStore, "a run store failure reaches the host")
	require.Equal(t, react.Suspended, res.Status)
	require.NotEmpty(t, res.Snapshot, "with the snapshot intact")

	broken.getFails = true
	_, err = e2.loop.ResumeRun(context.Background(), "run-1", react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, errStore)

	got, err := e2.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, errStore, "the finished run cannot be deleted from the broken store")
	assert.Equal(t, react.Finished, got.Status, "but the run finished")
}

type failingRuns struct {
	runstore.Store
	getFails bool
}

func (f *failingRuns) Save(context.Context, runstore.Run) error { return errStore }
func (f *failingRuns) Delete(context.Context, string) error     { return errStore }
func (f *failingRuns) Get(ctx context.Context, id string) (runstore.Run, bool, error) {
	if f.getFails {
		return runstore.Run{}, false, errStore
	}
	return f.Store.Get(ctx, id)
}
