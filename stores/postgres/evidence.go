package postgres

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/internal/facts"
	"github.com/reactguard/reactguard/outcome"
)

// Evidence is the [evidence.Ledger] of a [Store]. An Append writes one
// row and one primary-key entry, in one statement: the record is its own
// only index. A run's lookups in a loop are answered from the loop's
// [evidence.Cache], which reads the run's records once (see Load); used
// without a cache, each lookup is one statement over the run's records,
// read through the primary key (run first), so its cost grows with the
// run's records and not with the table: HasResult and HasValue recompute
// the facts of the run's successes ([evidence.Walk], [evidence.Words]) as
// [evidence.Memory] indexes them, and Executions reads the fingerprint's
// records. UserSaid reads the run's user texts (its cost grows with what
// the user said, as the contract allows) and matches them with
// [evidence.Said]. Records written by schema versions 4 to 6 carry their
// salted fact hashes, and those of earlier versions have rows in a table of
// facts: both are read too.
//
// Evidence does not implement [evidence.Exporter]: its state outlives the
// process, so a snapshot of a run that uses it carries no evidence, and
// the resuming process reads the same tables. It is an
// [evidence.TextLoader], so the loop's [evidence.Cache] reads a run's
// evidence with the Run's first user text, in the same round trip, and a
// Resume's with its claim ([Claims.Claim]): no round trip of its own.
type Evidence struct{ s *Store }

var (
	_ evidence.Ledger     = (*Evidence)(nil)
	_ evidence.TextLoader = (*Evidence)(nil)
)

// appendRecord appends one record and moves the run's last write time
// when it is old (see appendCTEs); appendFresh appends one record of a run
// whose time this Store moved within touchEvery.
var (
	appendRecord = `WITH ` + appendCTEs(0, "TRUE", true) + ` SELECT ` + touchedColumn(true)
	appendFresh  = `WITH ` + appendCTEs(0, "TRUE", false) + ` SELECT ` + touchedColumn(false)
)

// Append implements [evidence.Ledger.Append] in one statement (one round
// trip).
func (e *Evidence) Append(ctx context.Context, run string, r evidence.Record) error {
	if err := evidence.Check(r); err != nil {
		return err
	}
	e.s.prefetched.Delete(run)
	at := e.s.ts()
	q := appendRecord
	if e.s.touches.fresh(run, at) {
		q = appendFresh
	}
	var touched bool
	if err := e.s.pool.QueryRow(ctx, q, appendArgs(run, r, at)...).Scan(&touched); err != nil {
		return schemaErr(ctx, "append evidence", err)
	}
	if touched {
		e.s.touches.moved(run, at)
	}
	return nil
}

const recordColumns = `call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round, fetched_at, source, object_id, version, voucher, idempotency_key`

// provenanceDest receives the provenance columns of a record (NULL in
// rows written before schema version 6).
type provenanceDest struct {
	fetched                                     *time.Time
	source, objectID, version, voucher, idemKey []byte
}

func (d *provenanceDest) dest() []any {
	return []any{&d.fetched, &d.source, &d.objectID, &d.version, &d.voucher, &d.idemKey}
}

func (d *provenanceDest) provenance() evidence.Provenance {
	p := evidence.Provenance{Source: string(d.source), ObjectID: string(d.objectID), Version: string(d.version), Voucher: string(d.voucher), IdempotencyKey: string(d.idemKey)}
	if d.fetched != nil {
		p.FetchedAt = d.fetched.UTC()
	}
	return p
}

// nullText is s as bytea, NULL when empty.
func nullText(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

func scanRecord(row pgx.Row, extra ...any) (evidence.Record, error) {
	var callID, tool, fp, payload, ref []byte
	var oc int16
	var code int32
	var r evidence.Record
	var pd provenanceDest
	dest := make([]any, 0, len(extra)+15)
	dest = append(dest, extra...)
	dest = append(dest, &callID, &r.Attempt, &tool, &fp, &oc, &code, &payload, &ref, &r.Round)
	if err := row.Scan(append(dest, pd.dest()...)...); err != nil {
		return evidence.Record{}, err
	}
	r.CallID, r.Tool, r.Fingerprint, r.PayloadRef = string(callID), string(tool), string(fp), string(ref)
	r.Outcome, r.Code, r.Payload, r.Provenance = outcome.Outcome(oc), errcode.Code(code), payload, pd.provenance()
	return r, nil
}

// Records implements [evidence.Ledger.Records].
func (e *Evidence) Records(ctx context.Context, run string) ([]evidence.Record, error) {
	rows, err := e.s.pool.Query(ctx, `SELECT `+recordColumns+` FROM reactguard_records WHERE run = $1 ORDER BY seq`, []byte(run))
	if err != nil {
		return nil, schemaErr(ctx, "records", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (evidence.Record, error) { return scanRecord(row) })
	if err != nil {
		return nil, schemaErr(ctx, "records", err)
	}
	return out, nil
}

// Lookup implements [evidence.Ledger.Lookup]: a probe of the call's
// attempts by primary key.
func (e *Evidence) Lookup(ctx context.Context, run, callID string) (evidence.Record, bool, error) {
	r, err := scanRecord(e.s.pool.QueryRow(ctx, `SELECT `+recordColumns+` FROM reactguard_records
WHERE run = $1 AND call_id = $2 ORDER BY outcome = $3 DESC, seq DESC LIMIT 1`, []byte(run), []byte(callID), int16(outcome.Success)))
	if errors.Is(err, pgx.ErrNoRows) {
		return evidence.Record{}, false, nil
	}
	if err != nil {
		return evidence.Record{}, false, schemaErr(ctx, "lookup", err)
	}
	return r, true, nil
}

// hasSQL reads what answers whether a run holds a fact: the successes of
// the run (of tool $5 when it is not empty) written without fact hashes,
// and one row of NULLs when a record of schema versions 4 to 6 (salted
// hashes, $2) or of an earlier version (the facts table, $3) holds it.
const hasSQL = `
SELECT tool, payload FROM reactguard_records
WHERE run = $1 AND outcome = $4 AND facts IS NULL AND ($5 = ''::bytea OR tool = $5)
UNION ALL
SELECT NULL, NULL WHERE EXISTS (SELECT 1 FROM reactguard_records WHERE run = $1 AND facts @> ARRAY[$2::bytea])
	OR EXISTS (SELECT 1 FROM reactguard_facts WHERE run = $1 AND h = $3)`

// has reports whether the run holds fact h of tool (empty: of any tool):
// one of its successes has it among its facts ([facts.Of]).
func (e *Evidence) has(ctx context.Context, run, tool string, h []byte) (bool, error) {
	rows, err := e.s.pool.Query(ctx, hasSQL, []byte(run), salted(run, h), h, int16(outcome.Success), []byte(tool))
	if err != nil {
		return false, schemaErr(ctx, "evidence lookup", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rtool, payload []byte
		if err := rows.Scan(&rtool, &payload); err != nil {
			return false, schemaErr(ctx, "evidence lookup", err)
		}
		if rtool == nil { // a record of an earlier version holds it
			return true, nil
		}
		if slices.ContainsFunc(facts.Of(string(rtool), payload), func(f []byte) bool { return bytes.Equal(f, h) }) {
			return true, nil
		}
	}
	if err := rows.Err(); err != nil {
		return false, schemaErr(ctx, "evidence lookup", err)
	}
	return false, nil
}

// HasResult implements [evidence.Ledger.HasResult].
func (e *Evidence) HasResult(ctx context.Context, run, tool string) (bool, error) {
	return e.has(ctx, run, tool, facts.Tool(tool))
}

// HasValue implements [evidence.Ledger.HasValue].
func (e *Evidence) HasValue(ctx context.Context, run, tool, field, value string) (bool, error) {
	if tool == "" {
		return e.has(ctx, run, "", facts.Any(value))
	}
	return e.has(ctx, run, tool, facts.Value(tool, field, value))
}

// Executions implements [evidence.Ledger.Executions]: the fingerprint's
// distinct calls and latest record, among the run's records.
func (e *Evidence) Executions(ctx context.Context, run, fingerprint string) (int, evidence.Record, error) {
	if fingerprint == "" {
		return 0, evidence.Record{}, nil
	}
	var calls int
	r, err := scanRecord(e.s.pool.QueryRow(ctx, `SELECT (SELECT count(DISTINCT call_id) FROM reactguard_records WHERE run = $1 AND fingerprint = $2), `+recordColumns+`
FROM reactguard_records WHERE run = $1 AND fingerprint = $2 ORDER BY seq DESC LIMIT 1`, []byte(run), []byte(fingerprint)), &calls)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, evidence.Record{}, nil
	}
	if err != nil {
		return 0, evidence.Record{}, schemaErr(ctx, "executions", err)
	}
	return calls, r, nil
}

// AddUserText implements [evidence.Ledger.AddUserText]; blank texts are
// ignored, as [evidence.Memory] ignores them.
func (e *Evidence) AddUserText(ctx context.Context, run, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	e.s.prefetched.Delete(run)
	_, err := e.s.pool.Exec(ctx, `
WITH touched AS (
	INSERT INTO reactguard_evidence_runs (run, at) VALUES ($1, $3)
	ON CONFLICT (run) DO UPDATE SET at = EXCLUDED.at
)
INSERT INTO reactguard_user_texts (run, text) VALUES ($1, $2)`, []byte(run), []byte(text), e.s.ts())
	if err != nil {
		return schemaErr(ctx, "add user text", err)
	}
	return nil
}

// UserSaid implements [evidence.Ledger.UserSaid] with [evidence.Said]
// over the run's user texts.
func (e *Evidence) UserSaid(ctx context.Context, run, value string) (bool, error) {
	if strings.TrimSpace(value) == "" {
		return false, nil
	}
	rows, err := e.s.pool.Query(ctx, `SELECT text FROM reactguard_user_texts WHERE run = $1 ORDER BY seq`, []byte(run))
	if err != nil {
		return false, schemaErr(ctx, "user said", err)
	}
	defer rows.Close()
	said := false
	for rows.Next() {
		var text []byte
		if err := rows.Scan(&text); err != nil {
			return false, schemaErr(ctx, "user said", err)
		}
		if !said && evidence.Said(string(text), value) {
			said = true
		}
	}
	if err := rows.Err(); err != nil {
		return false, schemaErr(ctx, "user said", err)
	}
	return said, nil
}

// loadSQL reads a run's records and user texts, in order (kind 0 records,
// kind 1 texts).
const loadSQL = `
SELECT 0::smallint AS kind, seq, ` + recordColumns + ` FROM reactguard_records WHERE run = $1
UNION ALL
SELECT 1::smallint, seq, NULL::bytea, 0, NULL::bytea, NULL::bytea, 0::smallint, 0, text, NULL::bytea, 0,
	NULL::timestamptz, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea, NULL::bytea
FROM reactguard_user_texts WHERE run = $1
ORDER BY kind, seq`

// Load implements [evidence.Loader]: the run's records and user texts, in
// order, in one statement (one round trip, one consistent snapshot). The
// evidence that this Store read with the run's resume claim (see
// [Claims.Claim]), when nothing was written to it since, is returned
// without a statement.
func (e *Evidence) Load(ctx context.Context, run string) (evidence.Snapshot, error) {
	if p, ok := e.s.prefetched.Get(run); ok {
		e.s.prefetched.Delete(run)
		return p.snap, nil
	}
	rows, err := e.s.pool.Query(ctx, loadSQL, []byte(run))
	if err != nil {
		return evidence.Snapshot{}, schemaErr(ctx, "load evidence", err)
	}
	s, err := scanEvidence(rows)
	if err != nil {
		return evidence.Snapshot{}, schemaErr(ctx, "load evidence", err)
	}
	return s, nil
}

// AddUserTextAndLoad implements [evidence.TextLoader]: the text added and
// the run's evidence read in one statement.
func (e *Evidence) AddUserTextAndLoad(ctx context.Context, run, text string) (evidence.Snapshot, error) {
	if strings.TrimSpace(text) == "" {
		return e.Load(ctx, run)
	}
	e.s.prefetched.Delete(run)
	rows, err := e.s.pool.Query(ctx, `
WITH touched AS (
	INSERT INTO reactguard_evidence_runs (run, at) VALUES ($1, $3)
	ON CONFLICT (run) DO UPDATE SET at = EXCLUDED.at
), added AS (
	INSERT INTO reactguard_user_texts (run, text) VALUES ($1, $2)
)`+loadSQL, []byte(run), []byte(text), e.s.ts())
	if err != nil {
		return evidence.Snapshot{}, schemaErr(ctx, "add user text", err)
	}
	s, err := scanEvidence(rows)
	if err != nil {
		return evidence.Snapshot{}, schemaErr(ctx, "add user text", err)
	}
	// The statement's own insert is not in its snapshot: it comes last.
	s.UserTexts = append(s.UserTexts, text)
	return s, nil
}

// scanEvidence reads the rows of loadSQL's columns (kind, seq, the record
// columns) into a snapshot, and closes them.
func scanEvidence(rows pgx.Rows) (evidence.Snapshot, error) {
	return scanRows(rows, nil)
}

// scanRows is scanEvidence, passing the seq and attempt of rows of kind -1
// to head.
func scanRows(rows pgx.Rows, head func(seq int64, attempt int)) (evidence.Snapshot, error) {
	defer rows.Close()
	var s evidence.Snapshot
	for rows.Next() {
		var kind int16
		var seq int64
		r, err := scanRecord(rows, &kind, &seq)
		if err != nil {
			return evidence.Snapshot{}, err
		}
		if kind == -1 {
			if head != nil {
				head(seq, r.Attempt)
			}
			continue
		}
		if kind == 1 {
			s.UserTexts = append(s.UserTexts, string(r.Payload))
			continue
		}
		s.Records = append(s.Records, r)
	}
	return s, rows.Err()
}

// prefetch is the evidence of a run read with its resume claim.
type prefetch struct{ snap evidence.Snapshot }
