package invoker

import (
	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/outcome"
)

// Execution is where the guards of a chain note, for one call, what its
// verdict does not say (a trace keeps the first failure, and a later
// recovery never overwrites it): how many attempts really executed,
// the verdict of the first and of the last, whether the answer was a
// stored result reused instead of an execution, and whether a successful
// result fell short of the tool's business contract.
//
// Whoever dispatches a call (the react loop does) may set
// [Call].Execution to a zeroed Execution and read it after the handler
// returned; guards write to it through its methods, which do nothing on a
// nil receiver, so a call without an Execution costs nothing and guards
// never check for nil. The account is only as complete as the chain: the
// evidence guard of package guard notes executed attempts, the write gate
// notes reuses, the response contract notes insufficient results; a chain
// without them leaves the fields zero.
//
// One Execution belongs to one call. The attempts of a call run one after
// another, so no locking is needed; an interceptor that runs next
// concurrently for one call must give each branch its own Execution (or
// nil).
type Execution struct {
	// Attempts is the number of executed attempts noted (outcome SUCCESS or
	// FAILED), the first included; 0 when the tool never ran.
	Attempts int
	// First and Last are the verdicts of the first and the latest executed
	// attempt; zero when Attempts is 0. First is never overwritten.
	First, Last Verdict
	// Fingerprint is the call's fingerprint as the evidence guard recorded
	// it ("" when not noted, or when the arguments are not JSON).
	Fingerprint string
	// Reused reports that the call was answered with the stored result of
	// an earlier identical write (the write gate's RESULT_WRITE_REUSED):
	// a SUCCESS without an execution.
	Reused bool
	// Insufficient reports that a successful result does not meet the
	// tool's business contract (tool.Contract.Sufficient): the tool
	// executed and answered, and the answer does not serve the goal
	// ("executed, business not satisfied"). The verdict stays SUCCESS.
	Insufficient bool
	// Reason says why the result is insufficient (may be empty).
	Reason string
	// Pending reports that a successful result is an accepted job that is
	// not done (tool.Contract.Async): the tool ran, and the goal waits on
	// the job. Job is its id. The verdict stays SUCCESS.
	Pending bool
	Job     string
	// Answered reports that a successful result is empty and that the
	// tool's contract takes an empty result as the answer
	// (tool.EmptyAnswers).
	Answered bool
	// Provenance is where, when and in which version the latest executed
	// attempt's result was obtained, as the evidence guard recorded it.
	Provenance evidence.Provenance
}

// Verdict is the outcome and code of one attempt.
type Verdict struct {
	// Outcome is SUCCESS or FAILED for an executed attempt.
	Outcome outcome.Outcome
	// Code is the error code of a FAILED attempt; 0 for SUCCESS.
	Code errcode.Code
}

// Executed notes one executed attempt with its verdict and the call's
// fingerprint (fp "" keeps the one noted before). The first attempt's
// verdict is kept in First; every attempt updates Last. It does nothing on
// a nil receiver.
func (e *Execution) Executed(fp string, o outcome.Outcome, code errcode.Code) {
	if e == nil {
		return
	}
	v := Verdict{Outcome: o, Code: code}
	if e.Attempts == 0 {
		e.First = v
	}
	e.Attempts++
	e.Last = v
	if fp != "" {
		e.Fingerprint = fp
	}
}

// MarkReused notes that the call was answered from a stored result without
// executing. It does nothing on a nil receiver.
func (e *Execution) MarkReused() {
	if e != nil {
		e.Reused = true
	}
}

// MarkInsufficient notes that the latest successful result does not meet the
// tool's business contract, and why. It does nothing on a nil receiver.
func (e *Execution) MarkInsufficient(reason string) {
	if e != nil {
		e.Insufficient, e.Reason = true, reason
	}
}

// MarkPending notes that the latest successful result is the accepted,
// unfinished job job. It does nothing on a nil receiver.
func (e *Execution) MarkPending(job string) {
	if e != nil {
		e.Pending, e.Job = true, job
	}
}

// MarkAnswered notes that the latest successful result is empty and is
// the answer. It does nothing on a nil receiver.
func (e *Execution) MarkAnswered() {
	if e != nil {
		e.Answered = true
	}
}

// NoteProvenance notes the provenance of the latest executed attempt's
// result. It does nothing on a nil receiver.
func (e *Execution) NoteProvenance(p evidence.Provenance) {
	if e != nil {
		e.Provenance = p
	}
}
