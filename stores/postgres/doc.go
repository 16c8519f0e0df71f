// Package postgres keeps reactguard's durable state in PostgreSQL, for
// services with several replicas: approvals, the write ledger, evidence,
// resume claims and the store of stopped runs, shared by every process
// that opens the same database.
//
//	store, err := postgres.Open(ctx, "postgres://app:secret@db:5432/app", nil)
//	if err != nil { … }            // names the address when the server is unreachable
//	defer store.Close()
//	if err := store.Migrate(ctx); err != nil { … }
//	loop, err := react.New(react.Config{
//		Model: model, Tools: tools,
//		Guards: &guard.Options{Ledger: store.Evidence(), Approvals: store.Approvals(), WriteLedger: store.WriteLedger()},
//		Claims: store.Claims(),
//		SnapshotKeys: keys, SnapshotMaxAge: 7 * 24 * time.Hour,
//	})
//
// Each part implements its core interface and passes its conformance suite
// (guardtest, evidencetest, runstoretest, threadstoretest) against a real server:
// [Store.Approvals] is a [guard.Approvals], [Store.WriteLedger] a
// [guard.WriteLedger], [Store.Evidence] an [evidence.Ledger],
// [Store.Claims] a [runstore.Claims], [Store.Runs] a [runstore.Store],
// [Store.Audit] a [runstore.Audit] and [Store.Threads] a
// [threadstore.Store] (conversations: react.Config.Threads, checked with
// threadstoretest).
//
// # Atomicity
//
// Every operation that must be atomic is one SQL statement that the
// database makes atomic: a write is claimed with INSERT … ON CONFLICT DO
// UPDATE … WHERE (only from no record, released or failed); a resume claim
// with INSERT … ON CONFLICT DO UPDATE … WHERE (only a free claim, or an
// unsettled one whose owner died); an approval deletes the waiting
// call, records the decision and grants the execution in one statement
// whose row lock orders concurrent decisions; an approval is consumed by a
// conditional decrement. Nothing is read and then written from Go.
//
// # Writes of a process that died
//
// A running write names its owner: a random 63-bit key on which the
// process's Store holds a session-level advisory lock, on a connection of
// its own (the owner session), for as long as the Store is open. When
// another process finds the write running, it tries that lock for the
// length of one statement: held means the write is in flight (DEFERRED
// WRITE_IN_FLIGHT, however long it runs); free means the owner's session
// ended — the process died, even by SIGKILL, or closed the store — before
// it recorded the result, so the write is stored and reported as
// WriteUncertain, and the write gate verifies it (the tool's Verify) or
// answers WRITE_PENDING_VERIFY before anything runs it again.
//
// A resume claim names its owner the same way. A claim that was taken and
// never settled, whose owner's lock is free, belongs to a resume whose
// process died after it applied the user's decision and before the run
// stopped again: the next Claim of that snapshot takes it over (exactly
// one, however many race), so the approval is not lost, while the claim of
// a live process, and a settled claim, are never taken.
//
// The server ends a session when its client's connection closes, at once
// for a process that died on the same machine or whose kernel closed its
// sockets; for a machine that vanished, when TCP keepalive gives up (tune
// tcp_keepalives_* on the server). Until then its writes stay in flight:
// the safe side. The Store pings its owner session (Options.SessionCheck)
// and reopens it when lost; while it is lost, WriteLedger.Begin and
// Claims.Claim claim nothing ([ErrSessionLost]). A session the server or a
// proxy closes while the process lives (idle_session_timeout,
// pg_terminate_backend, a transaction-pooling proxy) makes that process's
// running writes read as uncertain to others, and its resumes' claims
// takeable: keep idle_session_timeout off for the store's role,
// connect directly or through a session-pooling proxy, and give writes a
// Verify that answers WriteUnknown, not WriteNotApplied, for a write it
// cannot prove absent.
//
// # Retention
//
// Nothing is deleted by itself. [Runs.Delete] and [Runs.Expire] remove
// stopped runs; [Store.Prune] deletes, older than a bound, settled
// write-ledger keys (running and uncertain ones are kept), stopped runs,
// resume claims, approval state, the evidence of runs not written since,
// and conversations nobody wrote to since (with their turns and their
// evidence; [Threads.Delete] deletes one). Claims may be pruned only if no
// older snapshot can be resumed: set react.Config.SnapshotMaxAge to at
// most the retention.
//
// # Conversations
//
// [Threads] keeps one message at a time per thread with a lease taken by
// one INSERT … ON CONFLICT DO UPDATE … WHERE and named, like a running
// write, by the owner session's advisory lock: a lease of a process that
// died goes to the resume of the same run only (react's
// Loop.ReleaseThread lets a thread go).
//
// # Schema
//
// The schema is embedded, versioned SQL ([SchemaVersion]) applied by
// [Store.Migrate], which is idempotent and takes an advisory lock so that
// processes starting together take turns. A database whose schema is newer
// than this code is refused ([ErrSchemaNewer]). Tables are named
// reactguard_* in the first schema of the connection's search_path (set
// search_path in the DSN to use another schema). Strings a model or a user
// may fill are stored as bytea (text refuses NUL bytes) and snapshots as
// bytea, never jsonb.
//
// # Round trips
//
// Each method is one round trip, except Approve or Decline repeated or
// refused (two), Begin or BeginApproved claiming nothing (two: the second
// reads the record), Claim after a claim statement of this process failed
// (two) and UserSaid (one query that returns the run's user texts). A loop
// with the default guard chain (react.New) reads the evidence through an
// evidence.Cache, loaded with one statement per Run or Resume
// ([Evidence.Load]), and the write gate claims an approved write with
// [WriteLedger.BeginApproved]: a guarded read costs one round trip (the
// evidence Append) and an approved write three (BeginApproved, Append,
// Finish). docs/performance.md has the counts and the latencies under
// load.
package postgres
