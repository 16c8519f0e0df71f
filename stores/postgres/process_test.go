package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/stores/postgres"
)

// appName is the application_name of a child's sessions.
func appName(role string) string { return "reactguard-storetest-" + role }

// openStores opens the child processes' store: the test schema's DSN, with
// the role as application_name.
func openStores(ctx context.Context, dsn, role string) (storetest.Stores, error) {
	dsn = withParam(dsn, "application_name", appName(role))
	if role == storetest.RoleLoad {
		dsn = withParam(dsn, "pool_max_conns", "16")
	}
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		return storetest.Stores{}, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return storetest.Stores{}, err
	}
	return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
		Claims: s.Claims(), Runs: s.Runs(), Audit: s.Audit(), Threads: s.Threads(), Close: s.Close}, nil
}

// processes returns the scenarios' processes on the test schema.
func processes(t testing.TB) storetest.Processes {
	loc := dsn(t)
	return storetest.Processes{Location: loc, Dir: t.TempDir(), Gone: func(ctx context.Context, role string) error {
		return sessionsGone(ctx, loc, appName(role))
	}}
}

// sessionsGone waits until the server has no session with application_name
// name: the sessions of a process that died or closed its store end (and
// free their advisory locks) a moment after the client went away.
func sessionsGone(ctx context.Context, dsn, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sessions of %s still open: %w", name, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Eight processes approve one stored run against one database: one
// executes the write, seven get react.ErrAlreadyResumed.
func TestProcesses_ExactlyOnce(t *testing.T) {
	storetest.ExactlyOnce(t, processes(t), 8)
}

// A process killed by SIGKILL while its approved write runs leaves the
// write uncertain and its claim taken: the next process resumes the same
// run (ResumeRun), takes the claim over and answers WRITE_PENDING_VERIFY;
// the user's answer, with a Verify, reuses the applied result. One
// execution in all; the first snapshot, settled since, is refused.
func TestProcesses_KilledWrite(t *testing.T) {
	storetest.KilledWrite(t, processes(t))
}

// A process killed by SIGKILL after the approval applied and before the
// write: the next process resumes the same run, takes the claim over, and
// the unused approval runs the write once.
func TestProcesses_KilledBeforeWrite(t *testing.T) {
	storetest.KilledBeforeWrite(t, processes(t))
}

// The person's side of approvals, as an attacker tries it (see
// storetest.RunPerson), over one PostgreSQL database.
func TestPerson(t *testing.T) {
	s := open(t, nil)
	storetest.RunPerson(t, func(*testing.T) storetest.Stores {
		return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
			Claims: s.Claims(), Runs: s.Runs(), Audit: s.Audit(), Threads: s.Threads(), Close: func() {}}
	})
}

// A conversation across two processes on one database (see
// storetest.Conversation).
func TestProcesses_Conversation(t *testing.T) {
	storetest.Conversation(t, processes(t))
}
