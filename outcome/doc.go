// Package outcome defines the four verdicts a tool call can receive and
// how each one moves a ReAct loop's progress counter.
//
// # Verdicts
//
// Exactly four values exist (specification §3):
//
//   - [Success]: the tool really ran and succeeded (including reuse of an
//     earlier successful write). It advances: the no-progress counter resets.
//   - [Failed]: the tool really ran but failed (timeout, unreachable,
//     business failure, ...). It stalls: one no-progress is counted.
//   - [Rejected]: the call broke a rule and was stopped before it ran
//     (bad arguments, wrong provenance, invisible tool, fingerprint trip, a
//     built-in tool's refusal). It stalls.
//   - [Deferred]: the call is legitimate but another step must come first
//     (approval, verification of an uncertain write). It neither advances nor
//     stalls; only the loop's total round limit bounds it.
//
// Advancing and stalling are properties of the verdict itself
// ([Outcome.Advances], [Outcome.Stalls]); callers never decide them case by
// case.
//
// # Zero value
//
// The zero Outcome is not a verdict: [Outcome.IsValid] reports false, its
// text form is refused by [Outcome.MarshalText], it never advances, and it
// stalls. An uninitialised result therefore can never read as success, and a
// loop that meets one stops early rather than spinning (§4: "when unsure,
// count it against progress").
//
// # Text form
//
// The stable names SUCCESS, FAILED, REJECTED and DEFERRED are used in logs,
// JSON and persistence. [Parse] and [Outcome.UnmarshalText] accept exactly
// these names and reject everything else.
package outcome
