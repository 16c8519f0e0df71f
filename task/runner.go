package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
)

// Options configures a [Runner]. The zero value means defaults.
type Options struct {
	// Lang is the language of the texts the task shows the model (the
	// steps' statuses, the answer's checks); it must be the loop's. 0
	// means English.
	Lang prompt.Lang
	// NewID returns a new task's id; nil means a random UUID.
	NewID func(ctx context.Context) string
	// Now is the clock of the provenance of the outputs handed from step
	// to step; nil means time.Now.
	Now func() time.Time
	// Metrics, when set, counts the tasks this runner drives (see
	// [Metrics]).
	Metrics *Metrics
	// Record, when set, receives the task's own verdict when a task ends
	// (react.Metrics.RecordTask: passed when met), so that the final-task
	// figure needs no host call.
	Record *react.Metrics
}

// Runner drives the tasks of one [Task] definition over a react.Loop. It
// holds no state between calls (a task's state travels sealed in the
// snapshot of the step that stopped), so it is safe for concurrent use,
// and a task stopped in one process resumes in any process whose Runner
// has the same task and a Loop with the same snapshot keys and stores.
type Runner struct {
	loop     *react.Loop
	task     Task
	digest   string
	cat      *prompt.Catalog
	newID    func(context.Context) string
	now      func() time.Time
	m        *Metrics
	recordTo *react.Metrics
}

// New returns a runner of t over loop, or an error wrapping
// [ErrInvalidTask] for a task that cannot run (see [Task]), a step whose
// node cannot run in loop included (react.Loop.CheckNode: a tool not in
// the catalog, a requirement its contract cannot serve), so that no step
// fails on its definition halfway through a task. A nil loop is an error.
// opts may be nil.
func New(loop *react.Loop, t Task, opts *Options) (*Runner, error) {
	if loop == nil {
		return nil, errors.New("task: New: a nil loop")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	t.Steps = append([]Step(nil), t.Steps...)
	if t.Final != nil {
		f := *t.Final
		t.Final = &f
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	for _, s := range t.all() {
		n := s.Node
		n.Name = s.Name
		if err := loop.CheckNode(n); err != nil {
			return nil, fmt.Errorf("%w %q: step %s: %w", ErrInvalidTask, t.Name, s.Name, err)
		}
	}
	r := &Runner{loop: loop, task: t, digest: t.digest(), cat: prompt.For(o.Lang), newID: o.NewID, now: o.Now, m: o.Metrics, recordTo: o.Record}
	if r.newID == nil {
		r.newID = func(context.Context) string { return uuid.NewString() }
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r, nil
}

// Run starts a task with the user's words and drives it until it ends or a
// step stops (suspended for a person, or interrupted). opts are the run
// options of every step (react.WithOwner: the task's owner, sealed into
// each step). An error comes with an Interrupted result whose Snapshot
// resumes the task with react.Continue, or, when nothing could be kept
// (the task's first step could not start), with the zero Result.
func (r *Runner) Run(ctx context.Context, userInput string, opts ...react.RunOption) (Result, error) {
	if ctx == nil {
		return Result{}, errors.New("task: Run: nil context")
	}
	st := &state{V: stateVersion, Task: r.task.Name, Digest: r.digest, ID: r.newID(ctx), Input: userInput, Current: r.task.start()}
	r.m.countStarted()
	return r.drive(ctx, st, nil, opts)
}

// Resume continues the task whose stopped step's snapshot is snapshot
// ([Result].Snapshot) with a person's decision, as react.Loop.Resume does
// for the step (its ticket, its owner from opts, once): the step goes on
// and, when it ends, so does the task. A snapshot that is not a step of a
// task is refused with [ErrNotATask], one of another task or of an
// earlier version of this one with [ErrTaskChanged]; the loop's refusals
// (react.ErrSnapshot, react.ErrAlreadyResumed, react.ErrTicket,
// react.ErrNotOwner, …) are returned as they are. None of them runs
// anything.
func (r *Runner) Resume(ctx context.Context, snapshot []byte, d react.Decision, opts ...react.RunOption) (Result, error) {
	if ctx == nil {
		return Result{}, errors.New("task: Resume: nil context")
	}
	p, err := r.loop.Inspect(ctx, snapshot, opts...)
	if err != nil {
		return Result{}, err
	}
	st, err := r.stateOf(p)
	if err != nil {
		return Result{}, err
	}
	resume := func(ro []react.RunOption) (react.Result, error) {
		return r.loop.Resume(ctx, snapshot, d, ro...)
	}
	return r.drive(ctx, st, resume, opts)
}

// ResumeRun is [Runner.Resume] for the stopped step run id ([Result].Run)
// that the loop's run store (react.Config.Runs) keeps.
func (r *Runner) ResumeRun(ctx context.Context, id string, d react.Decision, opts ...react.RunOption) (Result, error) {
	if ctx == nil {
		return Result{}, errors.New("task: ResumeRun: nil context")
	}
	p, err := r.loop.Pending(ctx, id, opts...)
	if errors.Is(err, react.ErrRunNotFound) {
		// The run is no longer stopped: the loop says why (a decision
		// delivered twice gets its DecidedError). Should a record appear
		// in between, the run is resumed as a step of the task, whose
		// state its snapshot seals.
		res, err := r.loop.ResumeRun(ctx, id, d, append(slices.Clip(opts), react.WithHostState(HostKind, nil), react.WithVerifier(&lazyVerifier{r: r}))...)
		if res.Status == 0 {
			return Result{}, err
		}
		st, derr := decodeState(res.HostState, &r.task, r.digest)
		if derr != nil {
			return Result{}, errors.Join(err, derr)
		}
		return r.continueAfter(ctx, st, res, err, opts)
	}
	if err != nil {
		return Result{}, err
	}
	st, err := r.stateOf(p)
	if err != nil {
		return Result{}, err
	}
	resume := func(ro []react.RunOption) (react.Result, error) {
		return r.loop.ResumeRun(ctx, id, d, ro...)
	}
	return r.drive(ctx, st, resume, opts)
}

// continueAfter goes on with the task once its current step's run, res,
// returned.
func (r *Runner) continueAfter(ctx context.Context, st *state, res react.Result, err error, opts []react.RunOption) (Result, error) {
	return r.drive(ctx, st, func([]react.RunOption) (react.Result, error) { return res, err }, opts)
}

// lazyVerifier is the verifier of a step resumed without its state read
// beforehand: it reads the step from the state the check carries.
type lazyVerifier struct {
	r  *Runner
	mu sync.Mutex
	v  react.Verifier
	ok bool
}

// Verify implements react.Verifier.
func (l *lazyVerifier) Verify(ctx context.Context, c react.Check) (react.StepVerdict, error) {
	l.mu.Lock()
	if !l.ok {
		st, err := decodeState(c.HostState, &l.r.task, l.r.digest)
		if err != nil {
			l.mu.Unlock()
			return react.StepVerdict{}, err
		}
		step, _ := l.r.task.step(st.Current)
		l.v, l.ok = l.r.verifier(st, step), true
	}
	v := l.v
	l.mu.Unlock()
	if v == nil {
		return react.StepVerdict{}, nil
	}
	return v.Verify(ctx, c)
}

// stateOf reads the task state a stopped step carries.
func (r *Runner) stateOf(p react.Pending) (*state, error) {
	if p.HostKind != HostKind {
		return nil, fmt.Errorf("%w: run %s", ErrNotATask, p.Run)
	}
	return decodeState(p.HostState, &r.task, r.digest)
}

// drive runs the task's steps from st.Current until the task ends or a
// step stops. resume, when not nil, continues the stopped step instead of
// starting it.
func (r *Runner) drive(ctx context.Context, st *state, resume func([]react.RunOption) (react.Result, error), opts []react.RunOption) (Result, error) {
	var kept error // errors of steps that ended all the same (keeping their records, settling their claims)
	for {
		step, _ := r.task.step(st.Current)
		if resume == nil && !st.Final {
			st.Count++
		}
		hostState, err := st.encode()
		if err != nil {
			return Result{}, err
		}
		ro := append(append([]react.RunOption(nil), opts...),
			react.WithVerifier(r.verifier(st, step)),
			react.WithHostState(HostKind, hostState))
		var res react.Result
		if resume != nil {
			res, err = resume(ro)
			resume = nil
			if res.Status == 0 { // refused before anything ran
				return Result{}, err
			}
		} else {
			ro = append(ro, react.WithInputs(r.inputs(st)))
			res, err = r.loop.Run(ctx, r.node(step), st.Input, ro...)
			if res.Status == 0 {
				return Result{}, fmt.Errorf("task %s: step %s: %w", st.ID, step.Name, err)
			}
		}
		switch res.Status {
		case react.Suspended, react.Interrupted:
			if res.Status == react.Suspended {
				r.m.countSuspended()
			}
			return r.stopped(st, step, res), errors.Join(kept, err)
		case react.Finished, react.Failed:
		}
		// The step ended: an error here is one of bookkeeping (the run
		// store's deletion, which the loop tries again; the settling of
		// the resume's claim), reported with the task's result.
		kept = errors.Join(kept, err)
		if done, out := r.advance(st, step, res); done {
			return out, kept
		}
	}
}

// advance records the step that ended, picks the next one and reports
// true with the task's result when the task ended.
func (r *Runner) advance(st *state, step Step, res react.Result) (bool, Result) {
	rec := r.record(step, res)
	st.Done = append(st.Done, rec)
	r.m.countStep(rec.Status)
	if st.Final {
		return true, r.end(st, res)
	}
	next := ""
	o := Outcome{Step: rec.Step, Status: rec.Status, Reason: rec.Reason, Outputs: rec.Outputs, Verified: rec.Verified}
	for _, e := range step.Next {
		if e.When == nil || e.When(o) {
			next = e.To
			break
		}
	}
	if next != "" && st.Count >= r.task.maxSteps() {
		next, st.Limit = "", true
	}
	if next != "" {
		st.Current = next
		return false, Result{}
	}
	if r.task.Final != nil {
		st.Current, st.Final = r.task.Final.Name, true
		return false, Result{}
	}
	return true, r.end(st, res)
}

// node is step's node, named after it.
func (r *Runner) node(step Step) react.Node {
	n := step.Node
	n.Name = step.Name
	return n
}

// inputs are what the step starting now receives: the verified outputs of
// the satisfied steps so far (the latest run of each), and, for the final
// step, the statuses of every step.
func (r *Runner) inputs(st *state) react.Inputs {
	var in react.Inputs
	seen := map[string]bool{}
	for i := len(st.Done) - 1; i >= 0; i-- {
		d := st.Done[i]
		if seen[d.Step] {
			continue
		}
		seen[d.Step] = true
		if d.Status == react.StepSatisfied && len(d.Verified) > 0 {
			in.Steps = append([]react.Input{{Step: d.Step, Outputs: d.Verified,
				Provenance: evidence.Provenance{Source: "task " + st.ID + ", step run " + d.Run, FetchedAt: r.now()}}}, in.Steps...)
		}
	}
	if st.Final {
		in.Statuses = r.statuses(st)
	}
	return in
}

// statuses are the steps' statuses the final step is shown: every step of
// the graph that ran (its latest run), and every required step that did
// not.
func (r *Runner) statuses(st *state) []react.StepState {
	var out []react.StepState
	for _, s := range r.task.Steps {
		d, ran := st.last(s.Name)
		switch {
		case ran:
			ss := react.StepState{Step: s.Name, Status: d.Status, Reason: d.Reason}
			if d.Status != react.StepSatisfied {
				ss.MustSay = r.mustSay(s.Name)
			}
			out = append(out, ss)
		case r.required(st, s.Name):
			out = append(out, react.StepState{Step: s.Name, Status: react.StepPending, Reason: r.notRun(st), MustSay: r.mustSay(s.Name)})
		}
	}
	return out
}

// notRun says why a step did not run.
func (r *Runner) notRun(st *state) string {
	if st.Limit {
		return r.cat.Text(prompt.ReasonStepLimit, "max", strconv.Itoa(r.task.maxSteps()))
	}
	return r.cat.Text(prompt.ReasonStepNotRun)
}

// record is what the task keeps of a step run that ended.
func (r *Runner) record(step Step, res react.Result) stepRecord {
	rec := stepRecord{Step: step.Name, Run: res.Run, Status: res.Step.Status, Reason: res.Step.Reason, Calls: res.Calls, Goal: res.Goal}
	if len(res.Outputs) > 0 {
		rec.Outputs = maps.Clone(res.Outputs)
	}
	if rec.Status == react.StepSatisfied {
		for k, v := range res.Outputs {
			if v.Source == react.SourceToolResult || v.Source == react.SourceUser {
				if rec.Verified == nil {
					rec.Verified = map[string]json.RawMessage{}
				}
				rec.Verified[k] = v.Value
			}
		}
	}
	rec.Facts = facts(res)
	return rec
}

// stopped is the result of a task whose step stopped.
func (r *Runner) stopped(st *state, step Step, res react.Result) Result {
	out := r.report(st)
	out.Status = Interrupted
	if res.Status == react.Suspended {
		out.Status = Suspended
	}
	out.Step, out.Run, out.Snapshot = step.Name, res.Run, res.Snapshot
	if res.Suspension != nil {
		s := *res.Suspension
		out.Suspension = &s
	}
	out.Steps = append(out.Steps, StepResult{Step: step.Name, Run: res.Run, Status: res.Step.Status, Reason: res.Step.Reason, Calls: res.Calls, Goal: res.Goal})
	return out
}

// report is the task's result without its end: its steps so far.
func (r *Runner) report(st *state) Result {
	out := Result{ID: st.ID}
	for _, d := range st.Done {
		out.Steps = append(out.Steps, StepResult{Step: d.Step, Run: d.Run, Status: d.Status, Reason: d.Reason, Verified: d.Verified, Calls: d.Calls, Goal: d.Goal})
	}
	return out
}

// end decides the task's status by its acceptance rule once its last step
// (res) ended.
func (r *Runner) end(st *state, res react.Result) Result {
	out := r.report(st)
	if st.Final {
		out.Answer = res.Summary
		if len(res.Outputs) > 0 {
			out.Outputs = maps.Clone(res.Outputs)
		}
	}
	required, optional := false, false
	for _, it := range r.items(st) {
		done, m := r.item(st, it)
		if done {
			out.Completed = append(out.Completed, it)
			continue
		}
		m.Required = r.required(st, it)
		if m.Required {
			required = true
		} else {
			optional = true
		}
		out.Missing = append(out.Missing, m)
		out.Continue = out.Continue || m.Continue
	}
	switch {
	case required:
		out.Status = Unmet
	case optional:
		out.Status = PartiallyMet
	default:
		out.Status = Met
	}
	r.m.countEnded(out.Status)
	if r.recordTo != nil {
		r.recordTo.RecordTask(out.Status == Met)
	}
	return out
}

// items are the items the task is judged on: the required ones, then the
// optional ones that ran or are outputs of steps that ran.
func (r *Runner) items(st *state) []string {
	acc := r.task.Acceptance
	var out []string
	if acc.Required != nil {
		out = append(out, acc.Required...)
	} else {
		for _, s := range r.task.all() {
			if _, ran := st.last(s.Name); ran && !contains(acc.Optional, s.Name) {
				out = append(out, s.Name)
			}
		}
		if f := r.task.Final; f != nil && !contains(out, f.Name) {
			out = append(out, f.Name)
		}
	}
	for _, it := range acc.Optional {
		step, _, _ := cut(it)
		if _, ran := st.last(step); ran && !contains(out, it) {
			out = append(out, it)
		}
	}
	return out
}

// required reports whether item it is required.
func (r *Runner) required(st *state, it string) bool {
	acc := r.task.Acceptance
	if acc.Required != nil {
		return contains(acc.Required, it)
	}
	if contains(acc.Optional, it) {
		return false
	}
	step, _, _ := cut(it)
	if f := r.task.Final; f != nil && step == f.Name {
		return true
	}
	_, ran := st.last(step)
	return ran
}

// item reports whether item it was completed, else why it is missing.
func (r *Runner) item(st *state, it string) (bool, Missing) {
	step, key, isOutput := cut(it)
	m := Missing{Item: it, MustSay: r.mustSay(it)}
	d, ran := st.last(step)
	if !ran {
		m.Status, m.Why, m.Continue = react.StepPending, r.notRun(st), st.Limit
		return false, m
	}
	m.Status, m.Why = d.Status, d.Reason
	if d.Status == react.StepSatisfied {
		if !isOutput {
			return true, m
		}
		if _, ok := d.Verified[key]; ok {
			return true, m
		}
		m.Status, m.Why = react.StepInsufficient, r.cat.Text(prompt.ReasonOutputMissing, "key", key)
	}
	m.Continue = d.Status == react.StepBlocked || d.Status == react.StepInsufficient
	return false, m
}

// mustSay is what the answer must say about a missing item.
func (r *Runner) mustSay(it string) string {
	if s := r.task.Acceptance.MustSay[it]; s != "" {
		return s
	}
	return it
}

func cut(it string) (step, key string, output bool) {
	for i := 0; i < len(it); i++ {
		if it[i] == '.' {
			return it[:i], it[i+1:], true
		}
	}
	return it, "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
