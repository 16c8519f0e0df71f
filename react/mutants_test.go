package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// This file holds tests written to kill mutants that lived through the
// package's other tests (docs/mutation.md).

// The call layer's funnel, computed by hand from one run: 7 calls
// processed (the skipped ones are not), of which 2 cannot be paired (no
// id, an id used before), 1 names an unknown tool, 1 has invalid
// arguments, and 3 are valid (two reads and the finish).
//
//	pairing    = (7 - 2) / 7           = 5/7
//	resolution = (5 - 1) / 5           = 4/5
//	arguments  = (4 - 1) / 4           = 3/4
//	admission  = valid / processed     = 3/7
func TestMetrics_CallFunnel(t *testing.T) {
	list, _, _ := sitesTools()
	var m react.Metrics
	e := newEnv(t, newScript(
		turn(call("", "list_sites", `{}`)),        // no id: unpaired
		turn(call("a", "list_sites", `{}`)),       // valid
		turn(call("a", "list_sites", `{"p":2}`)),  // the id again: unpaired
		turn(call("b", "nope", `{}`)),             // unknown tool
		turn(call("c", "list_sites", `not json`)), // invalid arguments
		turn(call("d", "list_sites", `{"p":3}`)),  // valid
		turn(call("f", react.ToolFinish, `{}`)),   // valid (built-in)
	), list.Tool)
	e.cfg.Observer = &m
	res, err := e.again(e.model).Run(context.Background(), react.Node{Tools: []string{"list_sites"}, NoProgressLimit: 10}, "list")
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	c := m.Snapshot().Call
	require.Equal(t, int64(7), c.Calls)
	assert.Equal(t, map[react.CallStatus]int64{react.CallValid: 3, react.CallUnpaired: 2, react.CallUnknownTool: 1, react.CallInvalidArgs: 1}, c.ByStatus)
	assert.Equal(t, react.Rate{Num: 5, Den: 7}, c.Pairing())
	assert.Equal(t, react.Rate{Num: 4, Den: 5}, c.Resolution())
	assert.Equal(t, react.Rate{Num: 3, Den: 4}, c.Arguments())
	assert.Equal(t, react.Rate{Num: 3, Den: 7}, c.Admission())
}

// The system prompt of a node without required outputs is kept per
// instructions for every run of the loop; a node with required outputs
// never takes it (its prompt carries the phase hint) and never leaves its
// own behind, in either order.
func TestSystemPrompt_KeptOnlyWithoutRequiredOutputs(t *testing.T) {
	list, _, _ := sitesTools()
	plain := react.Node{Instructions: "Do the task.", Tools: []string{"list_sites"}}
	required := react.Node{Instructions: "Do the task.", Tools: []string{"list_sites"}, Outputs: []react.Output{{Key: "site", Required: true}}}
	for _, order := range [][]react.Node{{plain, required, plain}, {required, plain, required}} {
		m := newScript()
		for range order {
			m.turns = append(m.turns, newScript(turn(call("x", react.ToolFail, `{"reason":"no"}`))).turns...)
		}
		e := newEnv(t, m, list.Tool)
		var prompts []string
		for i, n := range order {
			_, err := e.loop.Run(context.Background(), n, "go")
			require.NoError(t, err)
			prompts = append(prompts, m.requests()[i].Messages[0].Content)
			hint := strings.Contains(prompts[i], "Required outputs not yet set: site.")
			assert.Equal(t, len(n.Outputs) > 0, hint, "run %d: the phase hint is there exactly when the node requires an output:\n%s", i, prompts[i])
		}
	}
}

// A resume whose decision cannot be applied returns the decision's error
// as it is, once the claim was given back; only a release that fails too
// adds its own error.
func TestResume_RefusedDecisionErrorUnchanged(t *testing.T) {
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	res := e.run(approvalNode, "create a site called blog")
	cfg := e.cfg
	cfg.Model = approvalAfter()
	cfg.Guards = &guard.Options{Ledger: e.guards.Ledger, Approvals: failingApprovals{e.guards.Approvals}, WriteLedger: e.guards.WriteLedger}
	l, err := react.New(cfg)
	require.NoError(t, err)
	_, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, errStore)
	assert.NotContains(t, err.Error(), "release resume claim", "the release succeeded: nothing to add")

	cfg.Claims = releaseFails{runstore.NewMemoryClaims()}
	l, err = react.New(cfg)
	require.NoError(t, err)
	_, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, errStore)
	assert.ErrorIs(t, err, errRelease)
	assert.Contains(t, err.Error(), "release resume claim")
	assert.Zero(t, create.executions())
}

var errRelease = errors.New("claims store down")

// releaseFails is a claims store whose Release fails.
type releaseFails struct{ runstore.Claims }

func (releaseFails) Release(context.Context, string, string) error { return errRelease }

// Observers passes each member the kinds its filter wants: with one
// member following runs and another models, or one models and another
// tools, both are called.
func TestObservers_CombineFilters(t *testing.T) {
	list, _, _ := sitesTools()
	kinds := map[string]react.EventSet{
		"run":   react.Events(react.EventRunStart, react.EventRunEnd),
		"model": react.Events(react.EventModelStart, react.EventModelEnd),
		"tool":  react.Events(react.EventToolStart, react.EventToolEnd),
	}
	for _, pair := range [][2]string{{"run", "model"}, {"model", "tool"}, {"run", "tool"}} {
		a, b := &kindCounter{wants: kinds[pair[0]]}, &kindCounter{wants: kinds[pair[1]]}
		e := newEnv(t, newScript(turn(call("l", "list_sites", `{}`)), turn(finish("f"))), list.Tool)
		e.cfg.Observer = react.Observers(a, b)
		_, err := e.again(e.model).Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "go")
		require.NoError(t, err)
		assert.Positive(t, a.calls, "%v: the %s observer was called", pair, pair[0])
		assert.Positive(t, b.calls, "%v: the %s observer was called", pair, pair[1])
		assert.Zero(t, a.unwanted+b.unwanted, "%v: no observer gets a kind it does not want", pair)
	}
}

// kindCounter counts the events of the kinds it wants (and those it gets
// without wanting them).
type kindCounter struct {
	wants           react.EventSet
	calls, unwanted int
}

func (k *kindCounter) Wants() react.EventSet { return k.wants }
func (k *kindCounter) Observe(ctx context.Context, e react.Event) context.Context {
	if k.wants.Has(e.Kind) {
		k.calls++
	} else {
		k.unwanted++
	}
	return ctx
}

// A call without an id gets rg_<round>_<position>, and when the model
// already used that id, the next free rg_<round>_<position>_<n> from n = 2.
func TestGeneratedIDs(t *testing.T) {
	list, _, _ := sitesTools()
	e := newEnv(t, newScript(
		turn(call("rg_1_4", "list_sites", `{}`), call("rg_1_4_2", "list_sites", `{"p":2}`), call("", "list_sites", `{"p":3}`), call("", "list_sites", `{"p":4}`)),
		turn(finish("f")),
	), list.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites"}, NoProgressLimit: 5}, "go")
	var ids []string
	for _, tc := range res.Transcript[1].ToolCalls {
		ids = append(ids, tc.ID)
	}
	assert.Equal(t, []string{"rg_1_4", "rg_1_4_2", "rg_1_3", "rg_1_4_3"}, ids, "rg_1_4 and rg_1_4_2 are taken: the fourth call gets rg_1_4_3")
}

// The reads of a turn dispatched in parallel keep their positions in the
// turn, in every event the tool observer receives.
func TestParallelReads_Positions(t *testing.T) {
	list, _, _ := sitesTools()
	rec := &positions{at: map[string]int{}}
	e := newEnv(t, newScript(
		turn(call("a", "list_sites", `{"p":1}`), call("b", "list_sites", `{"p":2}`), call("c", "list_sites", `{"p":3}`)),
		turn(finish("f")),
	), list.Tool)
	e.cfg.Observer = rec
	_, err := e.again(e.model).Run(context.Background(), react.Node{Tools: []string{"list_sites"}, ParallelReads: true}, "go")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a": 0, "b": 1, "c": 2, "f": 0}, rec.snapshot())
}

// positions records the Position of every EventToolEnd, by call id.
type positions struct {
	mu sync.Mutex
	at map[string]int
}

func (p *positions) Wants() react.EventSet { return react.Events(react.EventToolEnd) }
func (p *positions) Observe(ctx context.Context, e react.Event) context.Context {
	if e.Kind != react.EventToolEnd {
		return ctx
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at[e.ToolEnd.CallID] = e.ToolEnd.Position
	return ctx
}

func (p *positions) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.at)
}

// A result is cut only when it is longer than MaxResultBytes, and never
// inside a rune.
func TestResultTruncated_Bounds(t *testing.T) {
	run := func(max int) string {
		t.Helper()
		big := newFake("big", tool.Read, ok(strings.Repeat("é", 100))) // 202 bytes of JSON
		e := newEnv(t, newScript(turn(call("a", "big", `{}`)), turn(finish("f"))), big.Tool)
		cfg := e.cfg
		cfg.MaxResultBytes = max
		l, err := react.New(cfg)
		require.NoError(t, err)
		res, err := l.Run(context.Background(), react.Node{Tools: []string{"big"}}, "hi")
		require.NoError(t, err)
		return toolMessage(t, res.Transcript, "a").Content
	}
	assert.Equal(t, "big succeeded\n\""+strings.Repeat("é", 100)+"\"", run(202), "exactly MaxResultBytes: not cut")
	assert.Contains(t, run(201), "[result truncated to 201 of 202 bytes", "one byte less: cut (before the closing quote)")
	assert.Equal(t, "big succeeded\n\""+strings.Repeat("é", 10)+"\n[result truncated to 21 of 202 bytes; full payload: a]", run(22),
		"byte 22 is inside a rune: the cut moves back to 21")
}

// A snapshot sealed exactly SnapshotMaxAge ago still resumes; one second
// more and it has expired.
func TestSnapshotMaxAge_Bound(t *testing.T) {
	for _, tt := range []struct {
		after   time.Duration
		expired bool
	}{{24 * time.Hour, false}, {24*time.Hour + time.Second, true}} {
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		list, _, create := sitesTools()
		e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
		cfg := e.cfg
		cfg.SnapshotMaxAge = 24 * time.Hour
		cfg.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		l, err := react.New(cfg)
		require.NoError(t, err)
		res, err := l.Run(context.Background(), approvalNode, "create a site called blog")
		require.NoError(t, err)
		mu.Lock()
		now = now.Add(tt.after)
		mu.Unlock()
		cfg.Model = approvalAfter()
		l, err = react.New(cfg)
		require.NoError(t, err)
		_, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		assert.Equal(t, tt.expired, errors.Is(err, react.ErrSnapshotExpired), "sealed %v ago: %v", tt.after, err)
	}
}

// A run interrupted before its first round resumes (round 0 is no
// negative counter).
func TestResume_InterruptedAtRoundZero(t *testing.T) {
	list, _, _ := sitesTools()
	e := newEnv(t, newScript(errors.New("model down")), list.Tool)
	res, err := e.loop.Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "go")
	require.Error(t, err)
	require.Equal(t, react.Interrupted, res.Status)
	got, err := e.again(newScript(turn(finish("f")))).Resume(context.Background(), res.Snapshot, react.Continue())
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
}

// Outputs set before a suspension are in the snapshot: the resumed run
// finishes with them, its goal met.
func TestResume_KeepsOutputs(t *testing.T) {
	list, _, _ := sitesTools()
	node := react.Node{Tools: []string{"list_sites"}, Outputs: []react.Output{{Key: "site", Required: true, Tool: "list_sites", Field: "sites.id"}}}
	e := newEnv(t, newScript(
		turn(call("l", "list_sites", `{}`)),
		turn(call("o", react.ToolOutputSet, `{"key":"site","value":7,"sourceType":"tool_result","sourceRef":"l"}`)),
		turn(call("q", react.ToolFollowUp, `{"question":"Is site 7 the right one?"}`)),
	), list.Tool)
	res := e.run(node, "which site?")
	require.Equal(t, react.Suspended, res.Status)
	got, err := e.again(newScript(turn(finish("f")))).Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "yes"))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
	assert.JSONEq(t, `7`, string(got.Outputs["site"].Value))
	assert.Equal(t, react.GoalMet, got.Goal)
}

// A resume that stops before its decision applies changes nothing: it
// returns the snapshot it was given with its status (for a suspended run
// whose approval could not be recorded, with its ticket:
// TestResume_StoreFailureKeepsSnapshot).
func TestResume_UnappliedReturnsTheSnapshotAndTicket(t *testing.T) {
	t.Run("an interrupted run resumed with a cancelled context", func(t *testing.T) {
		e := newEnv(t, newScript(text("thinking"), errors.New("model down")))
		res, err := e.loop.Run(context.Background(), react.Node{}, "hi")
		require.Error(t, err)
		require.Equal(t, react.Interrupted, res.Status)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		got, err := e.again(newScript(turn(finish("f")))).Resume(ctx, res.Snapshot, react.Continue())
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, react.Interrupted, got.Status)
		assert.Equal(t, res.Snapshot, got.Snapshot)
		assert.Nil(t, got.Suspension)
	})
}

// The loop keeps one system prompt per instructions and option for the
// next run only when nothing else in it varies: a node with typed outputs
// (the prompt lists them) and a run with inputs (the prompt quotes them)
// never take a kept prompt and never leave theirs behind.
func TestSystemPrompt_KeptOnlyWhenNothingElseVaries(t *testing.T) {
	typed := func(key, typ string) react.Node {
		return react.Node{Instructions: "Do the task.", Outputs: []react.Output{{Key: key, Schema: &jsonschema.Schema{Type: typ}}}}
	}
	inputs := func(city string) []react.RunOption {
		return []react.RunOption{react.WithInputs(react.Inputs{Steps: []react.Input{{Step: "search", Outputs: map[string]json.RawMessage{"city": json.RawMessage(`"` + city + `"`)}}}})}
	}
	plain := react.Node{Instructions: "Do the task."}
	runs := []struct {
		name      string
		node      react.Node
		opts      []react.RunOption
		want, not string
	}{
		{"plain", plain, nil, "", "Outputs to set"},
		{"typed output site", typed("site", "integer"), nil, "site (integer)", ""},
		{"typed output name: not site's prompt", typed("name", "string"), nil, "name (string)", "site (integer)"},
		{"inputs from Bern", plain, inputs("Bern"), `{"city":"Bern"}`, ""},
		{"inputs from Paris: not Bern's prompt", plain, inputs("Paris"), `{"city":"Paris"}`, "Bern"},
		{"plain again", plain, nil, "", "Paris"},
	}
	m := newScript()
	for range runs {
		m.turns = append(m.turns, newScript(turn(reacttest.Finish("c1", ""))).turns...)
	}
	e := newEnv(t, m)
	for i, r := range runs {
		_, err := e.loop.Run(context.Background(), r.node, "go", r.opts...)
		require.NoError(t, err)
		sys := m.requests()[i].Messages[0].Content
		if r.want != "" {
			assert.Contains(t, sys, r.want, "run %d: %s", i, r.name)
		}
		if r.not != "" {
			assert.NotContains(t, sys, r.not, "run %d: %s", i, r.name)
		}
	}
}

// EventToolStart carries a built-in's description also for the first spec
// the model was given: a node without tools offers the built-ins alone,
// builtin_request_approval first.
func TestToolStartDescription_FirstSpec(t *testing.T) {
	m := newScript(turn(call("a", react.ToolApproval, `{"tool":"create_site","reason":"asked"}`)), turn(finish("f")))
	e := newEnv(t, m)
	got := map[string]string{}
	e.cfg.Observer = react.ObserverFunc(func(_ context.Context, ev react.Event) {
		if ev.Kind == react.EventToolStart {
			got[ev.ToolStart.Tool] = ev.ToolStart.Description
		}
	})
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	_, err = l.Run(context.Background(), react.Node{NoProgressLimit: 3}, "go")
	require.NoError(t, err)
	specs := m.requests()[0].Tools
	require.Equal(t, react.ToolApproval, specs[0].Name, "the built-ins alone, approval first")
	require.NotEmpty(t, specs[0].Description)
	assert.Equal(t, specs[0].Description, got[react.ToolApproval])
}
