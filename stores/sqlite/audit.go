package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// Audit is the [runstore.Audit] of a [Store]: the table reactguard_audit,
// one row per decided suspension, unique by run and suspension. Record is
// one INSERT … ON CONFLICT DO NOTHING under SQLite's write lock, so of any
// number of concurrent records of one suspension, in any number of
// processes, exactly one is kept; the others read it back. Rows are never
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
	d.At = d.At.UTC().Truncate(time.Microsecond)
	res, err := a.s.db.ExecContext(ctx, `INSERT INTO reactguard_audit (`+auditColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, suspension) DO NOTHING`,
		blob(d.Run), blob(d.Suspension), int(d.Kind), blob(d.CallID), blob(d.Tool), blob(d.Fingerprint),
		blob(d.Owner.Tenant), blob(d.Owner.User), blob(d.By), d.At.UnixMicro(), blob(d.Reason))
	if err != nil {
		return runstore.Decision{}, false, schemaErr(ctx, "record decision", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return d, true, nil
	}
	kept, ok, err := a.Decided(ctx, d.Run, d.Suspension)
	if err != nil {
		return runstore.Decision{}, false, err
	}
	if !ok {
		return runstore.Decision{}, false, fmt.Errorf("sqlite: record decision: the conflicting decision on suspension %q of run %q is gone", d.Suspension, d.Run)
	}
	return kept, false, nil
}

func scanDecision(row scanner) (runstore.Decision, error) {
	var run, susp, callID, tool, fp, tenant, user, by, reason []byte
	var kind, at int64
	if err := row.Scan(&run, &susp, &kind, &callID, &tool, &fp, &tenant, &user, &by, &at, &reason); err != nil {
		return runstore.Decision{}, err
	}
	return runstore.Decision{
		Run: string(run), Suspension: string(susp), Kind: runstore.DecisionKind(kind), CallID: string(callID),
		Tool: string(tool), Fingerprint: string(fp), Owner: runstore.Owner{Tenant: string(tenant), User: string(user)},
		By: string(by), At: time.UnixMicro(at).UTC(), Reason: string(reason),
	}, nil
}

// Decided implements [runstore.Audit.Decided].
func (a *Audit) Decided(ctx context.Context, run, suspension string) (runstore.Decision, bool, error) {
	d, err := scanDecision(a.s.db.QueryRowContext(ctx, `SELECT `+auditColumns+` FROM reactguard_audit WHERE run = ? AND suspension = ?`,
		blob(run), blob(suspension)))
	if errors.Is(err, sql.ErrNoRows) {
		return runstore.Decision{}, false, nil
	}
	if err != nil {
		return runstore.Decision{}, false, schemaErr(ctx, "read decision", err)
	}
	return d, true, nil
}

// History implements [runstore.Audit.History].
func (a *Audit) History(ctx context.Context, run string) ([]runstore.Decision, error) {
	rows, err := a.s.db.QueryContext(ctx, `SELECT `+auditColumns+` FROM reactguard_audit WHERE run = ? ORDER BY seq`, blob(run))
	if err != nil {
		return nil, schemaErr(ctx, "read decisions", err)
	}
	defer func() { _ = rows.Close() }()
	var ds []runstore.Decision
	for rows.Next() {
		d, err := scanDecision(rows)
		if err != nil {
			return nil, schemaErr(ctx, "read decisions", err)
		}
		ds = append(ds, d)
	}
	if err := rows.Err(); err != nil {
		return nil, schemaErr(ctx, "read decisions", err)
	}
	return ds, nil
}
