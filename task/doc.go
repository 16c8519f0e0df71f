// Package task runs tasks of several steps: a graph of react nodes whose
// steps are verified before they count, whose verified outputs are the
// sources of the next steps, and whose success — met, partially met or
// unmet — is decided by a rule fixed with the task.
//
//	t := task.Task{
//		Name: "trip",
//		Steps: []task.Step{
//			{Name: "search", Node: searchNode, Verify: task.AllOf(hasTwoSources, judge),
//				Next: []task.Edge{
//					{To: "book", When: task.OnStatus(react.StepSatisfied)},
//					{To: "alternatives"},
//				}},
//			{Name: "book", Node: bookNode},     // a parameter: tool.Step("search", "hotel_id")
//			{Name: "alternatives", Node: altNode},
//		},
//		Final:      &task.Step{Name: "answer", Node: answerNode},
//		Acceptance: task.Acceptance{Optional: []string{"book"}, MustSay: map[string]string{"book": "not booked"}},
//	}
//	runner, err := task.New(loop, t, nil)
//	res, err := runner.Run(ctx, "Find and book a hotel in Bern for Friday.", react.WithOwner(owner))
//	switch res.Status {
//	case task.Suspended: // a step waits for a person: store res.Snapshot (or res.Run with Config.Runs)
//		res, err = runner.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket), react.WithOwner(owner))
//	case task.Met, task.PartiallyMet: // res.Answer; res.Missing says what is missing, why, whether to continue
//	case task.Unmet:
//	}
//
// # Steps and the graph
//
// Each step runs one react node in the runner's react.Loop, whose counting
// (stalls, rounds, verdicts) stays the loop's. After a step, the first of
// its edges whose condition holds for its [Outcome] (its status, its
// verified outputs: [OnStatus], [OnOutput]) names the next step; a step
// without a matching edge ends the graph, and so does Task.MaxSteps, which
// bounds a graph with loops. The Final step then writes the task's answer.
//
// # Steps are verified before they count
//
// A step has the statuses docs/tasks.md lists: pending, in progress, satisfied,
// insufficient, blocked and failed (react.StepStatus). A step's verifier
// (Step.Verify: a host function, a model [Judge] with a rubric, or both
// with [AllOf]) runs after each of its tool results — the model reads the
// verdict after the result — and when the model finishes the step, which
// it refuses unless the verdict is satisfied (react.WithVerifier). A step
// without a verifier is satisfied only when its node's completion
// conditions hold (every required output set from a checked source):
// never because a tool returned.
//
// # Outputs are the next steps' sources
//
// A satisfied step hands on the outputs it set from checked sources (a
// tool result, the user's words); an output the model wrote itself, or an
// output of a step that is not satisfied, is never handed on. The next
// steps' runs hold them as results in their evidence (react.WithInputs,
// evidence.StepRef): a parameter declared tool.Step(step, key) accepts
// exactly their values — not a value of the step's own tool results, not
// the user's words, not one the model made up (REJECTED
// PARAM_PROVENANCE_MISMATCH, or PARAM_PROVENANCE_STEP_MISSING when the step
// did not hand that output on) — and builtin_output_set accepts them with
// sourceRef "step:<name>".
//
// # Suspension and resume
//
// A step that stops for a person (an approval, a follow-up) stops the
// task: the task's state is sealed into the step's snapshot
// (react.WithHostState, kind [HostKind]), so the task is resumed once,
// with the step's ticket and owner, through the loop's seal and claims;
// the resume continues the step and then the task. A plain
// react.Loop.Resume of a task's step is refused (react.ErrHostState), so
// nothing continues a step behind its task. A snapshot of another task, or
// of an earlier version of this one, is refused ([ErrTaskChanged]).
//
// # Partial success is a rule of the task
//
// Task.Acceptance lists the required and the optional items (steps, and
// step outputs "step.key") and what the answer must say about each when it
// is missing. A task ends met (every item completed), partially met (only
// optional items missing) or unmet (a required item missing), with the
// completed and missing items, why each is missing and whether continuing
// could complete it ([Result]). The Final step is shown every step's
// status and what it must say; its finish is refused when its answer
// states a fact that only an unverified step produced
// (ANSWER_CLAIMS_UNVERIFIED) or omits what the rule requires
// (ANSWER_OMITS_MISSING), each with a next step.
//
// The task's own acceptance decides its success: [Metrics] counts tasks
// met, partially met and unmet over the tasks started, and Options.Record
// feeds react.Metrics.RecordTask without a host call.
//
// # What a task does not do
//
// A process killed after a step ended and before the next one started
// loses the task's continuation (the ended step's effects stay: its writes
// ran at most once): the task's state is sealed only into the snapshots of
// stopped steps. docs/tasks.md describes tasks with a runnable example.
package task
