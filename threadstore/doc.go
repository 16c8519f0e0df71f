// Package threadstore keeps conversations: threads of many user messages,
// each answered by one run of package react, with what the guards know of
// the earlier messages.
//
//	threads := threadstore.NewMemory() // or stores/sqlite, stores/postgres
//	loop, _ := react.New(react.Config{Model: model, Tools: tools, Threads: threads})
//	res, err := loop.Run(ctx, node, "Refund order A-17.", react.InThread("support-42"), owner)
//
// # Threads and turns
//
// A [Thread] belongs to the owner that created it (the [runstore.Owner] of
// its first message) and holds its committed turns, in order: a [Turn] is
// one user message and everything the run that answered it did, sealed by
// the loop (its content is opaque here), with the tokens it costs in a
// prompt, which a history policy selects by. The loop also keeps the
// host's summary of the earlier turns on the thread ([Summary]).
//
// # One message at a time
//
// A run takes its thread with [Store.Acquire], which returns a lease
// token; every other run is refused with [ErrBusy] until the run ends and
// commits its turn ([Store.Commit], which frees the thread in the same
// step). A run that stops to wait for a person (an approval, a follow-up
// question) or that is interrupted parks the thread ([Store.Park]): the
// thread stays with it, no other message may start, and only that run,
// resumed, takes the thread again. [Store.Release] frees a thread without
// a turn: the loop's own lease when a run could not start, or the thread
// of a run that will never come back (a stopped run that expired, a
// driver that died). A durable store tells a dead driver from a live one
// as it does for resume claims (package runstore): a lease taken by a
// process that died is given to the same run's resume, never to another
// message.
//
// # Evidence of earlier turns
//
// [Store.Evidence] is an [evidence.Ledger] keyed by thread id: when a run
// ends in a thread, the loop appends its evidence there — every executed
// call's record, under a call id marked with its turn ("turn3_c1"), and
// the user's words of the message and of its answers to follow-ups — so
// that a value the user gave, or a tool returned, messages ago is still a
// source the parameter contract and builtin_output_set accept, whatever
// the history policy cut from the prompt. Durable stores keep it in their
// evidence tables under [Key] (see [EvidenceIn]).
//
// # Implementations
//
// [Memory] lives in the process. The durable implementations are in the
// nested modules stores/sqlite and stores/postgres; any implementation is
// checked with package threadstoretest.
package threadstore
