package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/outcome"
)

// Records written by the schema of version 3, before records carried
// provenance, read without it after the upgrade, and new records keep
// theirs.
func TestSchema_UpgradeKeepsEvidenceReadable(t *testing.T) {
	d := freshSchema(t)
	conn, err := pgx.Connect(bg, d)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(bg) }()
	migrateTo(t, conn, 3)
	if _, err := conn.Exec(bg, `INSERT INTO reactguard_records (run, call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round)
		 VALUES ('run-old', 'c1', 1, 'search', 'fp', 1, 0, '{"id":"s-1"}', '', 1)`); err != nil {
		t.Fatal(err)
	}
	s := upgraded(t, d, 3)
	ev := s.Evidence()
	old, ok, err := ev.Lookup(bg, "run-old", "c1")
	if err != nil || !ok || string(old.Payload) != `{"id":"s-1"}` || !old.Provenance.IsZero() {
		t.Fatalf("Lookup of a version-3 record = %+v, %v, %v; want it, without provenance", old, ok, err)
	}
	at := time.Date(2025, 6, 1, 12, 0, 0, 123456000, time.UTC)
	p := evidence.Provenance{FetchedAt: at, Source: "https://example.com", ObjectID: "o-1", Version: "v2", Voucher: "r-9", IdempotencyKey: "k"}
	if err := ev.Append(bg, "run-old", evidence.Record{CallID: "c2", Tool: "search", Fingerprint: "fp2", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{}`), Provenance: p}); err != nil {
		t.Fatal(err)
	}
	snap, err := ev.Load(bg, "run-old")
	if err != nil || len(snap.Records) != 2 {
		t.Fatalf("Load = %d records, %v; want 2", len(snap.Records), err)
	}
	if !snap.Records[0].Provenance.IsZero() || snap.Records[1].Provenance != p {
		t.Fatalf("Load provenance = %+v, %+v; want none, then %+v", snap.Records[0].Provenance, snap.Records[1].Provenance, p)
	}
	n, last, err := ev.Executions(bg, "run-old", "fp2")
	if err != nil || n != 1 || last.CallID != "c2" || last.Provenance != p {
		t.Fatalf("Executions = %d, %+v, %v; want c2 with its provenance", n, last, err)
	}
}

// An approved write's evidence record, stored in the statement that
// finishes the write (guard.RecordingWriteLedger), keeps its provenance:
// the idempotency key it ran under and the voucher it returned.
func TestFinishRecorded_KeepsProvenance(t *testing.T) {
	s := open(t, nil)
	wl := s.WriteLedger()
	rec, ok, err := wl.Begin(bg, "k-prov", "book")
	if err != nil || !ok {
		t.Fatalf("Begin = %v, %v; want a claim", ok, err)
	}
	rec.State, rec.Result = guard.WriteSucceeded, []byte(`{"voucher":"r-1"}`)
	p := evidence.Provenance{Voucher: "r-1", IdempotencyKey: "k-prov", FetchedAt: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	r := evidence.Record{CallID: "w1", Tool: "book", Fingerprint: "fpw", Outcome: outcome.Success, Attempt: 1, Payload: rec.Result, Provenance: p}
	if err := wl.FinishRecorded(bg, rec, "run-prov", r); err != nil {
		t.Fatalf("FinishRecorded = %v", err)
	}
	got, ok, err := s.Evidence().Lookup(bg, "run-prov", "w1")
	if err != nil || !ok || got.Provenance != p {
		t.Fatalf("Lookup = %+v, %v, %v; want the record with provenance %+v", got.Provenance, ok, err, p)
	}
}
