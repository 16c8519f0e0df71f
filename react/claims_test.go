package react_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// mortalClaims is a claim store whose holders can die, as the resumes of a
// killed process do: kill marks every claim taken and not settled as held
// by a dead resume, which the next Claim takes over, the way the durable
// stores do once they prove the holder's process gone. It logs every
// call.
type mortalClaims struct {
	mu        sync.Mutex
	state     map[[2]string]string // "taken", "dead" or "settled"
	log       []string
	settleErr error
}

func newMortalClaims() *mortalClaims { return &mortalClaims{state: map[[2]string]string{}} }

var _ runstore.Claims = (*mortalClaims)(nil)

func (m *mortalClaims) Claim(_ context.Context, run, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{run, id}
	switch m.state[k] {
	case "":
		m.log = append(m.log, "claim")
	case "dead":
		m.log = append(m.log, "takeover")
	default:
		m.log = append(m.log, "refused")
		return false, nil
	}
	m.state[k] = "taken"
	return true, nil
}

func (m *mortalClaims) Release(_ context.Context, run, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = append(m.log, "release")
	if k := [2]string{run, id}; m.state[k] == "taken" {
		delete(m.state, k)
	}
	return nil
}

func (m *mortalClaims) Settle(_ context.Context, run, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = append(m.log, "settle")
	if m.settleErr != nil {
		return m.settleErr
	}
	m.state[[2]string{run, id}] = "settled"
	return nil
}

// kill ends every resume that holds a claim, as a SIGKILL would.
func (m *mortalClaims) kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, s := range m.state {
		if s == "taken" {
			m.state[k] = "dead"
		}
	}
}

func (m *mortalClaims) calls() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.log, " ")
}

// saveFails is a run store whose Save fails.
type saveFails struct{ runstore.Store }

var errRunsDown = errors.New("run store down")

func (saveFails) Save(context.Context, runstore.Run) error { return errRunsDown }

// Once the decision applied, Resume settles the claim whatever the result,
// and releases it (never settles it) when the decision did not apply.
func TestResume_SettlesTheClaimWhenItStops(t *testing.T) {
	suspendAgain := func() *script {
		return newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which space?"}`)))
	}
	tests := []struct {
		name    string
		after   *script
		runs    runstore.Store
		status  react.Status
		wantErr error
	}{
		{"finished", approvalAfter(), nil, react.Finished, nil},
		{"failed", newScript(turn(call("x", react.ToolFail, `{"reason":"the user changed their mind"}`))), nil, react.Failed, nil},
		{"suspended again", suspendAgain(), nil, react.Suspended, nil},
		{"interrupted by the model", newScript(errors.New("model down")), nil, react.Interrupted, nil},
		{"interrupted by the run store", suspendAgain(), saveFails{runstore.NewMemory()}, react.Suspended, errRunsDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, _, create := sitesTools()
			e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
			res := e.run(approvalNode, "create a site called blog")
			require.Equal(t, react.Suspended, res.Status)
			claims := newMortalClaims()
			e.cfg.Claims, e.cfg.Runs = claims, tt.runs
			got, err := e.again(tt.after).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
			if tt.status == react.Interrupted || tt.wantErr != nil {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.status, got.Status)
			assert.Equal(t, "claim settle", claims.calls(), "the claim is settled once the run stopped after the decision")
			_, err = e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
			require.ErrorIs(t, err, react.ErrAlreadyResumed, "a settled snapshot is never resumed again")
			claims.kill()
			_, err = e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
			require.ErrorIs(t, err, react.ErrAlreadyResumed, "a settled claim is not taken over when its holder dies")
			if got.Snapshot != nil {
				assert.NotEqual(t, res.Snapshot, got.Snapshot, "the run stopped with a new snapshot")
			}
		})
	}

	t.Run("interrupted run continued", func(t *testing.T) {
		e := newEnv(t, newScript(text("thinking"), errors.New("model down")))
		res, err := e.loop.Run(context.Background(), react.Node{}, "hi")
		require.Error(t, err)
		require.Equal(t, react.Interrupted, res.Status)
		claims := newMortalClaims()
		e.cfg.Claims = claims
		got, err := e.again(newScript(turn(finish("f")))).Resume(context.Background(), res.Snapshot, react.Continue())
		require.NoError(t, err)
		assert.Equal(t, react.Finished, got.Status)
		assert.Equal(t, "claim settle", claims.calls())
	})

	t.Run("decision refused: released, not settled", func(t *testing.T) {
		list, _, create := sitesTools()
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		res := e.run(approvalNode, "create a site called blog")
		claims := newMortalClaims()
		cfg := e.cfg
		cfg.Claims, cfg.Guards, cfg.Model = claims, memoryStores(), approvalAfter() // stores that never gated the call
		l, err := react.New(cfg)
		require.NoError(t, err)
		got, err := l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.Error(t, err)
		assert.Equal(t, react.Suspended, got.Status)
		assert.Equal(t, "claim release", claims.calls())
		e.cfg.Claims = claims
		got, err = e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.NoError(t, err, "the released snapshot resumes where the truth is")
		assert.Equal(t, react.Finished, got.Status)
		assert.Equal(t, 1, create.executions())
	})

	t.Run("settle error joined, result intact", func(t *testing.T) {
		list, _, create := sitesTools()
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		res := e.run(approvalNode, "create a site called blog")
		claims := newMortalClaims()
		claims.settleErr = errors.New("claims store down")
		e.cfg.Claims = claims
		got, err := e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.ErrorIs(t, err, claims.settleErr)
		assert.Contains(t, err.Error(), "settle resume claim")
		assert.Equal(t, react.Finished, got.Status, "the run finished; only settling failed")
		assert.Equal(t, 1, create.executions())
	})

	t.Run("cancelled context still settles", func(t *testing.T) {
		list, _, create := sitesTools()
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		res := e.run(approvalNode, "create a site called blog")
		claims := newMortalClaims()
		e.cfg.Claims = claims
		ctx, cancel := context.WithCancel(context.Background())
		m := newScript(func(react.Request) (react.Response, error) { cancel(); return turn(finish("f")), nil })
		got, err := e.again(m).Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, react.Interrupted, got.Status)
		assert.Equal(t, "claim settle", claims.calls())
	})
}

// resumeUntilKilled resumes snap with Approve in a goroutine of its own and
// waits until that goroutine ends; the model or a tool ends it with
// runtime.Goexit, as a SIGKILL ends a process: nothing after that point
// runs (only deferred calls), so the claim is neither settled nor released.
func resumeUntilKilled(t *testing.T, l *react.Loop, snap []byte) {
	t.Helper()
	done := make(chan struct{})
	returned := false
	go func() {
		defer close(done)
		_, _ = l.Resume(context.Background(), snap, react.Approve(ticketOf(t, l, snap)))
		returned = true
	}()
	<-done
	require.False(t, returned, "the resume was killed, it did not return")
}

// A resume killed after it applied the approval loses nothing: the next
// resume of the same snapshot takes its claim over and applies the same
// approval again, which grants nothing new, and the write runs once.
func TestResume_TakeoverOfAKilledResume(t *testing.T) {
	t.Run("killed before the write: the unused approval runs it once", func(t *testing.T) {
		list, _, create := sitesTools()
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		res := e.run(approvalNode, "create a site called blog")
		claims := newMortalClaims()
		e.cfg.Claims = claims
		killedModel := newScript(func(react.Request) (react.Response, error) {
			runtime.Goexit() // the process dies on the turn after the approval applied
			return react.Response{}, nil
		})
		resumeUntilKilled(t, e.again(killedModel), res.Snapshot)
		assert.Equal(t, 0, create.executions())

		_, err := e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.ErrorIs(t, err, react.ErrAlreadyResumed, "the claim of a live resume is never taken over")

		claims.kill()
		got, err := e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.NoError(t, err)
		assert.Equal(t, react.Finished, got.Status)
		assert.Equal(t, 1, create.executions(), "the approval the dead resume left unused runs the write once")
		assert.Equal(t, "claim refused takeover settle", claims.calls())
		ok, err := e.guards.Approvals.Consume(context.Background(), "run-1", gatedFingerprint(t, res))
		require.NoError(t, err)
		assert.False(t, ok, "applying the approval again granted no second execution")
	})

	t.Run("killed inside the write: uncertain, verified, never run twice", func(t *testing.T) {
		list, _, _ := sitesTools()
		var once sync.Once
		applied := 0
		create := newFake("create_site", tool.Write, func(context.Context, tool.Request) (any, error) {
			applied++
			once.Do(runtime.Goexit) // the write applied; the process dies before it records the result
			return map[string]any{"id": 42}, nil
		})
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		res := e.run(approvalNode, "create a site called blog")
		claims := newMortalClaims()
		e.cfg.Claims = claims
		resumeUntilKilled(t, e.again(approvalAfter()), res.Snapshot)
		require.Equal(t, 1, applied)
		claims.kill()

		// Without a verifier the takeover cannot know: WRITE_PENDING_VERIFY,
		// and the run asks the user.
		m := newScript(turn(call("w2", "create_site", `{"name":"blog"}`)), turn(call("q", react.ToolFollowUp, `{"question":"Retry later?"}`)))
		got, err := e.again(m).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.NoError(t, err)
		require.Equal(t, react.Suspended, got.Status)
		assert.Equal(t, "DEFERRED "+errcode.WritePendingVerify.String(), outcomeOf(t, e.rec, "w2"))
		assert.Equal(t, 1, applied)

		// With a verifier, the next resume (of the new snapshot) reuses the
		// applied result.
		create.Verify = func(context.Context, string) (tool.WriteStatus, any, error) {
			return tool.WriteApplied, map[string]any{"id": 42}, nil
		}
		m = newScript(turn(call("w3", "create_site", `{"name":"blog"}`)),
			turn(call("s", react.ToolOutputSet, `{"key":"site_id","value":42,"sourceType":"tool_result","sourceRef":"w3"}`)),
			turn(finish("f")))
		got, err = e.again(m).Resume(context.Background(), got.Snapshot, react.Answer(got.Suspension.Ticket, "yes"))
		require.NoError(t, err)
		assert.Equal(t, react.Finished, got.Status)
		assert.Equal(t, "SUCCESS ", outcomeOf(t, e.rec, "w3"), "the verified result is reused")
		assert.Equal(t, 1, applied, "applied once in all: the dead resume's write was verified, not run again")
		assert.Equal(t, "claim takeover settle claim settle", claims.calls())
	})
}

// gatedFingerprint returns the fingerprint of the call a suspended result
// waits to have approved.
func gatedFingerprint(t *testing.T, res react.Result) string {
	t.Helper()
	require.NotNil(t, res.Suspension)
	require.NotNil(t, res.Suspension.Approval)
	return res.Suspension.Approval.Fingerprint
}
