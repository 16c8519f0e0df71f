package task_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/task"
	"github.com/reactguard/reactguard/tool"
)

var ctx = context.Background()

// The happy path of the three-step task: the search is satisfied, so the
// branch books; the booking stops for the user's approval in step 2, and
// the resume continues step 2 and then the task; the answer ends it met.
func TestTask_ThreeStepsWithBranch_Met(t *testing.T) {
	w := newWorld(t)
	m := newRouted()
	searchTurns(m)
	bookTurns(m)
	m.on("answer", finish("a1", "Booked Alpen (h-1), booking b-77."))
	metrics := &task.Metrics{}
	rm := &react.Metrics{}
	r, err := task.New(w.loopOf(t, m, nil), trip(task.Acceptance{}), &task.Options{Metrics: metrics, Record: rm})
	require.NoError(t, err)
	owner := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})

	res, err := r.Run(ctx, "Book a hotel in Bern.", owner)
	require.NoError(t, err)
	require.Equal(t, task.Suspended, res.Status, "the approval in step 2 suspends the task")
	assert.Equal(t, "book", res.Step)
	require.NotNil(t, res.Suspension)
	assert.Equal(t, react.SuspendApproval, res.Suspension.Kind)
	assert.JSONEq(t, `{"hotel_id":"h-1"}`, string(res.Suspension.Approval.Args))
	require.Len(t, res.Steps, 2)
	assert.Equal(t, react.StepSatisfied, res.Steps[0].Status)
	assert.JSONEq(t, `"h-1"`, string(res.Steps[0].Verified["hotel_id"]))
	assert.Equal(t, react.StepInProgress, res.Steps[1].Status)
	assert.Contains(t, m.system("book"), `- step:search (step search): {"hotel_id":"h-1"}`, "step 2 sees step 1's verified output")

	res, err = r.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket).DecidedBy("alice"), owner)
	require.NoError(t, err)
	require.Equal(t, task.Met, res.Status)
	assert.Equal(t, int64(1), w.booked.Load(), "the approved write ran once")
	assert.Equal(t, "h-1", w.bookedID.Load(), "with the value step 1 verified")
	assert.Equal(t, []string{"search", "book", "answer"}, stepNames(res))
	assert.Equal(t, []string{"search", "book", "answer"}, res.Completed)
	assert.Empty(t, res.Missing)
	assert.False(t, res.Continue)
	assert.Equal(t, "Booked Alpen (h-1), booking b-77.", res.Answer)
	book := res.Steps[1]
	require.NotEmpty(t, book.Calls)
	var voucher string
	for _, c := range book.Calls {
		if c.Tool == "book_hotel" && c.Outcome == outcome.Success && c.Provenance != nil {
			voucher = c.Provenance.Voucher
			assert.NotEmpty(t, c.Provenance.IdempotencyKey, "a write's record carries its idempotency key")
		}
	}
	assert.Equal(t, "b-77", voucher, "the report shows the write's voucher")
	sys := m.system("answer")
	assert.Contains(t, sys, "- search: satisfied")
	assert.Contains(t, sys, "- book: satisfied")

	s := metrics.Snapshot()
	assert.Equal(t, "1/1 (100.0%)", s.FinalTask().String(), "the task's own acceptance decides, over the tasks started")
	assert.Equal(t, int64(1), s.Suspensions)
	assert.Equal(t, int64(3), s.Steps[react.StepSatisfied])
	assert.Equal(t, "1/1 (100.0%)", rm.Snapshot().Business.FinalTask().String(), "react.Metrics gets the verdict without a host call")
}

func stepNames(res task.Result) []string {
	var out []string
	for _, s := range res.Steps {
		out = append(out, s.Step)
	}
	return out
}

// The other branch: a search that finds nothing is insufficient (never
// satisfied because the tool returned), the graph takes the alternatives
// edge, and the task is unmet: the search is required.
func TestTask_Branch_Unmet(t *testing.T) {
	w := newWorld(t)
	w.hotels = []map[string]any{}
	m := newRouted()
	m.on("search", turn(call("s1", "search_hotels", `{"city":"Bern"}`)), turn(call("s2", react.ToolFail, `{"reason":"no hotel found in Bern"}`)))
	m.on("alternatives", turn(call("x1", "suggest", `{}`)), set("x2", "city", `"Thun"`, "x1"), finish("x3", "try Thun"))
	m.on("answer", finish("a1", "No hotel in Bern; the search step is insufficient. Thun has rooms."))
	metrics := &task.Metrics{}
	r, err := task.New(w.loopOf(t, m, nil), trip(task.Acceptance{MustSay: map[string]string{"search": "no hotel in bern"}}), &task.Options{Metrics: metrics})
	require.NoError(t, err)
	res, err := r.Run(ctx, "Book a hotel in Bern.")
	require.NoError(t, err)
	require.Equal(t, task.Unmet, res.Status)
	assert.Equal(t, []string{"search", "alternatives", "answer"}, stepNames(res), "the branch chosen by the search's outcome")
	assert.Equal(t, react.StepInsufficient, res.Steps[0].Status)
	assert.Equal(t, react.BusinessInsufficient, res.Steps[0].Calls[0].Business)
	require.Len(t, res.Missing, 1)
	assert.Equal(t, task.Missing{Item: "search", Required: true, Status: react.StepInsufficient, Why: res.Steps[0].Reason, Continue: true, MustSay: "no hotel in bern"}, res.Missing[0])
	assert.Equal(t, []string{"alternatives", "answer"}, res.Completed)
	assert.True(t, res.Continue, "an insufficient step may complete with more information")
	assert.Equal(t, int64(0), w.booked.Load())
	assert.Equal(t, "0/1 (0.0%)", metrics.Snapshot().FinalTask().String())
}

// Partial success is a rule of the task: the same run — the user declines
// the booking — ends partially met when the rule lets the booking be
// missing, and unmet when it does not.
func TestTask_PartialSuccessByRule(t *testing.T) {
	for _, tt := range []struct {
		reason string
		acc    task.Acceptance
		want   task.Status
	}{
		{"the booking may be missing: partially met", task.Acceptance{Optional: []string{"book"}, MustSay: map[string]string{"book": "not booked"}}, task.PartiallyMet},
		{"the booking is required: partial success refused, unmet", task.Acceptance{MustSay: map[string]string{"book": "not booked"}}, task.Unmet},
	} {
		t.Run(tt.want.String(), func(t *testing.T) {
			w := newWorld(t)
			m := newRouted()
			searchTurns(m)
			m.on("book",
				turn(call("b1", "book_hotel", `{"hotel_id":"h-1"}`)),
				turn(call("b2", react.ToolApproval, `{"tool":"book_hotel"}`)),
				turn(call("b3", react.ToolFail, `{"reason":"the user declined the booking"}`)))
			m.on("answer",
				finish("a1", "Your room at Alpen is booked."),             // omits what the rule requires
				finish("a2", "I found Alpen (h-1) but it is not booked.")) // says it
			r, err := task.New(w.loopOf(t, m, nil), trip(tt.acc), nil)
			require.NoError(t, err)
			res, err := r.Run(ctx, "Book a hotel in Bern.")
			require.NoError(t, err)
			require.Equal(t, task.Suspended, res.Status)
			res, err = r.Resume(ctx, res.Snapshot, react.Decline(res.Suspension.Ticket, "too expensive"))
			require.NoError(t, err)
			assert.Equalf(t, tt.want, res.Status, "%s", tt.reason)
			assert.Equal(t, int64(0), w.booked.Load(), "a declined write never runs")
			require.Len(t, res.Missing, 1)
			assert.Equal(t, "book", res.Missing[0].Item)
			assert.Equal(t, react.StepFailed, res.Missing[0].Status)
			assert.Equal(t, "the user declined the booking", res.Missing[0].Why)
			assert.False(t, res.Continue, "a failed step does not complete by going on")
			assert.Equal(t, "I found Alpen (h-1) but it is not booked.", res.Answer)
			answer := res.Steps[len(res.Steps)-1]
			refused := answer.Calls[0]
			assert.Equal(t, outcome.Rejected, refused.Outcome)
			assert.Equal(t, errcode.AnswerOmitsMissing, refused.Code, "an answer that hides the missing booking is refused")
			assert.Contains(t, m.system("answer"), "- book: failed: the user declined the booking; the answer must say: not booked")
		})
	}
}

// A step stopped by a wall (a captcha page) is blocked, not failed: the
// rule lets it be missing, so the task is partially met, and continuing
// could complete it (a person may clear the wall); the final step is told
// so.
func TestTask_BlockedStep(t *testing.T) {
	w := newWorld(t)
	m := newRouted()
	searchTurns(m)
	m.on("policy",
		turn(call("p1", "visit_page", `{}`)),
		turn(call("p2", react.ToolFail, `{"reason":"a captcha blocks the page"}`)))
	m.on("answer", finish("a1", "I found Alpen (h-1); I could not read the hotel's policy page."))
	def := task.Task{
		Name: "policy",
		Steps: []task.Step{
			{Name: "search", Node: react.Node{Instructions: "STEP search: find a hotel", Tools: []string{"search_hotels"},
				Outputs: []react.Output{{Key: "hotel_id", Required: true, Field: "hotels.hotel_id"}}}, Next: []task.Edge{{To: "policy"}}},
			{Name: "policy", Node: react.Node{Instructions: "STEP policy: read the policy page", Tools: []string{"visit_page"},
				Outputs: []react.Output{{Key: "window", Required: true, Field: "window"}}}},
		},
		Final:      &task.Step{Name: "answer", Node: react.Node{Instructions: "STEP answer: tell the user"}},
		Acceptance: task.Acceptance{Required: []string{"search"}, Optional: []string{"policy"}, MustSay: map[string]string{"policy": "could not read"}},
	}
	r, err := task.New(w.loopOf(t, m, nil), def, nil)
	require.NoError(t, err)
	res, err := r.Run(ctx, "Find a hotel in Bern and its cancellation window.")
	require.NoError(t, err)
	assert.Equal(t, task.PartiallyMet, res.Status)
	require.Len(t, res.Steps, 3)
	assert.Equal(t, react.StepBlocked, res.Steps[1].Status, "a run that failed after a wall is blocked")
	assert.Equal(t, errcode.ToolBlocked, res.Steps[1].Calls[0].Code)
	require.Len(t, res.Missing, 1)
	assert.Equal(t, task.Missing{Item: "policy", Status: react.StepBlocked, Why: "a captcha blocks the page", Continue: true, MustSay: "could not read"}, res.Missing[0])
	assert.True(t, res.Continue, "a person or time may clear a wall")
	assert.Contains(t, m.system("answer"), "- policy: blocked: a captcha blocks the page; the answer must say: could not read")
}

// An answer that states a fact of a step that is not verified — a price
// from a stale quote — is refused with a next step; the answer that says
// it is not verified is accepted.
func TestTask_AnswerClaimsUnverified(t *testing.T) {
	w := newWorld(t)
	w.quoteAt = now.Add(-3 * time.Hour)
	m := newRouted()
	m.on("price",
		turn(call("p1", "quote", `{}`)),
		set("p2", "price", `212.5`, "p1"),
		finish("p3", "212.5"))
	m.on("answer",
		finish("a1", "A night costs 212.50 CHF."),
		finish("a2", "The price is not verified: the quote was out of date."))
	tk := task.Task{
		Name: "price",
		Steps: []task.Step{{Name: "price", Node: react.Node{Instructions: "STEP price: get the latest price", Tools: []string{"quote"},
			Require: map[string]tool.Requirement{"quote": tool.RequireLatest}, Outputs: []react.Output{{Key: "price", Required: true, Field: "price"}}}}},
		Final:      &task.Step{Name: "answer", Node: react.Node{Instructions: "STEP answer: tell the user"}},
		Acceptance: task.Acceptance{Optional: []string{"price"}, MustSay: map[string]string{"price": "not verified"}},
	}
	r, err := task.New(w.loopOf(t, m, nil), tk, nil)
	require.NoError(t, err)
	res, err := r.Run(ctx, "What does a night cost now?")
	require.NoError(t, err)
	require.Equal(t, task.PartiallyMet, res.Status)
	assert.Equal(t, react.StepInsufficient, res.Steps[0].Status, "a stale result cannot satisfy a latest requirement")
	assert.Contains(t, res.Steps[0].Reason, "3h0m0s old")
	assert.Empty(t, res.Steps[0].Verified, "an insufficient step hands nothing on")
	ans := res.Steps[1]
	assert.Equal(t, errcode.AnswerClaimsUnverified, ans.Calls[0].Code, "212.50 is the stale price (numbers compare by value)")
	assert.Equal(t, "The price is not verified: the quote was out of date.", res.Answer)
}

// A step of a task is not resumed behind the task's back; a snapshot of
// another task is refused.
func TestTask_ResumeOnlyThroughTheTask(t *testing.T) {
	w := newWorld(t)
	m := newRouted()
	searchTurns(m)
	bookTurns(m)
	m.on("answer", finish("a1", "Booked b-77."))
	loop := w.loopOf(t, m, nil)
	r, err := task.New(loop, trip(task.Acceptance{}), nil)
	require.NoError(t, err)
	res, err := r.Run(ctx, "Book a hotel in Bern.")
	require.NoError(t, err)
	require.Equal(t, task.Suspended, res.Status)

	_, err = loop.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, react.ErrHostState, "a plain resume would continue step 2 and drop the task")
	changed := trip(task.Acceptance{Optional: []string{"book"}})
	other, err := task.New(loop, changed, nil)
	require.NoError(t, err)
	_, err = other.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, task.ErrTaskChanged, "the acceptance rule changed since the task was sealed")
	_, err = r.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket), react.WithOwner(react.Owner{Tenant: "evil"}))
	assert.ErrorIs(t, err, react.ErrNotOwner)
	assert.Equal(t, int64(0), w.booked.Load(), "no refusal runs anything")

	done, err := r.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, task.Met, done.Status)
	_, err = r.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, react.ErrAlreadyResumed, "resumed once")
	assert.Equal(t, int64(1), w.booked.Load())

	plainLoop := w.loopOf(t, newRouted(), nil)
	plain, err := plainLoop.Run(ctx, react.Node{}, "x")
	require.Error(t, err) // the routed model has no turn: interrupted, with a snapshot
	_, err = r.Resume(ctx, plain.Snapshot, react.Continue())
	assert.ErrorIs(t, err, task.ErrNotATask)
}

// A graph with a loop ends at MaxSteps; the steps it did not reach are
// missing, and continuing could reach them.
func TestTask_StepLimit(t *testing.T) {
	w := newWorld(t)
	w.hotels = []map[string]any{}
	m := newRouted()
	for i := 0; i < 3; i++ {
		m.on("search", turn(call("s"+string(rune('a'+i)), "search_hotels", `{"city":"Bern `+string(rune('a'+i))+`"}`)), turn(call("f"+string(rune('a'+i)), react.ToolFail, `{"reason":"none"}`)))
	}
	tk := task.Task{
		Name: "retry",
		Steps: []task.Step{
			{Name: "search", Node: react.Node{Instructions: "STEP search: find", Tools: []string{"search_hotels"}, Outputs: []react.Output{{Key: "hotel_id", Required: true, Field: "hotels.hotel_id"}}},
				Next: []task.Edge{{To: "book", When: task.OnStatus(react.StepSatisfied)}, {To: "search"}}},
			{Name: "book", Node: react.Node{Instructions: "STEP book: book", Tools: []string{"book_hotel"}}},
		},
		MaxSteps:   3,
		Acceptance: task.Acceptance{Required: []string{"search", "book"}},
	}
	r, err := task.New(w.loopOf(t, m, nil), tk, nil)
	require.NoError(t, err)
	res, err := r.Run(ctx, "find")
	require.NoError(t, err)
	assert.Equal(t, task.Unmet, res.Status)
	assert.Equal(t, []string{"search", "search", "search"}, stepNames(res), "three runs, the bound")
	require.Len(t, res.Missing, 2)
	assert.Equal(t, task.Missing{Item: "book", Required: true, Status: react.StepPending, Why: "the task reached its limit of 3 steps", Continue: true, MustSay: "book"}, res.Missing[1])
}

func TestTask_OnOutput(t *testing.T) {
	o := task.Outcome{Verified: map[string]json.RawMessage{"n": json.RawMessage(`7`), "obj": json.RawMessage(`{"b":2,"a":1}`)}}
	assert.True(t, task.OnOutput("n", 7)(o))
	assert.False(t, task.OnOutput("n", "7")(o), "a string is not a number")
	assert.True(t, task.OnOutput("obj", map[string]int{"a": 1, "b": 2})(o), "canonically equal")
	assert.False(t, task.OnOutput("missing", 1)(o))
	assert.True(t, task.OnStatus(react.StepBlocked, react.StepFailed)(task.Outcome{Status: react.StepFailed}))
	assert.False(t, task.OnStatus(react.StepSatisfied)(task.Outcome{Status: react.StepInsufficient}))
}

func TestNew_Refuses(t *testing.T) {
	w := newWorld(t)
	loop := w.loopOf(t, newRouted(), nil)
	good := trip(task.Acceptance{})
	tests := []struct {
		reason string
		edit   func(*task.Task)
		want   string
	}{
		{"no name", func(t *task.Task) { t.Name = "" }, "no name"},
		{"no steps", func(t *task.Task) { t.Steps = nil }, "no steps"},
		{"duplicate step", func(t *task.Task) { t.Steps = append(t.Steps, t.Steps[0]) }, "defined twice"},
		{"an edge to nowhere", func(t *task.Task) { t.Steps[0].Next = []task.Edge{{To: "nowhere"}} }, "not a step of the graph"},
		{"a start that is no step", func(t *task.Task) { t.Start = "answer" }, "Start names answer"},
		{"a dotted step name", func(t *task.Task) { t.Steps[2].Name = "alt.x" }, "holds a dot"},
		{"an item naming no step", func(t *task.Task) { t.Acceptance.Optional = []string{"pay"} }, "names no step"},
		{"an item naming an undeclared output", func(t *task.Task) { t.Acceptance.Required = []string{"search.price"} }, "does not declare"},
		{"an item listed twice", func(t *task.Task) {
			t.Acceptance.Required = []string{"book"}
			t.Acceptance.Optional = []string{"book"}
		}, "listed twice"},
		{"a final step with edges", func(t *task.Task) {
			f := *t.Final
			f.Next = []task.Edge{{To: "search"}}
			t.Final = &f
		}, "ends the task"},
		{"negative MaxSteps", func(t *task.Task) { t.MaxSteps = -1 }, "negative"},
		{"a step whose node names a tool the loop does not have", func(t *task.Task) { t.Steps[1].Node.Tools = []string{"pay"} }, "step book"},
		{"a final step whose node cannot run", func(t *task.Task) {
			f := *t.Final
			f.Node.MaxRounds = -1
			t.Final = &f
		}, "step answer"},
	}
	for _, tt := range tests {
		tk := trip(task.Acceptance{})
		tt.edit(&tk)
		_, err := task.New(loop, tk, nil)
		require.ErrorIsf(t, err, task.ErrInvalidTask, "%s", tt.reason)
		assert.Containsf(t, err.Error(), tt.want, "%s", tt.reason)
	}
	_, err := task.New(nil, good, nil)
	assert.Error(t, err)
	_, err = task.New(loop, good, nil)
	assert.NoError(t, err)
}

// A step whose first model turn fails stops the task interrupted, with a
// snapshot that resumes it.
func TestTask_Interrupted(t *testing.T) {
	w := newWorld(t)
	m := newRouted()
	searchTurns(m)
	// book has no turns yet: the model fails on step 2
	r, err := task.New(w.loopOf(t, m, &guard.Options{}), trip(task.Acceptance{}), nil)
	require.NoError(t, err)
	res, err := r.Run(ctx, "Book a hotel in Bern.")
	require.Error(t, err)
	require.Equal(t, task.Interrupted, res.Status)
	assert.Equal(t, "book", res.Step)
	require.NotEmpty(t, res.Snapshot)
	bookTurns(m)
	m.on("answer", finish("a1", "Booked b-77."))
	res, err = r.Resume(ctx, res.Snapshot, react.Continue())
	require.NoError(t, err)
	require.Equal(t, task.Suspended, res.Status)
	res, err = r.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, task.Met, res.Status)
	assert.Equal(t, int64(1), w.searched.Load(), "step 1 did not run again")
}

func TestStatus_Enum(t *testing.T) {
	for s := task.Suspended; s <= task.Unmet; s++ {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var back task.Status
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back)
	}
	assert.True(t, task.Met.Ended())
	assert.False(t, task.Suspended.Ended())
	_, err := task.Status(0).MarshalText()
	assert.Error(t, err)
	var s task.Status
	assert.Error(t, s.UnmarshalText([]byte("done")))
	assert.True(t, errors.Is(task.ErrTaskChanged, task.ErrTaskChanged))
}

// With a run store, a task's stopped step is listed for an inbox (it says
// it is a task's step) and resumed by run id; a decision delivered twice
// gets react.ErrAlreadyResumed.
func TestTask_ResumeRun(t *testing.T) {
	w := newWorld(t)
	m := newRouted()
	searchTurns(m)
	bookTurns(m)
	m.on("answer", finish("a1", "Booked b-77."))
	runs := runstore.NewMemory()
	l, err := react.New(react.Config{Model: m, Tools: w.catalog, Runs: runs, SnapshotKeys: [][]byte{testKey}, Observer: react.DiscardObserver})
	require.NoError(t, err)
	r, err := task.New(l, trip(task.Acceptance{}), nil)
	require.NoError(t, err)
	res, err := r.Run(ctx, "Book a hotel in Bern.")
	require.NoError(t, err)
	require.Equal(t, task.Suspended, res.Status)
	page, err := l.ListPending(ctx, runstore.Filter{})
	require.NoError(t, err)
	require.Len(t, page.Runs, 1)
	assert.Equal(t, task.HostKind, page.Runs[0].HostKind, "an inbox sees that the run is a task's step")
	assert.Equal(t, "book", page.Runs[0].Node)
	_, err = l.ResumeRun(ctx, res.Run, react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, react.ErrHostState)
	done, err := r.ResumeRun(ctx, res.Run, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, task.Met, done.Status)
	_, err = r.ResumeRun(ctx, res.Run, react.Approve(res.Suspension.Ticket))
	assert.ErrorIs(t, err, react.ErrAlreadyResumed)
	assert.Equal(t, int64(1), w.booked.Load())
}
