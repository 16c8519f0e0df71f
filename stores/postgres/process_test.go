package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/stores/postgres"
)

// appName is the application_name of a child's sessions.
func appName(role string) string { return "reactguard-storetest-" + role }

// envLease is the lease of the children's stores (a duration): short, so
// that the claims of a child killed on purpose are taken over soon.
const envLease = "REACTGUARD_POSTGRES_TEST_LEASE"

// childLease is the lease the scenarios give their children: short, and
// long enough that a child's renewals (every third of it) are not starved
// on a loaded 2-core machine under -race (at 1 s, one run in eight of
// KilledWrite lost a live child's lease there).
const childLease = 2 * time.Second

// openStores opens the child processes' store: the test schema's DSN, with
// the role as application_name, and the lease of envLease.
func openStores(ctx context.Context, dsn, role string) (storetest.Stores, error) {
	dsn = withParam(dsn, "application_name", appName(role))
	if role == storetest.RoleLoad {
		dsn = withParam(dsn, "pool_max_conns", "16")
	}
	var opts postgres.Options
	if v := os.Getenv(envLease); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return storetest.Stores{}, fmt.Errorf("%s: %w", envLease, err)
		}
		opts.Lease = d
	}
	s, err := postgres.Open(ctx, dsn, &opts)
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

// processes returns the scenarios' processes on the test schema, with
// leases of childLease.
func processes(t testing.TB) storetest.Processes {
	loc := dsn(t)
	t.Setenv(envLease, childLease.String())
	return storetest.Processes{Location: loc, Dir: t.TempDir(), Gone: func(ctx context.Context, _ string) error {
		return claimsReleased(ctx, loc)
	}}
}

// claimsReleased waits until no live lease holds a running write, an
// unsettled resume claim or a thread: the lease of a child killed on
// purpose expires a lease after its last renewal, and then its claims (and
// threads) may be taken over.
func claimsReleased(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM reactguard_leases l WHERE l.expires > now() AND (
	EXISTS (SELECT 1 FROM reactguard_writes w WHERE w.owner = l.owner AND w.state = 1) OR
	EXISTS (SELECT 1 FROM reactguard_claims c WHERE c.owner = l.owner AND NOT c.settled) OR
	EXISTS (SELECT 1 FROM reactguard_threads th WHERE th.holder = l.owner))`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d live leases still hold claims: %w", n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Eight processes approve one stored run against one database: one
// executes the write, seven get react.ErrAlreadyResumed.
func TestProcesses_ExactlyOnce(t *testing.T) {
	storetest.ExactlyOnce(t, processes(t), 8)
}

// A task stopped in its step 2 for the approval of a write in one
// process, approved by four processes at once: one resumes it (step 2's
// input from step 1 read from the store), the write runs once and the task
// ends met; the others get react.ErrAlreadyResumed.
func TestProcesses_Task(t *testing.T) {
	storetest.TaskAcrossProcesses(t, processes(t), 4)
}

// A process killed by SIGKILL while its approved write runs leaves the
// write uncertain and its claim taken: the next process resumes the same
// run (ResumeRun), takes the claim over and answers WRITE_PENDING_VERIFY;
// the user's answer, with a Verify, reuses the applied result. One
// execution in all; the first snapshot, settled since, is refused.
func TestProcesses_KilledWrite(t *testing.T) {
	storetest.SkipShort(t, "a killed child's lease waited out")
	storetest.KilledWrite(t, processes(t))
}

// A process killed by SIGKILL after the approval applied and before the
// write: the next process resumes the same run, takes the claim over, and
// the unused approval runs the write once.
func TestProcesses_KilledBeforeWrite(t *testing.T) {
	storetest.SkipShort(t, "a killed child's lease waited out")
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
	storetest.SkipShort(t, "a killed child's lease waited out")
	storetest.Conversation(t, processes(t))
}

// The crash-point harness: a process killed with SIGKILL before and after
// each store call of Run, ResumeRun and the approved write, then the run
// brought to its end by another process (once the killed process's lease
// expired): one execution, the run finished, no snapshot claimed twice by
// living processes.
func TestCrashPoints(t *testing.T) {
	storetest.SkipShort(t, "a process killed at every crash point")
	n := storetest.CrashPoints(t, processes(t))
	t.Logf("crash points covered: %d", n)
}
