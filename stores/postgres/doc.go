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
//		Claims: store.Claims(), Runs: store.Runs(),
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
// unsettled one whose owner's lease has expired); an approval deletes the
// waiting call, records the decision and grants the execution in one
// statement whose row lock orders concurrent decisions; an approval is
// consumed by a conditional decrement. Nothing is read and then written
// from Go.
//
// An execution is granted on the write ledger's row of the key the write
// gate derives for the approved call ([guard.IdempotencyKey] of the run
// and the call's fingerprint), as a count beside the key's record: the
// approved write, called with that key (the gate's default), is claimed
// and its approval consumed by one UPDATE … WHERE of that one row, in
// place. A write called with an explicit idempotency key is claimed under
// its own key and consumes the grant of the derived key's row in the same
// statement.
//
// # Leases and failover
//
// A Store holds a lease: a row of reactguard_leases, named by a random
// 63-bit owner id, that the Store renews every third of Options.Lease
// (DefaultLease, 15 s) on a connection of its own. Its running writes and
// its unsettled resume claims name that owner. Another process takes such
// a claim over — reads the write as WriteUncertain, so the write gate
// verifies it (the tool's Verify) or answers WRITE_PENDING_VERIFY before
// anything runs it again; gives the resume claim to the next resume of its
// snapshot — only once the lease has expired by the database's clock:
// the process died (even by SIGKILL), or has not reached the database for
// a whole lease. Every claim statement checks, in the same statement, that
// the claiming Store's own lease is live, and a takeover that the holder's
// is not.
//
// The holder counts its lease lost sooner, on its own clock: when two
// thirds of the lease passed since it sent its last successful renewal. It
// then cancels the contexts of the work held under it — the approved write
// in flight ([WriteLedger.Hold]: the write gate runs the tool under it)
// and the resume ([Claims.Hold]: the loop runs the resume under it) — with
// a cause wrapping runstore.ErrLeaseLost, and starts a new lease for its
// next claims. The last third of the lease is the time a cancelled call
// has to stop before anyone may take its claim over.
//
// A session that ends while its process lives (a server restart, a
// failover, pg_terminate_backend, idle_session_timeout, a proxy) changes
// nothing: the pool reconnects, the keeper renews the lease on a new
// connection, and as long as it succeeds within two thirds of the lease
// the process's claims stay its own. Leases do not depend on sessions, so
// a transaction-pooling proxy is fine.
//
// Every claim carries a fencing token from one sequence (reactguard_fence):
// a later claim always holds a larger one. The token reaches the tool
// (tool.Request.FencingToken), and every record that closes a claim names
// it: a write's final record (Finish, FinishRecorded), a resume claim's
// Settle, and the save or delete of the claimed run by [Runs], which
// settles the claim in the same statement. A holder whose claim was taken
// over records nothing: its records are refused (guard.ErrFenced,
// runstore.ErrLeaseLost) and the loop returns the snapshot it resumed.
// What remains, and what the idempotency key covers, is described in
// docs/architecture.md ("Failover").
//
// Leases are timed by the database's clock and each process's monotonic
// clock: a database clock that jumps forward (or a failover to a server
// whose clock runs ahead) by more than a third of the lease shortens it.
//
// # Retention
//
// Nothing is deleted by itself. [Runs.Delete] and [Runs.Expire] remove
// stopped runs; [Store.Prune] deletes, older than a bound, the state no
// snapshot within react.Config.SnapshotMaxAge can need: a run's state (its
// gated call, decisions, grants, resume claims, evidence and the records
// of its approved writes) is kept as a whole while the run store lists a
// stop of the run at or after the bound or any of that state was written
// at or after it, and deleted as a whole otherwise; stopped runs older than
// the bound and settled records of writes claimed without an approval are
// deleted too, and so are conversations nobody wrote to since the bound
// (with their turns and their evidence; [Threads.Delete] deletes one). Set SnapshotMaxAge to at most the retention.
//
// # Conversations
//
// [Threads] keeps one message at a time per thread with a lease taken by
// one INSERT … ON CONFLICT DO UPDATE … WHERE and named, like a running
// write, by the Store's lease: a thread held by a process whose lease
// expired goes to the resume of the same run only (react's
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
// Upgrading across versions 3 to 4 (leases replaced advisory locks) and 7
// to 8 (approvals moved from reactguard_grants onto the write ledger's
// rows, and that table dropped): stop every process of the older code
// before the first process of the newer one migrates. Processes of the
// older code still running fail their statements on the new schema, and
// a process of it that starts afterwards is refused ([ErrSchemaNewer]).
//
// # Round trips
//
// Each method is one round trip, except Approve or Decline repeated or
// refused (two), Begin or BeginApproved that find a running write whose
// owner's lease has expired (two: the second stores it uncertain), Claim
// after a claim statement of this process failed (two) and UserSaid (one
// query that returns the run's user texts). A loop with the default guard
// chain (react.New) costs: the Run's first user text with the load of the
// run's evidence, one statement ([Evidence.AddUserTextAndLoad]); a guarded
// read, one (the evidence Append; every lookup is answered by the loop's
// evidence.Cache); a write deferred for approval, one (the claim that
// gates it, [WriteLedger.BeginApprovedOrGate]); the approval builtin's
// read of the gated call, none (this Store remembers what it just gated,
// see [Approvals.Gated]); saving the stopped run, one; ResumeRun, the run
// read and one statement that claims the snapshot, applies the decision
// and reads the run's evidence ([Claims.ClaimDecided]); an approved write,
// two (its claim with the approval consumed, and its record with its
// evidence, [WriteLedger.FinishRecorded]); and the end of a resume, one
// (the run saved or deleted with its claim settled). A run with two
// guarded reads, a gated write, its approval, ResumeRun and the approved
// write costs 10 statements (TestRoundTrips). docs/performance.md has the
// latencies beside the database's floor.
package postgres
