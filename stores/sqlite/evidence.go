package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/internal/facts"
	"github.com/reactguard/reactguard/outcome"
)

// Evidence is the [evidence.Ledger] of a [Store]. It mirrors the indexes
// of [evidence.Memory] in tables, so every lookup is one primary-key probe
// whatever the number of records: Append writes, in one transaction, the
// record and, for a success, one row per indexed fact (the tool, each
// (tool, path, text) leaf, each text and word at any path; see
// [evidence.Walk] and [evidence.Words]) and the fingerprint's count of
// distinct calls. UserSaid reads the run's user texts (its cost grows with
// what the user said, as the contract allows) and matches them with
// [evidence.Said].
//
// Evidence does not implement [evidence.Exporter]: its state outlives the
// process, so a snapshot of a run that uses it carries no evidence. It is
// an [evidence.Loader], so the loop's [evidence.Cache] reads a run's
// evidence with one query per Run or Resume.
type Evidence struct{ s *Store }

var (
	_ evidence.Ledger = (*Evidence)(nil)
	_ evidence.Loader = (*Evidence)(nil)
)

// maxFactsPerInsert bounds the rows of one INSERT (two parameters a row,
// far below SQLite's limit of 32766).
const maxFactsPerInsert = 500

// Append implements [evidence.Ledger.Append] in one transaction.
func (e *Evidence) Append(ctx context.Context, run string, r evidence.Record) error {
	if err := evidence.Check(r); err != nil {
		return err
	}
	var fs [][]byte
	if r.Outcome == outcome.Success {
		fs = facts.Of(r.Tool, r.Payload)
	}
	p := r.Provenance.Clean()
	err := e.s.tx(ctx, func(tx *sql.Tx) error {
		now := e.s.ts()
		if _, err := tx.ExecContext(ctx, `INSERT INTO reactguard_evidence_runs (run, at) VALUES (?, ?) ON CONFLICT (run) DO UPDATE SET at = excluded.at`,
			blob(run), now); err != nil {
			return err
		}
		var seq int64
		err := tx.QueryRowContext(ctx, `
INSERT INTO reactguard_records (run, call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round,
	fetched_us, source, object_id, version, voucher, idempotency_key)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run, call_id, attempt) DO NOTHING
RETURNING seq`, blob(run), blob(r.CallID), r.Attempt, blob(r.Tool), blob(r.Fingerprint), int(r.Outcome), int(r.Code),
			nullBytes(r.Payload), blob(r.PayloadRef), r.Round,
			fetchedMicros(p), nullText(p.Source), nullText(p.ObjectID), nullText(p.Version), nullText(p.Voucher), nullText(p.IdempotencyKey)).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // the same (call, attempt) is held: keep the first
		}
		if err != nil {
			return err
		}
		for len(fs) > 0 {
			n := min(len(fs), maxFactsPerInsert)
			q := "INSERT INTO reactguard_facts (run, h) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?), ", n), ", ") + " ON CONFLICT DO NOTHING"
			args := make([]any, 0, 2*n)
			for _, h := range fs[:n] {
				args = append(args, blob(run), h)
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
			fs = fs[n:]
		}
		if r.Fingerprint == "" {
			return nil
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO reactguard_print_calls (run, fingerprint, call_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
			blob(run), blob(r.Fingerprint), blob(r.CallID))
		if err != nil {
			return err
		}
		added, err := res.RowsAffected()
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
INSERT INTO reactguard_prints (run, fingerprint, calls, last_seq) VALUES (?, ?, ?, ?)
ON CONFLICT (run, fingerprint) DO UPDATE SET calls = calls + excluded.calls, last_seq = max(last_seq, excluded.last_seq)`,
			blob(run), blob(r.Fingerprint), added, seq)
		return err
	})
	if err != nil {
		return schemaErr(ctx, "append evidence", err)
	}
	return nil
}

const recordColumns = `call_id, attempt, tool, fingerprint, outcome, code, payload, payload_ref, round, fetched_us, source, object_id, version, voucher, idempotency_key`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(row scanner, extra ...any) (evidence.Record, error) {
	var callID, tool, fp, payload, ref []byte
	var oc, code int64
	var fetched sql.NullInt64
	var source, objectID, version, voucher, idemKey []byte
	var r evidence.Record
	dest := make([]any, 0, len(extra)+15)
	dest = append(dest, extra...)
	dest = append(dest, &callID, &r.Attempt, &tool, &fp, &oc, &code, &payload, &ref, &r.Round,
		&fetched, &source, &objectID, &version, &voucher, &idemKey)
	if err := row.Scan(dest...); err != nil {
		return evidence.Record{}, err
	}
	r.CallID, r.Tool, r.Fingerprint, r.PayloadRef = string(callID), string(tool), string(fp), string(ref)
	r.Outcome, r.Code, r.Payload = outcome.Outcome(oc), errcode.Code(code), payload
	r.Provenance = evidence.Provenance{Source: string(source), ObjectID: string(objectID), Version: string(version), Voucher: string(voucher), IdempotencyKey: string(idemKey)}
	if fetched.Valid {
		r.Provenance.FetchedAt = time.UnixMicro(fetched.Int64).UTC()
	}
	return r, nil
}

// fetchedMicros is p's fetch time in Unix microseconds, NULL when unknown.
func fetchedMicros(p evidence.Provenance) any {
	if p.FetchedAt.IsZero() {
		return nil
	}
	return p.FetchedAt.UnixMicro()
}

// nullText is s as a BLOB, NULL when empty.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// Records implements [evidence.Ledger.Records].
func (e *Evidence) Records(ctx context.Context, run string) ([]evidence.Record, error) {
	rows, err := e.s.db.QueryContext(ctx, `SELECT `+recordColumns+` FROM reactguard_records WHERE run = ? ORDER BY seq`, blob(run))
	if err != nil {
		return nil, schemaErr(ctx, "records", err)
	}
	defer func() { _ = rows.Close() }()
	var out []evidence.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, schemaErr(ctx, "records", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, schemaErr(ctx, "records", err)
	}
	return out, nil
}

// Lookup implements [evidence.Ledger.Lookup]: a probe of the call's
// attempts by their unique index.
func (e *Evidence) Lookup(ctx context.Context, run, callID string) (evidence.Record, bool, error) {
	r, err := scanRecord(e.s.db.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM reactguard_records
WHERE run = ? AND call_id = ? ORDER BY outcome = ? DESC, seq DESC LIMIT 1`, blob(run), blob(callID), int(outcome.Success)))
	if errors.Is(err, sql.ErrNoRows) {
		return evidence.Record{}, false, nil
	}
	if err != nil {
		return evidence.Record{}, false, schemaErr(ctx, "lookup", err)
	}
	return r, true, nil
}

func (e *Evidence) has(ctx context.Context, run string, h []byte) (bool, error) {
	var ok bool
	err := e.s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM reactguard_facts WHERE run = ? AND h = ?)`, blob(run), h).Scan(&ok)
	if err != nil {
		return false, schemaErr(ctx, "evidence lookup", err)
	}
	return ok, nil
}

// HasResult implements [evidence.Ledger.HasResult].
func (e *Evidence) HasResult(ctx context.Context, run, tool string) (bool, error) {
	return e.has(ctx, run, facts.Tool(tool))
}

// HasValue implements [evidence.Ledger.HasValue].
func (e *Evidence) HasValue(ctx context.Context, run, tool, field, value string) (bool, error) {
	if tool == "" {
		return e.has(ctx, run, facts.Any(value))
	}
	return e.has(ctx, run, facts.Value(tool, field, value))
}

// Executions implements [evidence.Ledger.Executions]: the fingerprint's
// count and latest record, by primary key.
func (e *Evidence) Executions(ctx context.Context, run, fingerprint string) (int, evidence.Record, error) {
	if fingerprint == "" {
		return 0, evidence.Record{}, nil
	}
	var calls int
	r, err := scanRecord(e.s.db.QueryRowContext(ctx, `SELECT p.calls, r.call_id, r.attempt, r.tool, r.fingerprint, r.outcome, r.code, r.payload, r.payload_ref, r.round,
	r.fetched_us, r.source, r.object_id, r.version, r.voucher, r.idempotency_key
FROM reactguard_prints p JOIN reactguard_records r ON r.seq = p.last_seq
WHERE p.run = ? AND p.fingerprint = ?`, blob(run), blob(fingerprint)), &calls)
	if errors.Is(err, sql.ErrNoRows) {
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
	err := e.s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO reactguard_evidence_runs (run, at) VALUES (?, ?) ON CONFLICT (run) DO UPDATE SET at = excluded.at`,
			blob(run), e.s.ts()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO reactguard_user_texts (run, text) VALUES (?, ?)`, blob(run), blob(text))
		return err
	})
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
	rows, err := e.s.db.QueryContext(ctx, `SELECT text FROM reactguard_user_texts WHERE run = ? ORDER BY seq`, blob(run))
	if err != nil {
		return false, schemaErr(ctx, "user said", err)
	}
	defer func() { _ = rows.Close() }()
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

// Load implements [evidence.Loader]: the run's records and user texts, in
// order, with one query (one statement reads one consistent state).
func (e *Evidence) Load(ctx context.Context, run string) (evidence.Snapshot, error) {
	rows, err := e.s.db.QueryContext(ctx, `
SELECT 0, seq, `+recordColumns+` FROM reactguard_records WHERE run = ?1
UNION ALL
SELECT 1, seq, NULL, 0, NULL, NULL, 0, 0, text, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL FROM reactguard_user_texts WHERE run = ?1
ORDER BY 1, 2`, blob(run))
	if err != nil {
		return evidence.Snapshot{}, schemaErr(ctx, "load evidence", err)
	}
	defer func() { _ = rows.Close() }()
	var s evidence.Snapshot
	for rows.Next() {
		var kind, seq int64
		r, err := scanRecord(rows, &kind, &seq)
		if err != nil {
			return evidence.Snapshot{}, schemaErr(ctx, "load evidence", err)
		}
		if kind == 1 {
			s.UserTexts = append(s.UserTexts, string(r.Payload))
			continue
		}
		s.Records = append(s.Records, r)
	}
	if err := rows.Err(); err != nil {
		return evidence.Snapshot{}, schemaErr(ctx, "load evidence", err)
	}
	return s, nil
}
