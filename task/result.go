package task

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/reactguard/reactguard/react"
)

// Status is how a task stands. The zero value is invalid and never
// returned.
type Status uint8

// The statuses.
const (
	// Suspended: a step waits for a person (an approval, an answer);
	// resume it with [Runner.Resume] or [Runner.ResumeRun].
	Suspended Status = 1
	// Interrupted: a step stopped on an error (returned with the result);
	// resume it with react.Continue once the cause is gone.
	Interrupted Status = 2
	// Met: every item of the acceptance rule is completed.
	Met Status = 3
	// PartiallyMet: every required item is completed, some optional ones
	// are missing, and the answer says so ([Result].Missing).
	PartiallyMet Status = 4
	// Unmet: a required item is missing.
	Unmet Status = 5

	minStatus = Suspended
	maxStatus = Unmet
)

var statusNames = [...]string{
	Suspended:    "suspended",
	Interrupted:  "interrupted",
	Met:          "met",
	PartiallyMet: "partially_met",
	Unmet:        "unmet",
}

// String returns suspended, interrupted, met, partially_met or unmet.
func (s Status) String() string {
	if s.IsValid() {
		return statusNames[s]
	}
	return "task_status(" + strconv.Itoa(int(s)) + ")"
}

// IsValid reports whether s is one of the statuses.
func (s Status) IsValid() bool { return s >= minStatus && s <= maxStatus }

// Ended reports whether the task ended (met, partially met or unmet).
func (s Status) Ended() bool { return s >= Met && s <= Unmet }

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (s Status) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("task: cannot marshal invalid status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *Status) UnmarshalText(b []byte) error {
	for v := minStatus; v <= maxStatus; v++ {
		if statusNames[v] == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("task: unknown status %q", b)
}

// Result is what [Runner.Run] and [Runner.Resume] return. The caller owns
// it.
type Result struct {
	// ID is the task's id.
	ID string `json:"id"`
	// Status is how the task stands; always valid.
	Status Status `json:"status"`
	// Steps are the step runs of the task so far, in order (a step may
	// run more than once in a graph with a loop), the final one included.
	Steps []StepResult `json:"steps"`
	// Completed are the items of the acceptance rule that were completed,
	// and Missing those that were not, with why (once the task ended).
	Completed []string  `json:"completed,omitempty"`
	Missing   []Missing `json:"missing,omitempty"`
	// Continue reports that continuing could complete a missing item (a
	// blocked or insufficient step: a person, more information or time
	// may clear it); false when nothing is missing or every missing item
	// failed.
	Continue bool `json:"continue,omitempty"`
	// Answer and Outputs are the final step's summary and outputs (once
	// the task ended with a final step that finished).
	Answer  string                       `json:"answer,omitempty"`
	Outputs map[string]react.OutputValue `json:"outputs,omitempty"`
	// Step names the step that stopped (Suspended, Interrupted) and Run
	// its run's id, which [Runner.ResumeRun] takes.
	Step string `json:"step,omitempty"`
	Run  string `json:"run,omitempty"`
	// Suspension is what a Suspended task waits for, with its ticket.
	Suspension *react.Suspension `json:"suspension,omitempty"`
	// Snapshot resumes a Suspended or Interrupted task: the stopped
	// step's sealed snapshot, which carries the task's state.
	Snapshot []byte `json:"-"`
}

// StepResult is one step run of a task.
type StepResult struct {
	// Step is the step's name and Run its run's id.
	Step string `json:"step"`
	Run  string `json:"run"`
	// Status is the step's status (in_progress while it is stopped).
	Status react.StepStatus `json:"status"`
	// Reason says why it is not satisfied.
	Reason string `json:"reason,omitempty"`
	// Verified are the outputs it handed on (a satisfied step's outputs
	// from checked sources).
	Verified map[string]json.RawMessage `json:"verified,omitempty"`
	// Calls are its run's call reports: the three layers of each call,
	// the step verifier's verdicts and each result's provenance (when,
	// from where, which version).
	Calls []react.CallReport `json:"calls,omitempty"`
	// Goal is its run's goal status.
	Goal react.GoalStatus `json:"goal"`
}

// Missing is an item of the acceptance rule that was not completed.
type Missing struct {
	// Item is the step ("search") or output ("search.hotel_id").
	Item string `json:"item"`
	// Required reports a required item (the task is then unmet).
	Required bool `json:"required,omitempty"`
	// Status is its step's status: pending when no branch led to it.
	Status react.StepStatus `json:"status"`
	// Why says why it is missing.
	Why string `json:"why,omitempty"`
	// Continue reports that continuing could complete it (blocked,
	// insufficient, or not reached because of the step limit).
	Continue bool `json:"continue,omitempty"`
	// MustSay is what the answer had to say about it.
	MustSay string `json:"must_say,omitempty"`
}
