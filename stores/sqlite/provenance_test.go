package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/outcome"
)

// Records written by the schema of version 3, before records carried
// provenance, read without it after the upgrade, and new records keep
// theirs.
func TestSchema_UpgradeKeepsEvidenceReadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	qs := []string{`CREATE TABLE reactguard_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`}
	for _, f := range []string{"0001_init.sql", "0002_settled_claims.sql", "0003_owners_audit.sql"} {
		b, err := os.ReadFile("migrations/" + f)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, string(b))
	}
	qs = append(qs,
		`INSERT INTO reactguard_schema (version, name, applied_at) VALUES (1, '0001_init.sql', 0), (2, '0002_settled_claims.sql', 0), (3, '0003_owners_audit.sql', 0)`,
		`INSERT INTO reactguard_records (run, call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round)
		 VALUES (X'72756e2d6f6c64', X'6331', 1, X'736561726368', X'6670', 1, 0, X'7b226964223a22732d31227d', X'', 1)`) // run-old, c1, search, fp, {"id":"s-1"}
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s := openAt(t, path, nil) // migrates
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
