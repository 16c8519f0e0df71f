package task

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// Inbox is the loop an approvals inbox reads and resumes runs through
// (package inbox: Options.Loop) when some runs are steps of tasks: a
// decision on a task's step is applied by the task's runner, so the step
// goes on and then the task (its next steps, its answer's checks, its
// acceptance), exactly as [Runner.ResumeRun]; every other run is resumed
// by the loop. A plain react.Loop refuses to resume a task's step
// (react.ErrHostState), so an inbox without Inbox shows such a step and
// cannot decide it. Listing, reading and history are the loop's. Inbox is
// safe for concurrent use when its fields are not changed.
type Inbox struct {
	// Loop is the loop of the runs, with a run store (Config.Runs).
	Loop *react.Loop
	// Runners are the runners of the tasks whose steps the inbox may
	// decide, each over Loop; a step of a task without a runner here is
	// refused with [ErrTaskChanged].
	Runners []*Runner
}

// ListPending is react.Loop.ListPending.
func (i *Inbox) ListPending(ctx context.Context, f runstore.Filter, opts ...react.RunOption) (react.PendingPage, error) {
	return i.Loop.ListPending(ctx, f, opts...)
}

// Pending is react.Loop.Pending.
func (i *Inbox) Pending(ctx context.Context, id string, opts ...react.RunOption) (react.Pending, error) {
	return i.Loop.Pending(ctx, id, opts...)
}

// History is react.Loop.History.
func (i *Inbox) History(ctx context.Context, id string, opts ...react.RunOption) ([]runstore.Decision, error) {
	return i.Loop.History(ctx, id, opts...)
}

// ResumeRun resumes run id with d: through its task's runner when it is a
// task's step, else through the loop. The result is the task's, as a run's:
// suspended or interrupted (at the step that stopped: Run names it),
// finished when the task is met or partially met, failed when it is unmet.
func (i *Inbox) ResumeRun(ctx context.Context, id string, d react.Decision, opts ...react.RunOption) (react.Result, error) {
	p, err := i.Loop.Pending(ctx, id, opts...)
	if err != nil || p.HostKind != HostKind {
		return i.Loop.ResumeRun(ctx, id, d, opts...)
	}
	var head struct {
		Task string `json:"task"`
	}
	_ = json.Unmarshal(p.HostState, &head) // a state that does not decode is refused by the runner
	for _, r := range i.Runners {
		if r != nil && r.task.Name == head.Task {
			res, err := r.ResumeRun(ctx, id, d, opts...)
			return res.asRun(), err
		}
	}
	return react.Result{}, fmt.Errorf("%w: run %s is a step of task %q, which this inbox has no runner of", ErrTaskChanged, id, head.Task)
}

// asRun is the task's result as a run's result, for a caller that knows
// runs only.
func (r Result) asRun() react.Result {
	out := react.Result{Run: r.Run, Summary: r.Answer, Outputs: r.Outputs, Snapshot: r.Snapshot}
	switch r.Status {
	case Suspended:
		out.Status, out.Suspension = react.Suspended, r.Suspension
	case Interrupted:
		out.Status = react.Interrupted
	case Met, PartiallyMet:
		out.Status = react.Finished
	case Unmet:
		out.Status = react.Failed
	}
	if out.Outputs == nil {
		out.Outputs = map[string]react.OutputValue{}
	}
	return out
}
