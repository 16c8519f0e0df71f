// Package react is the ReAct loop: it sends a node's task to a [Model],
// runs the tool calls the model makes through the guard chain, counts
// progress from the verdicts alone, and ends a run as finished, failed or
// suspended for a human, with a sealed snapshot from which any process can
// resume it.
//
//	loop, err := react.New(react.Config{Model: model, Tools: catalog})
//	node := react.Node{
//		Instructions: "Create the website the user asks for.",
//		Tools:        []string{"list_spaces", "create_site"},
//		Outputs:      []react.Output{{Key: "site_id", Required: true}},
//	}
//	owner := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
//	res, err := loop.Run(ctx, node, "Create a site called Spring Sale in Marketing.", owner)
//	switch res.Status {
//	case react.Suspended: // an approval or a follow-up question: store res.Snapshot, show res.Suspension
//		d := react.Approve(res.Suspension.Ticket).DecidedBy("alice@acme") // what the person saw, who decided
//		res, err = loop.Resume(ctx, snapshot, d, owner) // later, in any process
//	case react.Finished: // res.Outputs["site_id"]
//	case react.Failed: // res.Failure says why
//	}
//
// # Building and running
//
// [New] takes a [Config] whose zero value means defaults for everything
// but the Model: an empty tool catalog, English texts, the default guard
// chain (guard.Default) over the default invoker with in-memory stores, a
// slog observer, random run ids, the wall clock and a random snapshot key
// per process. It refuses a nil Model, a typed nil included
// ([ErrNoModel]). [Loop.Run] runs one [Node] with the user's words;
// [Loop.Resume] continues a suspended or interrupted run from its snapshot
// with a [Decision] ([Approve], [Decline], [Answer], [Continue]);
// [Loop.ResumeRun] does the same by run id with Config.Runs. A nil context
// is refused ([ErrNilContext]).
//
// # People and owners
//
// A run belongs to the owner named when it starts ([WithOwner]: a tenant
// and a user), sealed into its snapshots; every call that reads or resumes
// a stopped run checks that the caller's owner covers it ([ErrNotOwner]).
// A person's decision names what they were shown by the suspension's
// ticket ([Suspension].Ticket) and who they are ([Decision.DecidedBy]): it
// applies to that suspension only, a repeat gets [ErrAlreadyResumed] (a
// [DecidedError]), and it is recorded in Config.Audit before it applies
// ([Loop.History]). An inbox reads what a run waits for from its sealed
// snapshot ([Loop.Pending], [Loop.ListPending], [Loop.Inspect]), never
// from a run store's columns. A Loop keeps no state between runs and is
// safe for concurrent use; no goroutine outlives Run or Resume.
//
// # What a run returns
//
// A run ends [Finished], [Failed] (see [Failure]) or [Suspended] (see
// [Suspension]), or stops [Interrupted] with an error when the context is
// cancelled or the model or a store fails. Suspended and Interrupted
// results carry a JSON snapshot, versioned and sealed with HMAC-SHA256
// under Config.SnapshotKeys, which any Loop with the same keys and stores
// resumes exactly once ([ErrSnapshot], [ErrAlreadyResumed]). Every tool
// call of every turn gets exactly one tool message in Result.Transcript,
// paired by call id, and a [CallReport] in Result.Calls with its three
// layers of success (call, execution and business status, [Layers];
// docs/evaluation.md defines them), also carried by its [ToolEvent]; the run's goal ([GoalStatus])
// is judged from its completion conditions, never from the model calling
// builtin_node_finish. Every step is reported to an [Observer]
// ([LogObserver] by default; [Metrics] counts per layer with the
// denominators docs/evaluation.md defines).
//
// # The rules
//
// The loop implements the specification's counting rules (§6: SUCCESS
// resets the no-progress counter, FAILED and REJECTED count one stall and
// end the wave, DEFERRED neither counts nor resets, a turn without a tool
// call counts one stall), the built-in control tools ([ToolApproval],
// [ToolFollowUp], [ToolFail], [ToolFinish], [ToolOutputSet]) with their
// rejection codes, parallel reads (Node.ParallelReads), and suspension and
// resume. Approval is the model's to ask for (builtin_node_approval after
// the write gate deferred a write), as the specification says; with
// Node.HostApproval the run suspends for the user as soon as a write is
// deferred, and an approved write runs at once on resume. The rules are
// spelled out, one by one with their codes and texts, in docs/loop.md of
// the repository; the English statement of the specification is
// docs/observation-contract.md, and the threat model of snapshots and
// resume is in docs/architecture.md.
//
// # Three layers per call
//
// Success has three layers (docs/evaluation.md), each judged by its own
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
// Every step of a run is an [Event] (see [EventKind] for the
// vocabulary): run start, model start, text and call deltas, model end,
// tool start, tool invoked (outcome, code, duration measured with
// Config.Now, layers, position in the turn, the tools offered, the schema
// version), tool end, tool skipped, no tool calls, stall counted, stall
// reset, round end, suspended, finished, failed (with the goal), run end
// (with the Result). An [Observer] consumes them, as a slog.Handler
// consumes records; the host that streams a run ([Loop.RunStream],
// [Loop.ResumeStream]) iterates over the same values. The default
// [LogObserver] writes them to log/slog ("TOOL invoked outcome=FAILED
// code=TOOL_TIMEOUT tool=… duration=… call_status=valid
// exec_status=timeout business_status=none …" at WARN for FAILED, INFO
// otherwise; "REACT no_tool_calls"; …). [Metrics] counts per layer with
// the definitions and denominators of docs/evaluation.md; combine
// observers with [Observers]; an [EventFilter] says which kinds an
// observer wants, so that the loop builds no event nobody reads.
//
// # A run as a step of a task
//
// Package task drives runs as the steps of a graph; the loop gives it
// what a step needs: [Node].Require (the latest data, every page of a
// tool's results), a step verifier asked after each tool result and at
// the finish, which refuses a finish it does not find satisfied
// ([WithVerifier], [Verifier], [StepVerdict]), the run's status as a step
// ([StepStatus], Result.Step), the verified outputs of earlier steps
// recorded as sources and shown to the model, with the steps' statuses
// ([WithInputs]), and host state sealed into the run's snapshots
// ([WithHostState], [ErrHostState]). docs/tasks.md describes them.
// # Conversations
//
// A chat is a thread of messages, each answered by one run:
//
//	loop, _ := react.New(react.Config{Model: model, Tools: tools, Threads: threads,
//		History: react.HistoryPolicy{MaxTurns: 20, MaxTokens: 8000}})
//	res, err := loop.Run(ctx, node, "Please refund it.", react.InThread("chat-42"), owner)
//
// With [InThread] a run answers the next message of a thread kept in
// Config.Threads (package threadstore): its prompt holds the thread's
// earlier turns that the [HistoryPolicy] keeps, after the host's summary
// of the others, and its guards also accept what the user said and what
// tools returned in every earlier turn (the thread's evidence), however
// little of it the prompt holds. When it ends its turn is committed; one
// message at a time ([ThreadBusyError]); a run that suspends keeps its
// thread and resumes into it. [Loop.Turns] reads a thread back,
// [Loop.ReleaseThread] lets a stopped run's thread go. [Node].TextAnswers
// lets a reply in text end a turn as the answer (the specification's rule
// counts it as no progress; a run that fails that way says so in its
// [Failure]); [OutputsOf] and [OutputsAs] declare and read a node's
// outputs as a Go struct.
//
// # Streaming
//
// A [Model] that also implements [StreamModel] delivers each turn in
// [Chunk]s; the loop reports their text and call fragments as deltas and
// assembles the turn ([Assembler], [Collect]) before it checks and runs
// any call, so a partial call never executes and a stream that ends
// before its end marker interrupts the run with a resumable snapshot. A
// host reads a run as it happens with [Loop.RunStream],
// [Loop.ResumeStream] and [Loop.ResumeRunStream], which yield the run's
// events on the iterating goroutine; a model that does not stream works
// through them too (its whole text as one delta).
//
// For the kinds that start a run's call, a model call or a tool call, an
// observer returns the context the work runs in: this is how a tracer
// opens a span around each (the nested module adapters/otel does, on
// OpenTelemetry). Every start is ended exactly once, on success, failure,
// cancellation, and while a panic unwinds. A [Carrier] may keep a few
// strings in a run's snapshot (the trace context of the run's span, say)
// and gets them back when the snapshot is resumed, so that the resumed
// run links to the run it resumes. A [Model] that implements [Describer]
// names its provider and model for these events, and the [Response] of
// the adapters carries the response's model name, finish reason and token
// [Usage].
package react
