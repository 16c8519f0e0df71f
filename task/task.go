package task

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/react"
)

// DefaultMaxSteps bounds the step runs of a [Task] whose MaxSteps is 0
// (its final step apart).
const DefaultMaxSteps = 16

// MaxStepName bounds, in bytes, the name of a step.
const MaxStepName = 128

// Task is a graph of steps, each one run of a react node: a task starts at
// its first step (or Start), and after each step the first of the step's
// edges whose condition holds for the step's outcome names the next step;
// a step without a matching edge ends the graph. Then the Final step, when
// there is one, writes the task's answer from the statuses of every step.
// Whether the task is met, partially met or unmet is decided by its
// Acceptance, a rule fixed with the task ("whether partial
// success is accepted is a business rule; it must be written down when the
// task is defined, not left to the model once something failed").
//
// A Task is a plain value; [New] checks it and copies it. It is code, not
// state: a task's sealed state names it by Name and a digest of its steps,
// and a resume with a task that changed is refused ([ErrTaskChanged]).
type Task struct {
	// Name identifies the task (in its sealed state, metrics and errors).
	// Required.
	Name string
	// Steps are the steps of the graph; names are unique.
	Steps []Step
	// Start names the first step; "" means Steps[0].
	Start string
	// MaxSteps bounds the step runs of the graph, so that a graph with a
	// loop ends; 0 means [DefaultMaxSteps]. Reaching it ends the graph
	// (REASON_STEP_LIMIT for the steps it did not reach).
	MaxSteps int
	// Final, when set, is the step that writes the task's answer once the
	// graph ended, whatever its path: its model is shown the status of
	// every step, receives every verified output, and its finish is
	// refused when the answer states a fact of a step that is not
	// verified (ANSWER_CLAIMS_UNVERIFIED) or does not say what the
	// acceptance rule requires about a missing item
	// (ANSWER_OMITS_MISSING). It is required for the task to be met.
	Final *Step
	// Acceptance decides met, partially met or unmet.
	Acceptance Acceptance
}

// Step is one node of a task's graph.
type Step struct {
	// Name identifies the step: in edges, in acceptance items, in the
	// sources of parameters (tool.Step(name, key)) and as the name of its
	// node's runs. Required; at most [MaxStepName] bytes.
	Name string
	// Node is the react node the step runs; its Name is replaced by the
	// step's.
	Node react.Node
	// Verify checks the step after each tool result and at its finish
	// (react.Verifier; see [AllOf], [Judge]); nil leaves it to the node's
	// completion conditions: satisfied when every required output was set
	// from a checked source.
	Verify react.Verifier
	// Next are the edges out of the step, tried in order; the first whose
	// When holds (or has no When) names the next step. None ends the
	// graph.
	Next []Edge
}

// Edge leads from a step to the next, when its condition holds.
type Edge struct {
	// To names the next step. Required.
	To string
	// When reports whether the edge applies to the step's outcome; nil
	// means always. See [OnStatus] and [OnOutput].
	When func(Outcome) bool
}

// Outcome is how a step ended, as its edges see it.
type Outcome struct {
	// Step is the step's name.
	Step string
	// Status is satisfied, insufficient, blocked or failed.
	Status react.StepStatus
	// Reason says why it is not satisfied (may be empty).
	Reason string
	// Outputs are every output the step's run set, verified or not.
	Outputs map[string]react.OutputValue
	// Verified are the outputs the step hands on: those of a satisfied
	// step whose source was checked (a tool result, the user's words).
	Verified map[string]json.RawMessage
}

// OnStatus returns a condition that holds when the step ended with one of
// statuses.
func OnStatus(statuses ...react.StepStatus) func(Outcome) bool {
	return func(o Outcome) bool { return slices.Contains(statuses, o.Status) }
}

// OnOutput returns a condition that holds when the step verified output
// key with a value canonically equal to value's JSON (so "7" is not 7, and
// {"a":1,"b":2} is {"b":2,"a":1}). It panics if value cannot be encoded: a
// programming error.
func OnOutput(key string, value any) func(Outcome) bool {
	b, err := json.Marshal(value)
	if err != nil {
		panic("task.OnOutput: " + err.Error())
	}
	want, err := fingerprint.Canonical(b)
	if err != nil {
		panic("task.OnOutput: " + err.Error())
	}
	return func(o Outcome) bool {
		got, ok := o.Verified[key]
		if !ok {
			return false
		}
		c, err := fingerprint.Canonical(got)
		return err == nil && bytes.Equal(c, want)
	}
}

// Acceptance is the task's rule of success (partial success is
// recorded as completed items, missing items, why, and whether the task
// may continue; the final answer must tell the user what is missing).
// Items are step names ("search": the step satisfied) and step outputs
// ("search.hotel_id": the output verified by a satisfied step).
type Acceptance struct {
	// Required items must be completed for the task to be met or
	// partially met; a required item missing makes it unmet. Nil means
	// every step that ran, and the Final step.
	Required []string `json:"required,omitempty"`
	// Optional items may be missing: the task is then partially met (if
	// nothing required is missing), and the answer must say so.
	Optional []string `json:"optional,omitempty"`
	// MustSay is what the final answer must say about an item when it is
	// missing (compared without regard to case and spacing); an item not
	// listed must be named by its own text (its step name, or
	// "step.key").
	MustSay map[string]string `json:"must_say,omitempty"`
}

// Errors of [New] and of the runner.
var (
	// ErrInvalidTask is wrapped by [New]'s error for a task that cannot
	// run; the error says what is wrong.
	ErrInvalidTask = errors.New("task: invalid task")
	// ErrTaskChanged: a snapshot's sealed task state names another task,
	// or a task whose steps changed since it was sealed: nothing is
	// resumed.
	ErrTaskChanged = errors.New("task: the snapshot belongs to another task, or to an earlier version of this one")
	// ErrNotATask: the snapshot is not a step of a task (it carries no
	// task state).
	ErrNotATask = errors.New("task: the snapshot is not a step of a task")
)

// HostKind is the kind of host state a task seals into its steps'
// snapshots (react.WithHostState, react.Pending.HostKind).
const HostKind = "reactguard.task"

// check validates t.
func (t *Task) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidTask, t.Name, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(t.Name) == "" {
		return bad("no name")
	}
	if len(t.Steps) == 0 {
		return bad("no steps")
	}
	if t.MaxSteps < 0 {
		return bad("negative MaxSteps")
	}
	names := map[string]bool{}
	all := t.all()
	for _, s := range all {
		switch {
		case s.Name == "" || strings.TrimSpace(s.Name) != s.Name:
			return bad("a step without a name, or with spaces around it (%q)", s.Name)
		case len(s.Name) > MaxStepName || !utf8.ValidString(s.Name):
			return bad("step name %q is longer than %d bytes or not UTF-8", s.Name, MaxStepName)
		case strings.ContainsAny(s.Name, ".\n"):
			return bad("step name %q holds a dot or a line break (an item is step or step.key)", s.Name)
		case names[s.Name]:
			return bad("step %s defined twice", s.Name)
		}
		names[s.Name] = true
	}
	if t.Start != "" && !slices.ContainsFunc(t.Steps, func(s Step) bool { return s.Name == t.Start }) {
		return bad("Start names %s, which is not a step of the graph", t.Start)
	}
	for _, s := range t.Steps {
		for _, e := range s.Next {
			if e.To == "" || !slices.ContainsFunc(t.Steps, func(x Step) bool { return x.Name == e.To }) {
				return bad("step %s has an edge to %q, which is not a step of the graph", s.Name, e.To)
			}
		}
	}
	if t.Final != nil && len(t.Final.Next) > 0 {
		return bad("the final step %s has edges: it ends the task", t.Final.Name)
	}
	items := map[string]bool{}
	for _, list := range [][]string{t.Acceptance.Required, t.Acceptance.Optional} {
		for _, it := range list {
			if err := t.checkItem(it); err != nil {
				return bad("%v", err)
			}
			if items[it] {
				return bad("item %s is listed twice", it)
			}
			items[it] = true
		}
	}
	for it := range t.Acceptance.MustSay {
		if err := t.checkItem(it); err != nil {
			return bad("MustSay: %v", err)
		}
	}
	return nil
}

// checkItem reports an item that names no step or no declared output.
func (t *Task) checkItem(it string) error {
	step, key, hasKey := strings.Cut(it, ".")
	s, ok := t.step(step)
	if !ok {
		return fmt.Errorf("item %s names no step", it)
	}
	if hasKey && !slices.ContainsFunc(s.Node.Outputs, func(o react.Output) bool { return o.Key == key }) {
		return fmt.Errorf("item %s names an output step %s does not declare", it, step)
	}
	return nil
}

// all returns the graph's steps and the final one.
func (t *Task) all() []Step {
	if t.Final == nil {
		return t.Steps
	}
	return append(slices.Clip(t.Steps), *t.Final)
}

// step returns the step called name, the final one included.
func (t *Task) step(name string) (Step, bool) {
	for _, s := range t.all() {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

// start returns the name of the first step.
func (t *Task) start() string {
	if t.Start != "" {
		return t.Start
	}
	return t.Steps[0].Name
}

func (t *Task) maxSteps() int {
	if t.MaxSteps > 0 {
		return t.MaxSteps
	}
	return DefaultMaxSteps
}

// digest identifies the task's definition in its sealed state: its name,
// and each step's name, node (as JSON) and edge targets. Conditions and
// verifiers are code and are not in it.
func (t *Task) digest() string {
	h := sha256.New()
	w := func(s string) { _, _ = fmt.Fprintf(h, "%d:%s;", len(s), s) } // a hash.Hash never fails
	w(t.Name)
	w(t.start())
	for _, s := range t.all() {
		w(s.Name)
		n, _ := json.Marshal(s.Node)
		w(string(n))
		for _, e := range s.Next {
			w(e.To)
		}
		w("|")
	}
	acc, _ := json.Marshal(t.Acceptance)
	w(string(acc))
	return hex.EncodeToString(h.Sum(nil)[:12])
}
