// Package guard holds the interceptors that stand between a model's tool
// call and the tool: each classifies a call at the point where it knows the
// truth, and answers with an observation (a verdict, an error code, a reason
// and a next step) instead of letting a doubtful call through.
//
// Every guard is an [invoker.Interceptor] built by a constructor that takes
// an options struct whose zero value means defaults (a store such as the
// evidence ledger is the only thing a guard may require). Guards are safe
// for concurrent use; the state that outlives one call sits behind small
// store interfaces ([evidence.Ledger], [Approvals], [WriteLedger]) with
// concurrency-safe in-memory defaults. A guard returns a Go error only for
// an infrastructure failure (a store that cannot be reached) or
// cancellation; bad input from a model always becomes an observation.
//
// # Order
//
// The default chain runs the guards in this order, outermost first, with
// the default invoker innermost:
//
//	arg policy → param contract → fingerprint → write gate → retry → evidence → response contract → invoker
//
// Each guard, and why it sits where it does:
//
//  1. Arg policy: arguments that are not JSON, not an object, fail the
//     tool's schema, or a policy refuses → REJECTED ARG_JSON_INVALID or
//     ARG_REJECTED, naming the field and what it needs. It comes first
//     because every later guard reads the arguments.
//  2. Param contract ([ParamContract]): a parameter whose value must come
//     from the user's words or from a field of an earlier successful result
//     of another tool, and does not → REJECTED PARAM_PROVENANCE_MISMATCH,
//     _QUERY_FIRST, _FOLLOW_UP_FIRST or _REJECTED. Before the fingerprint,
//     so that a call with an invented value is not counted as a repeat.
//  3. Fingerprint: the same tool with the same canonical arguments executed
//     past a limit → REJECTED FINGERPRINT_TRIP with the earlier result's
//     gist. It counts executions from the evidence ledger, so rejected and
//     deferred calls never count.
//  4. Write gate: a write without approval → DEFERRED APPROVAL_REQUIRED;
//     the same write running or of uncertain outcome → DEFERRED
//     WRITE_IN_FLIGHT or WRITE_PENDING_VERIFY; a write that already
//     succeeded → its SUCCESS again, without a second execution. Outside
//     the retry guard, so one approval covers the retries of one call.
//  5. Retry: a failed execution whose code allows a retry runs again, with
//     backoff, under the tool's retry policy; never a write without an
//     idempotency key, never a write whose failure leaves it uncertain
//     (the write gate's [UncertainFunc]: it is verified, not resubmitted),
//     never after the caller's context is done.
//  6. Evidence ([Evidence]): records every executed attempt (SUCCESS and
//     FAILED) in the ledger, in order, the first failure of a retried call
//     included. Inside the retry guard, so that each attempt is recorded;
//     outside the response contract, so that a business failure is recorded
//     as the failure it is, never as a successful result whose values later
//     calls could cite.
//  7. Response contract ([ResponseContract]): decides whether a returned
//     result is a success: shape, business failure inside a "successful"
//     body (FAILED TOOL_BUSINESS_FAILED, the downstream code in the
//     reason), and whether an empty result is a legal answer. Innermost,
//     so that every guard outside it, the retry guard included, sees the
//     true outcome.
//  8. Invoker: runs the tool and classifies what it returned or raised.
//
// Tool visibility (CATALOG_DENIED) is checked by the loop before the chain.
//
// # Evidence
//
// The param contract, the fingerprint guard and the loop's output checks
// read the evidence ledger the evidence guard writes; give all of them the
// same [evidence.Ledger]. Lookups are hash-map accesses in the in-memory
// ledger, so a guard's cost does not grow with the evidence a run holds.
//
// # The execution account
//
// When a call carries an invoker.Execution, the evidence guard notes every
// attempt it records (count, first and last verdict, fingerprint), the
// write gate notes a reused write, and the response contract notes a
// result that fails the contract's Sufficient check. The loop reads the
// account to report each call's attempts and layers; a call without one
// pays nothing (invoker.Execution's methods are nil-safe).
//
// # Cost
//
// The chain does each piece of work once per call. The fingerprint (tool
// plus canonical arguments) is computed by the first guard that needs it
// and travels down in invoker.Call.Fingerprint to the write gate and the
// evidence guard; each of them computes it itself when used alone. The arg
// policy remembers, per resolved schema, a bounded set of argument bytes
// that already passed it, so a repeated call (a write called again after
// its approval, a poll, a retry of the model) skips decoding and schema
// validation; validation is a pure function of schema and bytes, so the
// answer is the same. With stores in a database, each store operation is a
// round trip: a write ledger that also holds the approvals
// ([ApprovingWriteLedger], as stores/postgres and stores/sqlite do) lets
// the write gate claim an approved write and consume its approval in one.
// docs/performance.md has the figures.
package guard
