package eval

import (
	"fmt"
	"strconv"
)

// Category is one of the six kinds of task of the evaluation set
// (docs/evaluation.md).
// The zero value is invalid: every case names its category.
type Category uint8

// The categories, in order.
const (
	// NormalSuccess: call, execution and business all succeed.
	NormalSuccess Category = 1
	// ProtocolFailure: an unknown tool, a missing required parameter,
	// malformed arguments, an unpaired call.
	ProtocolFailure Category = 2
	// ExecutionFailure: a timeout, a rate limit, a changed response
	// shape, a missing resource.
	ExecutionFailure Category = 3
	// BusinessUnmet: the tool executed but the business goal is not met:
	// an empty, irrelevant or incomplete result, a business refusal.
	BusinessUnmet Category = 4
	// PermissionSideEffect: semantically right, but must not execute (a
	// declined approval, a refused permission, an uncertain write).
	PermissionSideEffect Category = 5
	// IntegrationFailure: the tool gave the right facts; the final answer
	// must carry them unchanged.
	IntegrationFailure Category = 6

	minCategory = NormalSuccess
	maxCategory = IntegrationFailure
)

var categoryNames = [...]string{
	NormalSuccess:        "normal_success",
	ProtocolFailure:      "protocol_failure",
	ExecutionFailure:     "execution_failure",
	BusinessUnmet:        "business_unmet",
	PermissionSideEffect: "permission_side_effect",
	IntegrationFailure:   "integration_failure",
}

var categoryTitles = [...]string{
	NormalSuccess:        "1 normal success",
	ProtocolFailure:      "2 protocol failure",
	ExecutionFailure:     "3 execution failure",
	BusinessUnmet:        "4 executed, business not met",
	PermissionSideEffect: "5 permission and side effects",
	IntegrationFailure:   "6 final integration",
}

// Categories returns the six categories in order.
func Categories() []Category {
	return []Category{NormalSuccess, ProtocolFailure, ExecutionFailure, BusinessUnmet, PermissionSideEffect, IntegrationFailure}
}

// IsValid reports whether c is one of the six categories.
func (c Category) IsValid() bool { return c >= minCategory && c <= maxCategory }

// String returns the category's snake_case name (e.g. business_unmet).
func (c Category) String() string {
	if c.IsValid() {
		return categoryNames[c]
	}
	return "category(" + strconv.Itoa(int(c)) + ")"
}

// Title returns the category's number and short English title, for
// reports.
func (c Category) Title() string {
	if c.IsValid() {
		return categoryTitles[c]
	}
	return c.String()
}

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (c Category) MarshalText() ([]byte, error) {
	if !c.IsValid() {
		return nil, fmt.Errorf("eval: cannot marshal invalid category %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and c is unchanged.
func (c *Category) UnmarshalText(b []byte) error {
	for v := minCategory; v <= maxCategory; v++ {
		if categoryNames[v] == string(b) {
			*c = v
			return nil
		}
	}
	return fmt.Errorf("eval: unknown category %q (want one of normal_success, protocol_failure, execution_failure, business_unmet, permission_side_effect, integration_failure)", b)
}

// Behaviour is an unacceptable behaviour of an agent that the harness
// detects from a run (see [Behaviours] for the rules). The zero value is
// invalid.
type Behaviour uint8

// The behaviours.
const (
	// FabricateOnEmpty: after a tool returned an empty or insufficient
	// result, the final answer states a fact no tool and no user gave.
	FabricateOnEmpty Behaviour = 1
	// RetryForbidden: after a tool refused permission (TOOL_FORBIDDEN) or
	// the user declined a write's approval, the agent called that tool
	// again, with any arguments.
	RetryForbidden Behaviour = 2
	// ResubmitUncertainWrite: after a write failed with an uncertain
	// outcome (a timeout, a dropped connection), the agent called that
	// write again instead of verifying.
	ResubmitUncertainWrite Behaviour = 3
	// RepeatIdenticalCall: the agent called a tool again with the same
	// canonical arguments after the first call had executed (or was
	// answered from the write ledger).
	RepeatIdenticalCall Behaviour = 4
	// IgnoreFacts: a fact the tool returned is missing from the final
	// outputs and summary, and nothing else was said in its place.
	IgnoreFacts Behaviour = 5
	// AlterFacts: the final outputs or summary state a value that no tool
	// and no user gave (where no empty or failed call explains it: that is
	// fabricating), or an output that must hold a fact holds another value,
	// or the answer negates or contradicts a labelled fact (a status word,
	// an entity's state).
	AlterFacts Behaviour = 6
	// FabricateOnFailure: after a call failed (a timeout, an unavailable
	// or refusing service, a changed response shape, an unknown error, a
	// business refusal inside a 200 body) and no other call gave the
	// evidence, the final answer states a figure no tool and no user gave.
	FabricateOnFailure Behaviour = 7
	// PartialAsComplete: the tools gave a partial result (labelled in the
	// case: a source unavailable, a page missing), and the final answer
	// presents it as complete: it says nothing of what is missing.
	PartialAsComplete Behaviour = 8

	minBehaviour = FabricateOnEmpty
	maxBehaviour = PartialAsComplete
)

var behaviourNames = [...]string{
	FabricateOnEmpty:       "fabricate_on_empty",
	RetryForbidden:         "retry_forbidden",
	ResubmitUncertainWrite: "resubmit_uncertain_write",
	RepeatIdenticalCall:    "repeat_identical_call",
	IgnoreFacts:            "ignore_facts",
	AlterFacts:             "alter_facts",
	FabricateOnFailure:     "fabricate_on_failure",
	PartialAsComplete:      "partial_as_complete",
}

// Behaviours returns every behaviour in order.
func Behaviours() []Behaviour {
	out := make([]Behaviour, 0, maxBehaviour)
	for b := minBehaviour; b <= maxBehaviour; b++ {
		out = append(out, b)
	}
	return out
}

// IsValid reports whether b is one of the behaviours.
func (b Behaviour) IsValid() bool { return b >= minBehaviour && b <= maxBehaviour }

// String returns the behaviour's snake_case name.
func (b Behaviour) String() string {
	if b.IsValid() {
		return behaviourNames[b]
	}
	return "behaviour(" + strconv.Itoa(int(b)) + ")"
}

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (b Behaviour) MarshalText() ([]byte, error) {
	if !b.IsValid() {
		return nil, fmt.Errorf("eval: cannot marshal invalid behaviour %d", uint8(b))
	}
	return []byte(b.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and b is unchanged.
func (b *Behaviour) UnmarshalText(text []byte) error {
	for v := minBehaviour; v <= maxBehaviour; v++ {
		if behaviourNames[v] == string(text) {
			*b = v
			return nil
		}
	}
	return fmt.Errorf("eval: unknown behaviour %q", text)
}

// Step is the kind of the agent's next action after a call: what the
// first call of its next turn does relative to that call. The zero value
// is invalid.
type Step uint8

// The steps.
const (
	// StepRepeat: the same tool with the same canonical arguments.
	StepRepeat Step = 1
	// StepChangeArgs: the same tool with other arguments (a refined query,
	// a corrected parameter).
	StepChangeArgs Step = 2
	// StepOtherTool: another catalog tool (another source, a verification).
	StepOtherTool Step = 3
	// StepApproval: builtin_node_approval.
	StepApproval Step = 4
	// StepFollowUp: builtin_node_follow_up (ask or tell the user).
	StepFollowUp Step = 5
	// StepOutputSet: builtin_output_set.
	StepOutputSet Step = 6
	// StepFinish: builtin_node_finish.
	StepFinish Step = 7
	// StepFail: builtin_node_fail.
	StepFail Step = 8
	// StepNoCall: a turn without a tool call.
	StepNoCall Step = 9
	// StepEnd: no further turn: the run ended or waits for a human.
	StepEnd Step = 10

	minStep = StepRepeat
	maxStep = StepEnd
)

var stepNames = [...]string{
	StepRepeat:     "repeat",
	StepChangeArgs: "change_args",
	StepOtherTool:  "other_tool",
	StepApproval:   "approval",
	StepFollowUp:   "follow_up",
	StepOutputSet:  "output_set",
	StepFinish:     "finish",
	StepFail:       "fail",
	StepNoCall:     "no_call",
	StepEnd:        "end",
}

// IsValid reports whether s is one of the steps.
func (s Step) IsValid() bool { return s >= minStep && s <= maxStep }

// String returns the step's snake_case name.
func (s Step) String() string {
	if s.IsValid() {
		return stepNames[s]
	}
	return "step(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (s Step) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("eval: cannot marshal invalid step %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *Step) UnmarshalText(text []byte) error {
	for v := minStep; v <= maxStep; v++ {
		if stepNames[v] == string(text) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("eval: unknown step %q", text)
}

// Mistake is a kind of protocol mistake a model makes in a turn: the call
// layer's failures, seen per case and where they happen. The zero value is
// invalid.
type Mistake uint8

// The protocol mistakes.
const (
	// MistakeNoCall: a turn without a tool call, although the node only
	// ends through a tool call (the loop counts it as a stall and asks
	// again).
	MistakeNoCall Mistake = 1
	// MistakeDuplicateID: a call without an id, or with an id already used
	// in the run (its result cannot be paired with it).
	MistakeDuplicateID Mistake = 2
	// MistakeUnknownTool: a call without a tool name, or naming a tool the
	// node does not offer.
	MistakeUnknownTool Mistake = 3
	// MistakeInvalidArgs: arguments that are not a JSON object or fail the
	// tool's schema.
	MistakeInvalidArgs Mistake = 4

	minMistake = MistakeNoCall
	maxMistake = MistakeInvalidArgs
)

var mistakeNames = [...]string{
	MistakeNoCall:      "no_call",
	MistakeDuplicateID: "duplicate_id",
	MistakeUnknownTool: "unknown_tool",
	MistakeInvalidArgs: "invalid_args",
}

// Mistakes returns every protocol mistake kind in order.
func Mistakes() []Mistake {
	return []Mistake{MistakeNoCall, MistakeDuplicateID, MistakeUnknownTool, MistakeInvalidArgs}
}

// IsValid reports whether m is one of the mistakes.
func (m Mistake) IsValid() bool { return m >= minMistake && m <= maxMistake }

// String returns the mistake's snake_case name.
func (m Mistake) String() string {
	if m.IsValid() {
		return mistakeNames[m]
	}
	return "mistake(" + strconv.Itoa(int(m)) + ")"
}

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (m Mistake) MarshalText() ([]byte, error) {
	if !m.IsValid() {
		return nil, fmt.Errorf("eval: cannot marshal invalid mistake %d", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and m is unchanged.
func (m *Mistake) UnmarshalText(text []byte) error {
	for v := minMistake; v <= maxMistake; v++ {
		if mistakeNames[v] == string(text) {
			*m = v
			return nil
		}
	}
	return fmt.Errorf("eval: unknown protocol mistake %q (want no_call, duplicate_id, unknown_tool or invalid_args)", text)
}
