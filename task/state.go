package task

import (
	"encoding/json"
	"fmt"

	"github.com/reactguard/reactguard/react"
)

// stateVersion is the version of the sealed task state.
const stateVersion = 1

// state is what a task knows between its steps. It travels sealed inside
// the snapshot of the step that stopped (react.WithHostState), so that it
// is resumed once, with the step, under the step's ticket and owner.
type state struct {
	V       int          `json:"v"`
	Task    string       `json:"task"`
	Digest  string       `json:"digest"`
	ID      string       `json:"id"`
	Input   string       `json:"input"`
	Current string       `json:"current"`         // the step being run
	Final   bool         `json:"final,omitempty"` // Current is the final step
	Count   int          `json:"count"`           // graph step runs started
	Limit   bool         `json:"limit,omitempty"` // the graph ended at its step limit
	Done    []stepRecord `json:"done,omitempty"`  // step runs that ended, in order
}

// stepRecord is a step run that ended.
type stepRecord struct {
	Step     string                       `json:"step"`
	Run      string                       `json:"run"`
	Status   react.StepStatus             `json:"status"`
	Reason   string                       `json:"reason,omitempty"`
	Outputs  map[string]react.OutputValue `json:"outputs,omitempty"`
	Verified map[string]json.RawMessage   `json:"verified,omitempty"`
	Facts    []string                     `json:"facts,omitempty"` // claim tokens of its results and outputs
	Calls    []react.CallReport           `json:"calls,omitempty"`
	Goal     react.GoalStatus             `json:"goal"`
}

// encode returns the state's JSON, within react.MaxHostState: when it is
// larger, the call reports of the earliest steps are dropped first, then
// their facts.
func (s *state) encode() ([]byte, error) {
	for drop := 0; ; drop++ {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("task: state: %w", err)
		}
		if len(b) <= react.MaxHostState {
			return b, nil
		}
		if drop >= 2*len(s.Done) {
			return nil, fmt.Errorf("task: the state of task %s takes %d bytes, more than react.MaxHostState", s.ID, len(b))
		}
		if i := drop; i < len(s.Done) {
			s.Done[i].Calls = nil
		} else {
			s.Done[i-len(s.Done)].Facts = nil
		}
	}
}

// decodeState reads the state sealed in a step's snapshot and checks it
// against the task t.
func decodeState(b []byte, t *Task, digest string) (*state, error) {
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: its state does not decode: %w", ErrTaskChanged, err)
	}
	switch {
	case s.V != stateVersion:
		return nil, fmt.Errorf("%w: state version %d", ErrTaskChanged, s.V)
	case s.Task != t.Name || s.Digest != digest:
		return nil, fmt.Errorf("%w: sealed by task %q (%s), this is %q (%s)", ErrTaskChanged, s.Task, s.Digest, t.Name, digest)
	}
	if _, ok := t.step(s.Current); !ok {
		return nil, fmt.Errorf("%w: it stopped at step %q, which the task does not have", ErrTaskChanged, s.Current)
	}
	return &s, nil
}

// last returns the latest record of step name.
func (s *state) last(name string) (stepRecord, bool) {
	for i := len(s.Done) - 1; i >= 0; i-- {
		if s.Done[i].Step == name {
			return s.Done[i], true
		}
	}
	return stepRecord{}, false
}
