package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/runstore"
)

// Audit is the [runstore.Audit] of a [Store]: the table reactguard_audit,
// one row per decided suspension, keyed by run and suspension. Record is
// one INSERT … ON CONFLICT DO NOTHING, so of any number of concurrent
// records of one suspension, in any number of processes, exactly one is
// kept; the others read it back with a second statement. Rows are never
// updated, and neither [Store.Prune] nor anything else in this package
// deletes them: delete them in SQL when a retention or erasure rule says
// so.
type Audit struct{ s *Store }

var _ runstore.Audit = (*Audit)(nil)

// Audit returns the store's [runstore.Audit].
func (s *Store) Audit() *Audit { return &Audit{s: s} }

const auditColumns = `run, suspension, kind, call_id, tool, fingerprint, tenant, user_id, decided_by, at, reason`

// Record implements [runstore.Audit.Record].
func (a *Audit) Record(ctx context.Context, d runstore.Decision) (runstore.Decision, bool, error) {
	if err := runstore.CheckDecision(d); err != nil {
		return runstore.Decision{}, false, err
	}
	d.At = micro(d.At)
	tag, err := a.s.pool.Exec(ctx, `INSERT INTO reactguard_audit (`+auditColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (run, suspension) DO NOTHING`,
		[]byte(d.Run), []byte(d.Suspension), int16(d.Kind), []byte(d.CallID), []byte(d.Tool), []byte(d.Fingerprint),
		[]byte(d.Owner.Tenant), []byte(d.Owner.User), []byte(d.By), d.At, []byte(d.Reason))
	if err != nil {
		return runstore.Decision{}, false, schemaErr(ctx, "record decision", err)
	}
	if tag.RowsAffected() == 1 {
		return d, true, nil
	}
	kept, ok, err := a.Decided(ctx, d.Run, d.Suspension)
	if err != nil {
		return runstore.Decision{}, false, err
	}
	if !ok {
		return runstore.Decision{}, false, fmt.Errorf("postgres: record decision: the conflicting decision on suspension %q of run %q is gone", d.Suspension, d.Run)
	}
	return kept, false, nil
}

func scanDecision(row pgx.Row) (runstore.Decision, error) {
	var run, susp, callID, tool, fp, tenant, user, by, reason []byte
	var kind int16
	var at time.Time
	if err := row.Scan(&run, &susp, &kind, &callID, &tool, &fp, &tenant, &user, &by, &at, &reason); err != nil {
		return runstore.Decision{}, err
	}
	return runstore.Decision{
		Run: string(run), Suspension: string(susp), Kind: runstore.DecisionKind(kind), CallID: string(callID),
		Tool: string(tool), Fingerprint: string(fp), Owner: runstore.Owner{Tenant: string(tenant), User: string(user)},
		By: string(by), At: at.UTC(), Reason: string(reason),
	}, nil
}

// Decided implements [runstore.Audit.Decided].
func (a *Audit) Decided(ctx context.Context, run, suspension string) (runstore.Decision, bool, error) {
	d, err := scanDecision(a.s.pool.QueryRow(ctx, `SELECT `+auditColumns+` FROM reactguard_audit WHERE run = $1 AND suspension = $2`,
		[]byte(run), []byte(suspension)))
	if errors.Is(err, pgx.ErrNoRows) {
		return runstore.Decision{}, false, nil
	}
	if err != nil {
		return runstore.Decision{}, false, schemaErr(ctx, "read decision", err)
	}
	return d, true, nil
}

// History implements [runstore.Audit.History].
func (a *Audit) History(ctx context.Context, run string) ([]runstore.Decision, error) {
	rows, err := a.s.pool.Query(ctx, `SELECT `+auditColumns+` FROM reactguard_audit WHERE run = $1 ORDER BY seq`, []byte(run))
	if err != nil {
		return nil, schemaErr(ctx, "read decisions", err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (runstore.Decision, error) { return scanDecision(row) })
	if err != nil {
		return nil, schemaErr(ctx, "read decisions", err)
	}
	return ds, nil
}
