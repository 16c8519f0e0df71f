// Package runstore holds the state of runs that stopped and will go on: the
// claim that lets a suspension be resumed once, and the store of stopped
// runs that a host lists in an approvals inbox and resumes from.
//
//	claims := runstore.NewMemoryClaims()
//	ok, err := claims.Claim(ctx, runID, snapshotID) // true once per snapshot, ever
//
// # Claims
//
// A stopped run's snapshot may be presented more than once: a user
// double-clicks approve, two replicas pick up the same message, a host
// retries a request whose reply was lost. Each snapshot has an identity,
// and [Claims.Claim] takes it atomically, so exactly one resume goes on and
// every other one is refused before it does anything. The loop (package
// react) claims every snapshot it resumes and releases the claim only when
// the resume failed before it changed anything, so that the same snapshot
// can be tried again; once the user's decision applied, it settles the
// claim when the resume stops ([Claims.Settle]), whatever the result: the
// run has a new snapshot (or ended), and the old one is spent for good.
//
// A resume may also die between the two: a process killed after it
// applied the decision and before it settled. Its claim is taken and never
// settled, and its snapshot is the run's latest. A durable store proves
// that the holder is dead (its database session or its lock file is gone)
// and gives the claim to the next resume of that snapshot, which applies
// the same decision again: an approval delivered twice grants nothing more,
// and the write ledger tells whether the dead process already ran the
// write (it is then uncertain and verified, or reused). So a legitimate
// approval is never lost to a crash, and a live resume's claim is never
// taken. [MemoryClaims] never takes over: its holders are in its own
// process.
//
// # Runs
//
// A [Store] keeps the latest snapshot of each stopped run with what an
// inbox needs to list it: its node, what it waits for (an approval, an
// answer to a follow-up, or a Continue after an interruption), the gated
// write or the question, and when it stopped. [Store.List] pages through
// the runs, oldest first, filtered by kind, node and age; [Store.Expire]
// deletes runs that stopped before a given time.
//
// # Implementations
//
// [MemoryClaims] and [Memory] live in the process. Durable implementations
// (PostgreSQL, SQLite) are nested modules under stores/ in this repository;
// any implementation is checked with the conformance suites of package
// runstoretest.
package runstore
