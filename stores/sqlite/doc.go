// Package sqlite keeps reactguard's durable state in one SQLite file: the
// embedded default for a service that runs as one process (or a few
// processes on one machine), and for programs that suspend, exit, and are
// resumed by a later invocation. It uses modernc.org/sqlite, pure Go, no
// cgo.
//
//	store, err := sqlite.Open(ctx, "/var/lib/app/reactguard.db", nil)
//	if err != nil { … }
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
// (guardtest, evidencetest, runstoretest, threadstoretest) against a real file:
// [Store.Approvals] is a [guard.Approvals], [Store.WriteLedger] a
// [guard.WriteLedger], [Store.Evidence] an [evidence.Ledger],
// [Store.Claims] a [runstore.Claims], [Store.Runs] a [runstore.Store],
// [Store.Audit] a [runstore.Audit] and [Store.Threads] a
// [threadstore.Store] (conversations: react.Config.Threads, checked with
// threadstoretest).
//
// # Atomicity
//
// The file is opened in WAL mode (readers never wait for the writer) with
// a busy timeout (a writer waits for another's lock instead of failing)
// and immediate transactions (the write lock is taken at BEGIN, so
// transactions never deadlock upgrading a read lock). A write is claimed
// with one INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING, an approval
// consumed with a conditional UPDATE; a decision, a resume claim, and an
// approved write's claim with its approval (WriteLedger.BeginApproved)
// each run in one immediate transaction.
// SQLite runs one writer at a time across all processes, which makes each
// of these atomic.
//
// # Writes of a process that died
//
// A running write names its owner: a lock file in the directory
// <database>.owners that the process's Store creates and holds locked
// (flock) while it is open. The kernel drops the lock when the process
// ends, however it ends (SIGKILL included). When another process finds the
// write running it tries that lock, inside the transaction that reads the
// record: held means in flight (WRITE_IN_FLIGHT, however long the write
// runs); free, or the file gone, means the owner ended before it recorded
// the result, so the write is stored and reported as WriteUncertain, and
// the write gate verifies it (the tool's Verify) or answers
// WRITE_PENDING_VERIFY before anything runs it again. A live process is
// never taken for dead. A resume claim names its owner the same way: a
// claim taken and never settled whose owner's lock is free belongs to a
// resume whose process died after it applied the user's decision, and the
// next Claim of that snapshot takes it over (exactly one), so the approval
// is not lost; a live owner's claim, and a settled claim, are never taken.
// The lock needs every process on one machine (as SQLite's WAL mode does
// anyway) and a Unix system; elsewhere owners always count as alive, so the
// writes and resume claims of a process that died stay taken until an
// operator settles them.
//
// Every claim carries a fencing token from one counter of the database
// (tool.Request.FencingToken), and the records that close a claim — a
// write's final record, a resume claim's Settle, the save or delete of the
// claimed run by [Runs], which settles the claim in the same transaction —
// are refused once the claim is no longer the holder's (guard.ErrFenced,
// runstore.ErrLeaseLost). A Store checks its lock file every second
// (Options.OwnerCheck): if it was removed or replaced while the process
// lives, the process reads as dead to the others, so the Store cancels the
// work held under it (the loop runs writes and resumes under
// [WriteLedger.Hold] and [Claims.Hold]) and claims on under a new owner.
//
// # Backups and damaged files
//
// Copying the file of a live database with cp, rsync or a snapshot that
// does not take the -wal file at the same instant can give a damaged copy
// (a page of the database and a page of the log from different moments).
// Use [Store.Backup] (VACUUM INTO: a consistent copy while writers go on)
// or the sqlite3 tool's .backup command; copy the file itself only while no
// process has it open. [Open] runs PRAGMA quick_check (it reads every page
// once, in time proportional to the file) and refuses a damaged file with
// [ErrCorrupt], rather than fail in the middle of a run later.
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
// [Threads] keeps one message at a time per thread with a lease taken in
// an immediate transaction and named, like a running write, by the
// owner's lock file: a lease of a process that died goes to the resume of
// the same run only (react's Loop.ReleaseThread lets a thread go).
//
// # Schema
//
// The schema is embedded, versioned SQL ([SchemaVersion]) applied by
// [Store.Migrate], idempotent and safe when several processes start at
// once (each migration runs in an immediate transaction that re-reads the
// version under the write lock). [Open] is safe then too, on a new file
// as well: the switch of the file to WAL journaling, which SQLite does not
// make wait for another connection's lock, is tried again within the busy
// timeout ([ErrBusy] when the lock outlives it). A database whose schema is newer than
// this code is refused ([ErrSchemaNewer]). Strings a model or a user may
// fill, and snapshots, are stored as BLOBs, byte for byte.
package sqlite
