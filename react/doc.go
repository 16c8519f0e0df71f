// Package react is the ReAct loop: it sends a node's task to a [Model],
// runs the tool calls the model makes through the guard chain, counts
// progress from the verdicts alone (specification §6), and ends a run as
// finished, failed or suspended for a human, with a snapshot from which
// any process can resume it.
//
// # Building and running
//
// [New] takes a [Config] whose zero value means defaults for everything
// but the Model: an empty tool catalog, English texts, the default guard
// chain (guard.Default) over the default invoker with in-memory stores, a
// slog observer, random run ids and the wall clock. [Loop.Run] runs one
// [Node] with the user's words; [Loop.Resume] continues a suspended or
// interrupted run from its snapshot with a [Decision]. A Loop keeps no
// state between runs and is safe for concurrent use.
//
// # One round
//
// Each round the model receives a system message — the node's
// instructions, the ReAct rules (prompt.SystemRules) and the phase hint of
// §7.4 (the required outputs not yet set, or that all are set; nothing
// when none is required) — followed by the transcript, and the specs of the
// visible tools: the node's catalog tools in its order, then the built-in
// tools. The model answers with text and/or tool calls. The first message
// of the history is rewritten each round; the history itself only grows,
// so a round costs the same at round 1,000 as at round 10 (the model must
// treat [Request] as read-only).
//
// # Counting (§6)
//
// The calls of a turn form a wave, processed in call order. For each call:
//
//  1. its tool message is written (role tool, paired by call id);
//  2. if the node was exited through a control tool (finish accepted,
//     fail, or a suspension) the loop stops;
//  3. a rejected builtin_node_finish counts one stall and ends the wave;
//  4. an outcome that Stalls() (FAILED, REJECTED) counts one stall and ends
//     the wave; the stall past Node.NoProgressLimit (default 3) fails the
//     node (so with the default limit three stalls in a row are tolerated
//     and the fourth fails it);
//  5. any other non-SUCCESS (DEFERRED) ends the wave without counting or
//     resetting;
//  6. a SUCCESS (Advances()) resets the counter.
//
// Ending a wave early answers every later call of the wave with
// REASON_SKIPPED / NEXT_SKIPPED, so every call of every turn has exactly
// one tool message (chat APIs refuse a history with an unanswered call). A
// turn without any tool call counts one stall (event no_tool_calls) and is
// answered with a user message REASON_NO_TOOL_CALLS / NEXT_CALL_TOOL.
// Node.MaxRounds (default 20) bounds the model turns of a node across
// suspensions; reaching it fails the node. Note that rule 2 comes before
// rule 6: a successful builtin_node_finish ends the run without resetting
// the counter, so Result.Stalls shows the count it ended with.
//
// Before a call reaches the guard chain the loop checks it: a call without
// id, with an id already used in the run, or without a tool name is
// REJECTED TOOL_CALL_INVALID (a missing or repeated id is replaced by a
// generated one, "rg_<round>_<position>", in the stored turn, so the
// history stays pairable); a tool the node does not list is REJECTED
// CATALOG_DENIED, its next step listing the visible tools. Arguments that
// are not a JSON object are classified by the arg policy guard (catalog
// tools) or the default invoker (built-in tools): ARG_JSON_INVALID. Model
// output never makes the loop panic.
//
// # Parallel reads
//
// With Node.ParallelReads, each run of consecutive well-formed calls of
// visible read-only catalog tools (tool.Read) in a wave runs concurrently
// through golang.org/x/sync/errgroup, at most Node.MaxParallel (default 4)
// at a time; writes, built-in and malformed calls run alone, in order. The
// results are then processed in call order by the rules above, so the
// transcript and the counting are exactly those of a sequential run. Two
// consequences: a read that ran after a failed read of the same batch is
// reported as skipped (its execution is still in the evidence ledger), and
// the reads of one batch do not see each other's evidence (a read whose
// parameter must come from an earlier read of the same turn belongs in a
// later turn, or in a node without ParallelReads).
//
// # Built-in tools
//
// [ToolApproval], [ToolFollowUp], [ToolFail], [ToolFinish] and
// [ToolOutputSet] are always visible ([ToolOutputSet] only when the node
// declares outputs). They run through the default invoker without the
// guards; a refusal is a tool.Reject error, which the invoker turns into a
// REJECTED observation with the rejection's code, reason (the code's
// template) and next step.
//
// builtin_node_approval {tool, reason}: no write call of the run is waiting
// for approval → APPROVAL_NOT_GATED (next: call the write tool directly);
// a call is waiting but of another tool than the one named (a typo, a read
// tool) → APPROVAL_TOOL_MISMATCH naming the waiting tool; otherwise the run
// suspends ([SuspendApproval]) for that exact call (tool, arguments,
// fingerprint). On resume, [Approve] grants one execution of that call —
// only if the run's Approvals store recorded it as the call waiting, with
// the same fingerprint (guard.Approvals.Approve) — and the call's result is
// SUCCESS RESULT_APPROVAL_GRANTED; the model then calls the write again and
// the write gate executes it once, consuming the approval. A snapshot is
// resumed once (a second resume gets [ErrAlreadyResumed]), and the write
// ledger reuses a write that already succeeded. [Decline] is
// SUCCESS RESULT_APPROVAL_DECLINED: a legitimate answer, not a violation;
// it counts no stall.
//
// builtin_node_follow_up {question}: an empty question is ARG_REJECTED; a
// question equal (after normalization: lower case, letters and digits
// only) to one the user answered in this run → FOLLOW_UP_ANSWERED carrying
// the answer (next: continue with it); an ungrounded question →
// FOLLOW_UP_UNGROUNDED; otherwise the run suspends ([SuspendFollowUp]). On
// resume, [Answer] is SUCCESS RESULT_FOLLOW_UP_ANSWER and the answer joins
// the user's words of the run (evidence.Ledger.AddUserText), so it can be a
// parameter's or an output's source.
//
// FOLLOW_UP_UNGROUNDED has two rules, checked in this order:
//
//  1. Confirming a write. All of: a write is at stake (the node can see a
//     write tool, or a write call of the run waits for approval); the
//     latest executed write of the run did not FAIL (after a failed write,
//     NEXT_APPROVED_FAILED asks the model to ask the user how to go on,
//     retrying included); the question contains a confirmation marker —
//     the whole words confirm, approve, proceed, the word sequences "are
//     you sure", "shall I", "should I", "do you want me to", "would you
//     like me to", "go ahead", "ok/okay to", "is that/this ok/okay", "do you
//     agree", "your approval/permission/consent", or the Chinese 确认, 批准,
//     同意, 允许, 是否继续, 要不要, 是否要, 可以吗, 好吗, 行吗; and it contains
//     no open-question or choice marker — the whole words what, which,
//     who, whom, whose, where, when, how, why, or, or the Chinese 什么, 哪,
//     谁, 几, 多少, 怎么, 怎样, 如何, 为什么, 还是. Next step:
//     NEXT_WRITE_DIRECTLY.
//  2. Echoing the user. The normalized question equals one of the user's
//     texts of the run (the task, earlier answers), or one contains the
//     other and the shorter has at least 4 characters and 80% of the
//     longer's length. Next step: NEXT_WRITE_DIRECTLY when the node can see
//     a write tool, else NEXT_USE_USER_WORDS.
//
// Near misses that do not trigger: "Which space should the site go in?"
// (no marker outside an open question), "Can you confirm which space you
// mean?" (which), "Should I use staging or production?" (or), "What is your
// confirmation number?" (confirmation is not confirm), "Do you want me to
// proceed?" in a node without write tools, "Do you want me to retry?" after
// a write failed, and a question that quotes a short part of the user's
// words. The tests list them all.
//
// builtin_node_fail {reason} ends the run as [Failed] ([FailedByModel]).
// builtin_node_finish {summary} ends it as [Finished], or is rejected with
// FINISH_OUTPUTS_MISSING naming the required keys not set (one stall).
//
// builtin_output_set {key, value, sourceType, sourceRef} checks, in order,
// each with its own code: the key is declared (OUTPUT_KEY_UNDECLARED,
// next: the declared keys); sourceType is given and is user, tool_result or
// model (OUTPUT_SOURCE_TYPE_MISSING, next: the accepted types); the output
// accepts it (OUTPUT_SOURCE_TYPE_NOT_ACCEPTED; an output without Accepts
// accepts tool_result and user); a value is given (ARG_REJECTED); for
// tool_result, sourceRef is given (OUTPUT_SOURCE_REF_MISSING) and is the
// call id of a successful recorded result (OUTPUT_SOURCE_REF_UNKNOWN) that
// holds the value (OUTPUT_VALUE_MISMATCH; a scalar matches a leaf by the
// text rule of evidence.Walk, so "7" matches 7; an object or array matches
// a canonically equal sub-value); for user, the value is a scalar the user
// said (evidence.Ledger.UserSaid; OUTPUT_VALUE_MISMATCH); model is not
// checked. For an optional output every next step ends with
// NEXT_OUTPUT_OPTIONAL: "you may also skip it and call
// builtin_node_finish".
//
// # Results, suspension and snapshots
//
// A run ends [Finished], [Failed] (see [Failure]) or [Suspended] (see
// [Suspension]), or stops [Interrupted] when the context is cancelled or
// the model or a store fails: then Run returns the error together with the
// result. Model errors never become tool outcomes and no turn is lost: the
// round is not counted and the snapshot resumes before it. Cancellation is
// checked before each model turn and before each call (the safe points); a
// call interrupted inside the guard chain is dispatched again on resume
// (the write ledger keeps writes from running twice). No goroutine outlives
// Run or Resume.
//
// Suspended and Interrupted results carry a JSON snapshot (see
// [SnapshotFormat]): the node, the transcript, counters, outputs, the
// pending call, the answered questions, and — when the evidence ledger is
// an evidence.Exporter such as the in-memory default — the run's evidence.
// It is versioned and sealed with HMAC-SHA256 under the loop's snapshot
// keys (Config.SnapshotKeys; without them, a random key per process) over a
// canonical form, so stores may re-encode it but nobody without a key can
// change it. [Loop.Resume] refuses a foreign document
// ([ErrSnapshotForeign]), one sealed under a key it does not hold
// ([ErrSnapshotKey]), an edited one ([ErrSnapshotSeal]), an old one
// ([ErrSnapshotExpired]) or an inconsistent one ([ErrSnapshotCorrupt]), all
// wrapping [ErrSnapshot]; then it claims the snapshot's identity in
// Config.Claims, so each snapshot is resumed once ([ErrAlreadyResumed] for
// every other resume, concurrent or later), and settles the claim when the
// resume stops. A resume killed between the two leaves its claim taken; a
// durable claim store that proves its process dead lets the next resume of
// the snapshot take the claim over and apply the same decision again
// (granting nothing new), so a crash never loses an approval and never
// runs the write twice. The calls of the suspended
// turn after the suspending call are answered REASON_SKIPPED on resume, so
// resuming in a new Loop — as a new process would — yields the same
// transcript as resuming in the same one. The approvals, the write ledger
// and the claims are not in the snapshot: they are the server-side truth
// and must be stores shared by every process that resumes runs. With
// Config.Runs, the loop keeps every stopped run's snapshot in a run store
// (an approvals inbox lists it) and [Loop.ResumeRun] resumes it by run id.
// docs/architecture.md has the threat model.
//
// # Three layers per call
//
// Seed 003 splits success into three layers, each judged by its own
// evidence and never merged into one boolean. Every processed call gets a
// [CallReport] in [Result].Calls (kept across resumes, and after the run's
// evidence is forgotten) and the same [Layers] in its [ToolEvent]:
//
//   - call layer ([CallStatus]): valid, or unpaired (no or repeated id),
//     unknown_tool, invalid_args, refused (a rule of the call layer),
//     deferred;
//   - execution layer ([ExecStatus]): the final attempt's class — ok,
//     empty, invalid_request, forbidden, not_found, timeout,
//     temporarily_unavailable, unknown, result_invalid — or reused (the
//     write ledger answered) or none (nothing ran). A SUCCESS whose result
//     is empty is empty even when the contract accepts it;
//   - business layer ([BusinessStatus]): evidence (a new, useful result),
//     repeated (an identical call already produced it), insufficient
//     (empty, or refused by the contract's Sufficient check), rejected
//     (a business failure inside the answer), none.
//
// The attempts behind the execution status travel from the guards in
// invoker.Call.Execution: the number of executed attempts and the first
// and final attempt's verdict, so a retried call that recovered still
// shows its first failure. A run's goal ([GoalStatus], in [Result].Goal
// and [EndEvent].Goal) is judged from its completion conditions — met when
// every required output was set from a checked source — never from the
// model calling builtin_node_finish.
//
// # Events and metrics
//
// Every step is reported to an [Observer]: node started, tool invoked
// (outcome, code, duration measured with Config.Now, layers, position in
// the turn, the tools offered, the schema version), tool skipped, no tool
// calls, stall counted, stall reset, suspended, finished, failed (with the
// goal). The default [LogObserver] writes them to log/slog ("TOOL invoked
// outcome=FAILED code=TOOL_TIMEOUT tool=… duration=… call_status=valid
// exec_status=timeout business_status=none …" at WARN for FAILED, INFO
// otherwise; "REACT no_tool_calls"; …). [Metrics] counts per layer with
// seed 003's definitions and denominators (docs/evaluation.md); combine
// observers with [Observers].
//
// An observer that also implements [RunObserver], [ModelObserver] or
// [ToolObserver] follows each call of Run and Resume, each model call and
// each tool call from its start to its end, and hands the work a context
// of its own: this is how a tracer opens a span around each (the nested
// module adapters/otel does, on OpenTelemetry). Every start is ended
// exactly once, on success, failure, cancellation, and while a panic
// unwinds. A [RunObserver] may carry a few strings in a run's snapshot
// (the trace context of the run's span, say) and gets them back when the
// snapshot is resumed, so that the resumed run links to the run it
// resumes. A [Model] that implements [Describer] names its provider and
// model for these events, and the [Response] of the adapters carries the
// response's model name, finish reason and token [Usage].
package react
