package postgres_test

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/internal/facts"
	"github.com/reactguard/reactguard/outcome"
)

// saltedV6 is a fact hash as the records of schema versions 4 to 6 kept
// it: sha256 of the run's length (uvarint), the run and the hash, cut to
// 16 bytes. Written out here so that the test pins the stored format.
func saltedV6(run string, h []byte) []byte {
	d := sha256.New()
	var n [binary.MaxVarintLen64]byte
	d.Write(n[:binary.PutUvarint(n[:], uint64(len(run)))])
	d.Write([]byte(run))
	d.Write(h)
	return d.Sum(nil)[:16]
}

// Since schema version 7 a record is one row and its primary key: the
// records written by versions 4 to 6 (their salted fact hashes) and before
// (the facts table) still answer HasValue after the upgrade, the records
// written after it answer by their payloads, and a lookup for one tool
// does not find another tool's values.
func TestSchema_Version7KeepsEarlierFacts(t *testing.T) {
	d := freshSchema(t)
	conn, err := pgx.Connect(bg, d)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(bg) }()
	migrateTo(t, conn, 6)
	// A version-6 record whose payload says nothing: only its hashes hold
	// the value, so finding it proves they are read.
	run := "run-6"
	hashes := [][]byte{saltedV6(run, facts.Tool("search")), saltedV6(run, facts.Value("search", "id", "s-9"))}
	if _, err := conn.Exec(bg, `INSERT INTO reactguard_records (run, call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round, facts)
		VALUES ($1, 'c1', 1, 'search', 'fp1', $2, 0, '{}', '', 1, $3)`, []byte(run), int16(outcome.Success), hashes); err != nil {
		t.Fatal(err)
	}
	// A fact of a version-3 record, in the facts table (unsalted).
	if _, err := conn.Exec(bg, `INSERT INTO reactguard_facts (run, h) VALUES ($1, $2)`, []byte(run), facts.Any("legacy-7")); err != nil {
		t.Fatal(err)
	}
	s := upgraded(t, d, 6)
	ev := s.Evidence()
	if err := ev.Append(bg, run, evidence.Record{CallID: "c2", Tool: "lookup", Fingerprint: "fp2", Outcome: outcome.Success, Attempt: 1,
		Payload: []byte(`{"id":"n-1","owner":{"name":"Ada Lovelace"}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := ev.Append(bg, run, evidence.Record{CallID: "c3", Tool: "lookup", Fingerprint: "fp3", Outcome: outcome.Failed, Attempt: 1,
		Payload: []byte(`{"id":"f-1"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		why               string
		tool, field, text string
		want              bool
	}{
		{"a version-6 record's hashes hold it (its payload does not)", "search", "id", "s-9", true},
		{"the version-3 facts table holds it", "", "", "legacy-7", true},
		{"a new record's payload holds it", "lookup", "id", "n-1", true},
		{"a new record's nested leaf", "lookup", "owner.name", "Ada Lovelace", true},
		{"a new record's text at any path", "", "", "n-1", true},
		{"a word of a new record's text", "", "", "Lovelace", true},
		{"another tool's value is not this tool's", "search", "id", "n-1", false},
		{"a value nobody returned", "lookup", "id", "n-2", false},
		{"a failed call's payload is no evidence", "", "", "f-1", false},
	} {
		got, err := ev.HasValue(bg, run, c.tool, c.field, c.text)
		if err != nil || got != c.want {
			t.Errorf("%s: HasValue(%q, %q, %q) = %v, %v; want %v", c.why, c.tool, c.field, c.text, got, err, c.want)
		}
	}
	for tool, want := range map[string]bool{"search": true, "lookup": true, "other": false} {
		if got, err := ev.HasResult(bg, run, tool); err != nil || got != want {
			t.Errorf("HasResult(%q) = %v, %v; want %v", tool, got, err, want)
		}
	}
	n, last, err := ev.Executions(bg, run, "fp2")
	if err != nil || n != 1 || last.CallID != "c2" {
		t.Errorf("Executions(fp2) = %d, %+v, %v; want c2 once", n, last, err)
	}
	// The record is its own only index: an append writes one row and one
	// primary-key entry.
	rows, err := conn.Query(bg, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'reactguard_records' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || !slices.Equal(names, []string{"reactguard_records_pkey"}) {
		t.Errorf("indexes of reactguard_records = %v, %v; want only the primary key", names, err)
	}
	var stored int
	if err := conn.QueryRow(bg, `SELECT count(*) FROM reactguard_records WHERE run = $1 AND facts IS NOT NULL`, []byte(run)).Scan(&stored); err != nil || stored != 1 {
		t.Errorf("records with fact hashes = %d, %v; want 1 (the version-6 record only)", stored, err)
	}
}
