package task_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/inbox"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/task"
)

// A person approves a task's step in the approvals inbox: the task goes
// on to its end. The same decision again is refused as already decided.
func TestInbox_DecidesATaskStep(t *testing.T) {
	w := newWorld(t)
	m := newRouted()
	searchTurns(m)
	bookTurns(m)
	m.on("answer", finish("a1", "Booked b-77."))
	l, err := react.New(react.Config{Model: m, Tools: w.catalog, Runs: runstore.NewMemory(), SnapshotKeys: [][]byte{testKey}, Observer: react.DiscardObserver})
	require.NoError(t, err)
	r, err := task.New(l, trip(task.Acceptance{}), nil)
	require.NoError(t, err)
	alice := react.Owner{Tenant: "acme", User: "alice"}
	res, err := r.Run(ctx, "Book a hotel in Bern.", react.WithOwner(alice))
	require.NoError(t, err)
	require.Equal(t, task.Suspended, res.Status)

	serve := func(loop inbox.Loop) *httptest.Server {
		h, err := inbox.New(inbox.Options{Loop: loop, FormKey: testKey, Authenticate: func(*http.Request) (inbox.Identity, error) {
			return inbox.Identity{Owner: alice, Decider: "alice"}, nil
		}})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv
	}
	var ticket, form string // what the person was shown
	decide := func(srv *httptest.Server) (int, map[string]any) {
		if ticket == "" {
			resp, err := http.Get(srv.URL + "/api/runs/" + res.Run)
			require.NoError(t, err)
			var detail inbox.DetailJSON
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&detail))
			require.NoError(t, resp.Body.Close())
			require.NotNil(t, detail.Pending)
			ticket, form = detail.Pending.Ticket, detail.Pending.Form
		}
		body, _ := json.Marshal(inbox.DecisionJSON{Decision: "approve", Ticket: ticket, Form: form})
		resp, err := http.Post(srv.URL+"/api/runs/"+res.Run, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}

	plain := serve(l)
	code, out := decide(plain)
	assert.Equal(t, http.StatusServiceUnavailable, code, "a plain loop refuses to resume a task's step (react.ErrHostState, logged with an incident id): %v", out)
	assert.Equal(t, int64(0), w.booked.Load())

	code, out = decide(serve(&task.Inbox{Loop: l, Runners: []*task.Runner{r}}))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "finished", out["status"], "the task went on through book and the answer, and is met")
	assert.Equal(t, int64(1), w.booked.Load())
	code, out = decide(serve(&task.Inbox{Loop: l, Runners: []*task.Runner{r}}))
	assert.Equal(t, http.StatusConflict, code, "the same decision again: %v", out)
	assert.Equal(t, "already_decided", out["error"])
	assert.Equal(t, int64(1), w.booked.Load())
}
