// Package evidence records what the tools of a node run actually did, so
// that later checks can rely on facts instead of the model's word.
//
// # Records
//
// A [Record] is one executed attempt of a tool call: its call id, tool,
// fingerprint, outcome (SUCCESS or FAILED only: calls stopped before they
// ran are never evidence), error code, payload, attempt and round. The
// evidence guard (package guard) appends one record per attempt; a call that
// failed and then succeeded on retry keeps both records, the first failure
// first, so the trace tells what happened (a trace keeps the first
// failure). Each record carries its [Provenance]: when the result was
// fetched, from where, the object and its data version, a write's voucher
// and idempotency key. [StepRef] names the record in which a run holds
// the verified outputs of an earlier step of a task.
//
// # Ledger
//
// A [Ledger] stores records and the user's words per run and answers the
// questions the guards and the loop ask:
//
//   - [Ledger.HasResult] and [Ledger.HasValue]: has tool X succeeded, and
//     does one of its results hold this value at this field? (the param
//     contract, and output checks of the loop)
//   - [Ledger.UserSaid]: did the user say this value? (the param contract)
//   - [Ledger.Executions]: how often did calls with this fingerprint run?
//     (the fingerprint guard)
//   - [Ledger.Lookup]: what did call id C produce? (output source refs)
//
// Lookups must cost the same whether a run holds ten records or a hundred
// thousand. [Memory], the in-memory default, indexes every scalar leaf of a
// successful payload once (see [Walk] for paths and value texts), at the
// first value lookup after the append, so each lookup is one hash-map
// access.
//
// # Snapshots
//
// A suspended run may resume in another process. A ledger that lives in the
// process implements [Exporter]: [Exporter.Export] returns a [Snapshot]
// (records in order, the user's texts) that marshals to JSON, and
// [Exporter.Import] restores it into a fresh ledger, rebuilding every index,
// so lookups answer exactly as before. A ledger backed by a shared store
// needs no snapshot.
//
// # Cache
//
// A ledger kept in a database answers each lookup with a round trip. A
// [Cache] wraps it for runs that one process drives at a time: the first
// read of a run loads its evidence once (one round trip when the ledger is
// a [Loader]) into a [Memory] index, later reads are answered from memory,
// and writes go to the database and then to the index. Package react
// wraps such a ledger itself when it builds the default guard chain, and
// drops each run from the cache when a Run or Resume starts and ends (see
// [Cache] for why that is coherent, and when it is not used).
//
// # Conformance
//
// Package evidencetest runs the Ledger contract against any implementation:
//
//	func TestMyLedger(t *testing.T) {
//		evidencetest.Run(t, func() evidence.Ledger { return mystore.New(t) })
//	}
package evidence
