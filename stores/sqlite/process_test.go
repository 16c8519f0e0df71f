package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/stores/sqlite"
)

// openStores opens the child processes' store on the file path.
func openStores(ctx context.Context, path, _ string) (storetest.Stores, error) {
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return storetest.Stores{}, err
	}
	if err := s.Migrate(ctx); err != nil {
		_ = s.Close()
		return storetest.Stores{}, err
	}
	return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
		Claims: s.Claims(), Runs: s.Runs(), Audit: s.Audit(), Threads: s.Threads(), Close: func() { _ = s.Close() }}, nil
}

// processes returns the scenarios' processes on a new file: the first
// children create and migrate it, several at once.
func processes(t testing.TB) storetest.Processes {
	dir := t.TempDir()
	return storetest.Processes{Location: filepath.Join(dir, "state.db"), Dir: dir}
}

// Eight processes approve one snapshot against one file: one executes the
// write, seven get react.ErrAlreadyResumed.
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
	storetest.KilledWrite(t, processes(t))
}

// A process killed by SIGKILL after the approval applied and before the
// write: the next process resumes the same run, takes the claim over, and
// the unused approval runs the write once.
func TestProcesses_KilledBeforeWrite(t *testing.T) {
	storetest.KilledBeforeWrite(t, processes(t))
}

// The person's side of approvals, as an attacker tries it (see
// storetest.RunPerson), over one SQLite file.
func TestPerson(t *testing.T) {
	s := open(t, nil)
	storetest.RunPerson(t, func(*testing.T) storetest.Stores {
		return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
			Claims: s.Claims(), Runs: s.Runs(), Audit: s.Audit(), Threads: s.Threads(), Close: func() {}}
	})
}

// A conversation across two processes on one SQLite file (see
// storetest.Conversation): the order id of message 1 is a user-given
// source in message 3 in the other process, an invented one is refused,
// the refund approved in message 2 runs once, messages to a busy thread
// are refused, and a process killed while it answers leaves the thread to
// the next message.
func TestProcesses_Conversation(t *testing.T) {
	storetest.Conversation(t, processes(t))
}

// The crash-point harness: a process killed with SIGKILL before and after
// each store call of Run, ResumeRun and the approved write, then the run
// brought to its end by another process: one execution, the run finished,
// no snapshot claimed twice by living processes.
func TestCrashPoints(t *testing.T) {
	storetest.SkipShort(t, "a process killed at every crash point")
	n := storetest.CrashPoints(t, processes(t))
	t.Logf("crash points covered: %d", n)
}
