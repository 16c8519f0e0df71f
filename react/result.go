package react

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Status is how a run ended. The zero value is invalid and never returned.
type Status uint8

// The statuses.
const (
	// Finished: the model called builtin_node_finish and every required
	// output was set.
	Finished Status = 1
	// Failed: the model called builtin_node_fail, or the loop gave up (no
	// progress past the limit, round limit); see [Result].Failure.
	Failed Status = 2
	// Suspended: the run waits for a user's decision (approval) or answer
	// (follow-up); resume it with [Loop.Resume].
	Suspended Status = 3
	// Interrupted: the run stopped on an error (the context was cancelled,
	// the model or a store failed) and the error was returned with the
	// result; resume it with [Continue] once the cause is gone.
	Interrupted Status = 4

	minStatus = Finished
	maxStatus = Interrupted
)

// IsValid reports whether s is one of the statuses.
func (s Status) IsValid() bool { return s >= minStatus && s <= maxStatus }

// String returns finished, failed, suspended or interrupted.
func (s Status) String() string {
	switch s {
	case Finished:
		return "finished"
	case Failed:
		return "failed"
	case Suspended:
		return "suspended"
	case Interrupted:
		return "interrupted"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (s Status) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal invalid status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *Status) UnmarshalText(b []byte) error {
	for v := minStatus; v <= maxStatus; v++ {
		if v.String() == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("react: unknown status %q", b)
}

// SuspensionKind says what a suspended run waits for. The zero value is
// invalid.
type SuspensionKind uint8

// The suspension kinds.
const (
	// SuspendApproval: the user must approve or decline one exact write
	// call ([Suspension].Approval).
	SuspendApproval SuspensionKind = 1
	// SuspendFollowUp: the user must answer [Suspension].Question.
	SuspendFollowUp SuspensionKind = 2
)

// String returns approval or follow_up.
func (k SuspensionKind) String() string {
	switch k {
	case SuspendApproval:
		return "approval"
	case SuspendFollowUp:
		return "follow_up"
	}
	return "suspension(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (k SuspensionKind) MarshalText() ([]byte, error) {
	if k != SuspendApproval && k != SuspendFollowUp {
		return nil, fmt.Errorf("react: cannot marshal invalid suspension kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and k is unchanged.
func (k *SuspensionKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "approval":
		*k = SuspendApproval
	case "follow_up":
		*k = SuspendFollowUp
	default:
		return fmt.Errorf("react: unknown suspension kind %q", b)
	}
	return nil
}

// PendingWrite is the write call an approval suspension asks the user
// about: exactly that tool with exactly those arguments.
type PendingWrite struct {
	// CallID is the id of the write call the write gate deferred.
	CallID string `json:"call_id"`
	// Tool is the write tool's name.
	Tool string `json:"tool"`
	// Args are the call's arguments as the model sent them.
	Args json.RawMessage `json:"args,omitempty"`
	// Fingerprint binds the approval to tool and canonical arguments.
	Fingerprint string `json:"fingerprint"`
}

// Suspension describes what a suspended run waits for.
type Suspension struct {
	// Kind is approval or follow-up.
	Kind SuspensionKind `json:"kind"`
	// CallID is the id of the call that suspended the run and whose tool
	// message the decision writes on resume: builtin_node_approval or
	// builtin_node_follow_up, or, with [Node].HostApproval, the deferred
	// write call itself (then equal to Approval.CallID).
	CallID string `json:"call_id"`
	// Approval is the write call to approve (SuspendApproval only).
	Approval *PendingWrite `json:"approval,omitempty"`
	// Reason is why the model asks for approval, in its words
	// (SuspendApproval only; may be empty).
	Reason string `json:"reason,omitempty"`
	// Question is what the model asks the user (SuspendFollowUp only).
	Question string `json:"question,omitempty"`
	// Ticket names this suspension: the run, the snapshot that recorded
	// it, the call that suspended, the gated write's call id and
	// fingerprint, and the run's owner, sealed under the snapshot key. A
	// person's decision carries it ([Approve], [Decline], [Answer]), so
	// that it applies to exactly what they were shown and to nothing the
	// run waits for later. Set in [Result].Suspension and [Pending]; empty
	// in [SuspendEvent], which comes before the snapshot is sealed. Treat
	// it as opaque text (it is URL- and form-safe).
	Ticket string `json:"ticket,omitempty"`
}

// FailureKind says why a run failed. The zero value is invalid.
type FailureKind uint8

// The failure kinds.
const (
	// FailedByModel: the model called builtin_node_fail.
	FailedByModel FailureKind = 1
	// FailedNoProgress: the stalls exceeded the node's no-progress limit.
	FailedNoProgress FailureKind = 2
	// FailedRoundLimit: the node reached its round limit without ending.
	FailedRoundLimit FailureKind = 3
)

// String returns model, no_progress or round_limit.
func (k FailureKind) String() string {
	switch k {
	case FailedByModel:
		return "model"
	case FailedNoProgress:
		return "no_progress"
	case FailedRoundLimit:
		return "round_limit"
	}
	return "failure(" + strconv.Itoa(int(k)) + ")"
}

// Failure says why a run failed.
type Failure struct {
	// Kind is the cause.
	Kind FailureKind
	// Reason is the model's reason (FailedByModel), or a description of the
	// limit that was hit. For FailedNoProgress it says how many of the
	// stalls were rounds in which the model called no tool.
	Reason string
	// NoToolCalls is the number of the consecutive stalls that failed the
	// run (FailedNoProgress) that were rounds without a tool call: turns
	// of text alone, which the specification's rule counts as no
	// progress.
	NoToolCalls int
	// Remedy is what the host can do so that runs like this one do not
	// fail this way, for the host's log and its developers (never shown
	// to the model); "" when there is nothing to say. A run failed by
	// rounds without a tool call names builtin_node_finish, which ends a
	// turn with an answer, and [Node].TextAnswers, which lets a reply in
	// text end it.
	Remedy string
}

// OutputValue is one output set by builtin_output_set.
type OutputValue struct {
	// Value is the JSON value the model set.
	Value json.RawMessage `json:"value"`
	// Source is where the value comes from.
	Source SourceType `json:"source"`
	// Ref is the call id of the tool result the value comes from
	// (SourceToolResult only).
	Ref string `json:"ref,omitempty"`
}

// Result is what [Loop.Run] and [Loop.Resume] return. The caller owns it.
type Result struct {
	// Status is how the run ended; always valid.
	Status Status
	// Run is the run's id; stores key its state by it.
	Run string
	// Outputs are the outputs set so far, by key. Never nil.
	Outputs map[string]OutputValue
	// Summary is the summary the model passed to builtin_node_finish
	// (Finished only; may be empty).
	Summary string
	// Suspension says what a Suspended run waits for; nil otherwise.
	Suspension *Suspension
	// Failure says why a Failed run failed; nil otherwise.
	Failure *Failure
	// Rounds is the number of model turns so far, across resumes.
	Rounds int
	// Stalls is the no-progress counter when the run stopped.
	Stalls int
	// Transcript is the chat history without the per-round system message:
	// the user's task, then the assistant turns and tool messages. Every
	// tool call has exactly one tool message, except the calls of the last
	// turn that a suspension or interruption left open: their messages are
	// written on resume.
	Transcript []Message
	// Snapshot is the run's state as JSON for [Loop.Resume]; set exactly
	// when Status is Suspended or Interrupted, but for a run whose state
	// could not be sealed (the returned error wraps [ErrSnapshotTooLarge]
	// or says the evidence could not be exported): it is Interrupted with
	// no snapshot.
	Snapshot []byte
	// Calls is the report of every processed call of the run, across
	// resumes, in order: verdict and three-layer account with the first and
	// final attempt (docs/evaluation.md). It survives the run's evidence, which the
	// loop forgets when the run ends (see Config.KeepRunState). Skipped
	// calls have no report. Read-only: it shares memory with the run.
	Calls []CallReport
	// Goal is the run's goal judged from its completion conditions, not
	// from the model saying it is done: met, unverified or unmet once the
	// run finished or failed, none while it is suspended or interrupted.
	Goal GoalStatus
	// Step is the run's status as a step of a task (the step statuses of
	// docs/tasks.md): satisfied only once verified ([WithVerifier]) or, without
	// a verifier's verdict, when the completion conditions hold.
	Step StepReport
	// HostState is the state of [WithHostState], as sealed with the run;
	// nil without it.
	HostState []byte
	// Thread is the thread whose message the run answers ([InThread]),
	// and Turn the message's turn in it (from 1); "" and 0 outside a
	// thread. Transcript holds the run's own messages, not the thread's
	// earlier turns ([Loop.Turns] reads those).
	Thread string
	Turn   int
}
