package react

import (
	"fmt"
	"strconv"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/outcome"
)

// This file holds the three layers of success (docs/evaluation.md) as the loop
// reports them for every call: was the call a legitimate request (call
// layer), did the tool do what its contract promises (execution layer),
// did the result move the task (business layer). Each layer has its own
// status; none is derived from "the function did not raise".

// CallStatus is the call layer of one tool call: could the call be paired,
// resolved and parsed, and was it admitted to execution. The zero value,
// [CallNone], is a call that was not judged (skipped).
type CallStatus uint8

// The call statuses.
const (
	// CallNone: not judged; the call was skipped (REASON_SKIPPED).
	CallNone CallStatus = 0
	// CallValid: the call had an id, named a visible tool, its arguments
	// passed the checks, and it was admitted: it executed, or was answered
	// from the write ledger, or is a built-in call that was accepted.
	CallValid CallStatus = 1
	// CallUnpaired: the call had no id, or an id already used in the run,
	// so its result could not be paired with it (TOOL_CALL_INVALID; the
	// loop gave it a generated id).
	CallUnpaired CallStatus = 2
	// CallUnknownTool: the call named no tool, or a tool the node does not
	// show (TOOL_CALL_INVALID, CATALOG_DENIED).
	CallUnknownTool CallStatus = 3
	// CallInvalidArgs: the arguments are not a JSON object or fail the
	// tool's schema or argument policy (ARG_JSON_INVALID, ARG_REJECTED).
	CallInvalidArgs CallStatus = 4
	// CallRefused: a well-formed call that a rule of the call layer
	// refused: parameter provenance, a fingerprint trip, a built-in tool's
	// refusal (any other REJECTED).
	CallRefused CallStatus = 5
	// CallDeferred: a well-formed call that must wait for another step
	// first: approval, verification of an uncertain write, a write in
	// flight (DEFERRED).
	CallDeferred CallStatus = 6

	maxCallStatus = CallDeferred
)

var callStatusNames = [...]string{
	CallNone:        "none",
	CallValid:       "valid",
	CallUnpaired:    "unpaired",
	CallUnknownTool: "unknown_tool",
	CallInvalidArgs: "invalid_args",
	CallRefused:     "refused",
	CallDeferred:    "deferred",
}

// String returns the status's snake_case name (e.g. unknown_tool).
func (s CallStatus) String() string {
	if s <= maxCallStatus {
		return callStatusNames[s]
	}
	return "call_status(" + strconv.Itoa(int(s)) + ")"
}

// IsValid reports whether s is a defined status ([CallNone] included).
func (s CallStatus) IsValid() bool { return s <= maxCallStatus }

// MarshalText implements [encoding.TextMarshaler]; an undefined value is an
// error.
func (s CallStatus) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal invalid call status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *CallStatus) UnmarshalText(b []byte) error {
	for v := CallNone; v <= maxCallStatus; v++ {
		if callStatusNames[v] == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("react: unknown call status %q", b)
}

// ExecStatus is the execution layer of one tool call: the execution status
// classes (ok, empty, invalid_request, forbidden, not_found,
// timeout, temporarily_unavailable, unknown), plus result_invalid (the
// answer broke the tool's output contract) and reused (an earlier
// identical write's stored result answered the call; nothing executed).
// The zero value, [ExecNone], is a call that did not execute.
type ExecStatus uint8

// The execution statuses.
const (
	// ExecNone: the tool did not run: the call was stopped or deferred
	// before execution, skipped, or is a built-in control tool.
	ExecNone ExecStatus = 0
	// ExecOK: the tool answered as its contract promises with a non-empty
	// result (a business refusal inside the answer, TOOL_BUSINESS_FAILED,
	// is a correct execution: its failure is in the business layer).
	ExecOK ExecStatus = 1
	// ExecEmpty: the tool answered with an empty result (nil, null, "",
	// [] or {}, or the contract's IsEmpty), whether or not the contract
	// accepts an empty answer (SUCCESS, or FAILED TOOL_RESULT_EMPTY).
	ExecEmpty ExecStatus = 2
	// ExecInvalidRequest: the tool's backend refused the request as
	// malformed (MCP_INVALID_PARAMS).
	ExecInvalidRequest ExecStatus = 3
	// ExecForbidden: the backend refused permission (TOOL_FORBIDDEN); not a
	// temporary failure: retrying it is probing.
	ExecForbidden ExecStatus = 4
	// ExecNotFound: the resource does not exist (TOOL_NOT_FOUND).
	ExecNotFound ExecStatus = 5
	// ExecTimeout: no answer in time (TOOL_TIMEOUT); a write's effect is
	// unknown.
	ExecTimeout ExecStatus = 6
	// ExecTemporarilyUnavailable: overloaded, rate limited or unreachable
	// (TOOL_UNAVAILABLE, TOOL_RATE_LIMITED, TOOL_UNREACHABLE).
	ExecTemporarilyUnavailable ExecStatus = 7
	// ExecUnknown: any other failure (TOOL_ERROR, TOOL_IO_ERROR, MCP
	// errors).
	ExecUnknown ExecStatus = 8
	// ExecResultInvalid: the answer does not have the shape the tool's
	// response contract requires (TOOL_RESULT_INVALID: a changed response
	// format).
	ExecResultInvalid ExecStatus = 9
	// ExecReused: the write gate answered with the stored result of the
	// same write (RESULT_WRITE_REUSED); the tool did not run again.
	ExecReused ExecStatus = 10
	// ExecTooLarge: the result was too large to return or to use
	// (TOOL_RESULT_TOO_LARGE); the same request fails again: ask for less.
	ExecTooLarge ExecStatus = 11

	maxExecStatus = ExecTooLarge
)

var execStatusNames = [...]string{
	ExecNone:                   "none",
	ExecOK:                     "ok",
	ExecEmpty:                  "empty",
	ExecInvalidRequest:         "invalid_request",
	ExecForbidden:              "forbidden",
	ExecNotFound:               "not_found",
	ExecTimeout:                "timeout",
	ExecTemporarilyUnavailable: "temporarily_unavailable",
	ExecUnknown:                "unknown",
	ExecResultInvalid:          "result_invalid",
	ExecReused:                 "reused",
	ExecTooLarge:               "too_large",
}

// String returns the status's snake_case name (e.g.
// temporarily_unavailable).
func (s ExecStatus) String() string {
	if s <= maxExecStatus {
		return execStatusNames[s]
	}
	return "exec_status(" + strconv.Itoa(int(s)) + ")"
}

// IsValid reports whether s is a defined status ([ExecNone] included).
func (s ExecStatus) IsValid() bool { return s <= maxExecStatus }

// Succeeded reports whether the execution kept its contract: ok or empty.
// A reused write did not execute and does not count.
func (s ExecStatus) Succeeded() bool { return s == ExecOK || s == ExecEmpty }

// Executed reports whether the tool ran: every status but none and reused.
func (s ExecStatus) Executed() bool { return s != ExecNone && s != ExecReused && s.IsValid() }

// MarshalText implements [encoding.TextMarshaler]; an undefined value is an
// error.
func (s ExecStatus) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal invalid execution status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *ExecStatus) UnmarshalText(b []byte) error {
	for v := ExecNone; v <= maxExecStatus; v++ {
		if execStatusNames[v] == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("react: unknown execution status %q", b)
}

// ExecStatusOf returns the execution status of a FAILED attempt with code:
// the code's [errcode.Class] mapped onto the statuses (a business refusal,
// class business_rejected, is [ExecOK]: the tool answered; a code without
// a class is [ExecUnknown]).
func ExecStatusOf(code errcode.Code) ExecStatus {
	switch code.Class() {
	case errcode.ClassInvalidRequest:
		return ExecInvalidRequest
	case errcode.ClassForbidden:
		return ExecForbidden
	case errcode.ClassNotFound:
		return ExecNotFound
	case errcode.ClassTimeout:
		return ExecTimeout
	case errcode.ClassTemporarilyUnavailable:
		return ExecTemporarilyUnavailable
	case errcode.ClassBusinessRejected:
		return ExecOK
	case errcode.ClassResultInvalid:
		return ExecResultInvalid
	case errcode.ClassEmpty:
		return ExecEmpty
	case errcode.ClassTooLarge:
		return ExecTooLarge
	case errcode.ClassNone, errcode.ClassUnknown:
		return ExecUnknown
	}
	return ExecUnknown
}

// BusinessStatus is the business layer of one tool call, as far as code
// can judge it from the tool's contract and the run's evidence: did the
// result add something the task can use. Whether the task's goal is met is
// judged for the run ([GoalStatus]), from its completion conditions. The
// zero value, [BusinessNone], is a call with no result to judge.
type BusinessStatus uint8

// The business statuses.
const (
	// BusinessNone: nothing to judge: the call did not execute, its
	// execution failed, or it is a built-in control tool.
	BusinessNone BusinessStatus = 0
	// BusinessEvidence: a non-empty result (or an empty one the contract
	// declares to be the answer, tool.EmptyAnswers) that meets the tool's
	// business contract and that is new: no identical earlier call (same
	// tool, same canonical arguments) gave the same result since the last
	// write of the run ran.
	BusinessEvidence BusinessStatus = 1
	// BusinessRepeated: a call identical (same tool, same canonical
	// arguments) to an earlier successful call of the run gave the same
	// result, with no write run in between; or a reused write: no new
	// evidence.
	BusinessRepeated BusinessStatus = 2
	// BusinessInsufficient: the tool executed but the result does not
	// serve the goal: it is empty, or the contract's Sufficient check
	// refused it ("executed, business not satisfied").
	BusinessInsufficient BusinessStatus = 3
	// BusinessRejected: the service answered and refused the business
	// action (TOOL_BUSINESS_FAILED).
	BusinessRejected BusinessStatus = 4
	// BusinessAccepted: the tool accepted a job that is not done yet
	// (tool.Contract.Async: an HTTP 202, a status "running"): the request
	// went through, the goal waits on the job, and only a later result
	// can say it is done (an asynchronous task may only have been
	// accepted: docs/observation-contract.md).
	BusinessAccepted BusinessStatus = 5
	// BusinessBlocked: the tool reached a wall instead of the content — a
	// captcha, a login page, a rate-limit page (TOOL_BLOCKED).
	BusinessBlocked BusinessStatus = 6

	maxBusinessStatus = BusinessBlocked
)

var businessStatusNames = [...]string{
	BusinessNone:         "none",
	BusinessEvidence:     "evidence",
	BusinessRepeated:     "repeated",
	BusinessInsufficient: "insufficient",
	BusinessRejected:     "rejected",
	BusinessAccepted:     "accepted",
	BusinessBlocked:      "blocked",
}

// String returns the status's snake_case name (e.g. insufficient).
func (s BusinessStatus) String() string {
	if s <= maxBusinessStatus {
		return businessStatusNames[s]
	}
	return "business_status(" + strconv.Itoa(int(s)) + ")"
}

// IsValid reports whether s is a defined status ([BusinessNone] included).
func (s BusinessStatus) IsValid() bool { return s <= maxBusinessStatus }

// MarshalText implements [encoding.TextMarshaler]; an undefined value is an
// error.
func (s BusinessStatus) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal invalid business status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *BusinessStatus) UnmarshalText(b []byte) error {
	for v := BusinessNone; v <= maxBusinessStatus; v++ {
		if businessStatusNames[v] == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("react: unknown business status %q", b)
}

// GoalStatus is the business layer of a whole run: is the node's goal met,
// judged from its completion conditions — the output contract, whose
// values the loop checks against the run's evidence and the user's words —
// and not from the model saying it is done. The zero value, [GoalNone], is
// a run that has not ended (suspended or interrupted).
type GoalStatus uint8

// The goal statuses.
const (
	// GoalNone: the run has not ended.
	GoalNone GoalStatus = 0
	// GoalMet: the run finished and its completion conditions hold: the
	// node declares required outputs and every one was set from a checked
	// source (a tool result or the user's words).
	GoalMet GoalStatus = 1
	// GoalUnverified: the run finished on the model's word alone: the node
	// declares no required output, or a required output's value is the
	// model's own (source model, unchecked).
	GoalUnverified GoalStatus = 2
	// GoalUnmet: the run failed (the model gave up, or a limit was hit).
	GoalUnmet GoalStatus = 3

	maxGoalStatus = GoalUnmet
)

var goalStatusNames = [...]string{
	GoalNone:       "none",
	GoalMet:        "met",
	GoalUnverified: "unverified",
	GoalUnmet:      "unmet",
}

// String returns none, met, unverified or unmet.
func (s GoalStatus) String() string {
	if s <= maxGoalStatus {
		return goalStatusNames[s]
	}
	return "goal_status(" + strconv.Itoa(int(s)) + ")"
}

// IsValid reports whether s is a defined status ([GoalNone] included).
func (s GoalStatus) IsValid() bool { return s <= maxGoalStatus }

// MarshalText implements [encoding.TextMarshaler]; an undefined value is an
// error.
func (s GoalStatus) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal invalid goal status %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; unknown names are
// rejected and s is unchanged.
func (s *GoalStatus) UnmarshalText(b []byte) error {
	for v := GoalNone; v <= maxGoalStatus; v++ {
		if goalStatusNames[v] == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("react: unknown goal status %q", b)
}

// Attempt is the verdict of one executed attempt of a call and its
// execution status.
type Attempt struct {
	// Outcome is SUCCESS or FAILED.
	Outcome outcome.Outcome `json:"outcome"`
	// Code is the error code of a FAILED attempt; 0 for SUCCESS.
	Code errcode.Code `json:"code,omitempty"`
	// Status is the attempt's execution status.
	Status ExecStatus `json:"status"`
}

// Layers is the three-layer account of one tool call (docs/evaluation.md): the
// status of each layer, and the attempts behind the execution status — the
// first attempt is kept even when a retry recovered, so a trace shows both
// the instability and the recovery.
type Layers struct {
	// Call is the call layer.
	Call CallStatus `json:"call"`
	// Execution is the execution layer: the final attempt's status,
	// [ExecReused] for a reused write, [ExecNone] when nothing executed.
	Execution ExecStatus `json:"execution"`
	// Business is the business layer of the call.
	Business BusinessStatus `json:"business"`
	// Reason says why Business is insufficient when the response
	// contract said so (its Sufficient check, a stale result, a page
	// followed by more; may be empty), or names the job of an accepted
	// call.
	Reason string `json:"reason,omitempty"`
	// Attempts is the number of executed attempts (retries included); 0
	// when the tool did not run.
	Attempts int `json:"attempts,omitempty"`
	// First and Final are the first and the last executed attempt (equal
	// when Attempts is 1; zero when it is 0).
	First Attempt `json:"first,omitzero"`
	Final Attempt `json:"final,omitzero"`
}

// Recovered reports whether the first attempt failed and the final one
// kept the contract (a retry recovered).
func (l Layers) Recovered() bool {
	return l.Attempts > 1 && !l.First.Status.Succeeded() && l.Final.Status.Succeeded()
}

// CallReport is the record of one processed tool call in [Result].Calls:
// identity, verdict and layers. Skipped calls have none (their tool
// message says REASON_SKIPPED).
type CallReport struct {
	// CallID is the call's id (the generated one for a call whose id was
	// missing or repeated).
	CallID string `json:"call_id"`
	// Tool is the tool name the model used (may be empty or unknown).
	Tool string `json:"tool"`
	// Round is the model turn of the call.
	Round int `json:"round"`
	// Builtin reports a built-in control tool.
	Builtin bool `json:"builtin,omitempty"`
	// Outcome and Code are the call's verdict.
	Outcome outcome.Outcome `json:"outcome"`
	Code    errcode.Code    `json:"code,omitempty"`
	// Fingerprint is the fingerprint of tool and canonical arguments of an
	// executed call ("" otherwise).
	Fingerprint string `json:"fingerprint,omitempty"`
	// ResultDigest is the FNV-1a 64 digest (hex) of the result's JSON of
	// an executed call the business layer judged as evidence or a repeat
	// ("" otherwise): a call identical to an earlier one is a repeat only
	// when it gave the same result and no write ran in between.
	ResultDigest string `json:"result_digest,omitempty"`
	Layers
	// Provenance is when, from where and in which version the executed
	// call's result was obtained, as the evidence guard recorded it (see
	// evidence.Provenance); nil when the call did not execute or the
	// chain recorded none.
	Provenance *evidence.Provenance `json:"provenance,omitempty"`
	// Check is the step verifier's verdict on the run after this call
	// ([WithVerifier]); nil without a verifier or when it had no opinion.
	Check *StepVerdict `json:"check,omitempty"`
}
