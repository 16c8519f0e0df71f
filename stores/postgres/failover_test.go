package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/stores/postgres"
)

// privateProcesses returns the scenarios' processes on a private server of
// the test's own, migrated, with leases of lease for the children.
func privateProcesses(t *testing.T, lease time.Duration) (storetest.Processes, *private) {
	srv := startPrivate(t)
	s, err := postgres.Open(bg, srv.dsn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	s.Close()
	t.Setenv(envLease, lease.String())
	loc := srv.dsn()
	return storetest.Processes{Location: loc, Dir: t.TempDir(), Gone: func(ctx context.Context, _ string) error {
		return claimsReleased(ctx, loc)
	}}, srv
}

// The server is restarted twice, once cleanly and once by a crash
// (immediate mode: it recovers from its WAL), while 2 processes drive 120
// approved writes each, 16 at a time, every run retried as a host would
// through the failures, and each process delivers the approvals of the
// other's runs again and again. Every run finishes, every write executes
// exactly once (counted by the backend), and no snapshot is claimed twice:
// the processes' leases (15 s) outlive the restarts, so nothing is taken
// over.
func TestFailover_RestartUnderLoad(t *testing.T) {
	storetest.SkipShort(t, "a private server restarted under load")
	const procs, runs = 2, 120
	p, srv := privateProcesses(t, postgres.DefaultLease)
	start := time.Now()
	var restarts []string
	reports := storetest.FailoverLoad(t, p, procs, runs, 16, func(applied func() int) {
		for i, mode := range []string{"fast", "immediate"} {
			want := (i + 1) * procs * runs / 3
			for applied() < want {
				time.Sleep(10 * time.Millisecond)
			}
			at := applied()
			srv.restart(mode)
			restarts = append(restarts, mode)
			t.Logf("restart %s after %d writes, %v into the load", mode, at, time.Since(start).Round(time.Millisecond))
		}
	})
	var steps, approvals, reruns, dups int
	for _, r := range reports {
		steps, approvals, reruns, dups = steps+r.Steps, approvals+r.Approvals, reruns+r.Reruns, dups+r.Duplicates
	}
	if len(restarts) != 2 {
		t.Fatalf("restarts %v; want two during the load", restarts)
	}
	t.Logf("%d approved writes from %d processes through %d restarts in %v: %d retries, %d stops approved, %d runs started again, %d resumes of the other process's runs accepted",
		procs*runs, procs, len(restarts), time.Since(start).Round(time.Millisecond), steps, approvals, reruns, dups)
}

// A process's sessions are terminated (pg_terminate_backend, as a restart
// or a failover does) again and again while it is inside an approved
// write, for three times its lease: every other process finds the
// snapshot claimed and the write in flight, and the write runs once.
func TestFailover_TerminatedMidWrite(t *testing.T) {
	storetest.SkipShort(t, "sessions ended on a private server mid-write")
	const lease = 2 * time.Second
	p, srv := privateProcesses(t, lease)
	storetest.TerminatedMidWrite(t, p, func(role string) int { return srv.terminate(appName(role)) }, lease)
}
