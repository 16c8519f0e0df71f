package storetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// CrashPoints is the crash-point harness. A child runs the story (Run: a
// read, a write deferred for approval, the approval; ResumeRun with
// Approve: the approved write, the end) through instrumented stores, once
// to the end to list its store calls, then once per boundary of each call
// — before it reaches the store, and once the store answered — killing
// itself with SIGKILL there. After each kill, a recovering child brings
// the run to its end as a host would (resuming what the run store holds,
// approving again when asked, running the request again when the run never
// stopped), and the harness checks: the write executed exactly once
// (counted by the backend, outside the stores), the run finished (no
// approval lost, nothing stuck), and no snapshot was claimed by two
// processes that lived (the killed child's claim may be taken over). It
// returns the number of crash points covered.
func CrashPoints(t *testing.T, p Processes) int {
	stamp := time.Now().Format("150405.000000")
	dry := "crash-dry-" + stamp
	out := p.Run(t, RoleCrash, dry)
	if !strings.HasPrefix(out, "calls ") {
		t.Fatalf("the story to its end answered %q; want its calls", out)
	}
	ops := strings.Split(strings.TrimPrefix(out, "calls "), ",")
	if n := p.executionsOf(t, CrashKey(dry)); n != 1 {
		t.Fatalf("the story without a crash ran the write %d times; want 1", n)
	}
	t.Logf("the story makes %d store calls: %s", len(ops), strings.Join(ops, " "))
	points := 0
	for i, op := range ops {
		for _, after := range []bool{false, true} {
			at := "before"
			if after {
				at = "after"
			}
			t.Run(fmt.Sprintf("%02d_%s_%s", i+1, at, op), func(t *testing.T) {
				run := fmt.Sprintf("crash-%s-%d-%s", stamp, i+1, at)
				pid := p.crash(t, run, i+1, after)
				answer := p.Run(t, RoleRecover, run)
				if !strings.HasPrefix(answer, "recovered ") {
					t.Fatalf("recovering after a kill %s call %d (%s) answered %q; want recovered", at, i+1, op, answer)
				}
				if n := p.executionsOf(t, CrashKey(run)); n != 1 {
					t.Fatalf("after a kill %s call %d (%s) and the recovery, the write ran %d times; want exactly 1", at, i+1, op, n)
				}
				p.claimedOnce(t, run, pid)
				t.Logf("kill %s %s: %s", at, op, answer)
			})
			points++
		}
	}
	return points
}

// crash runs a crash child for run that kills itself at call at (after
// the store answered when after), waits until the store sees it gone, and
// returns its pid.
func (p Processes) crash(t *testing.T, run string, at int, after bool) int {
	t.Helper()
	flag := "0"
	if after {
		flag = "1"
	}
	cmd := p.child(t, RoleCrash, run, EnvCrashAt+"="+strconv.Itoa(at), EnvCrashAfter+"="+flag)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the crash child at call %d answered %q, %v; want it killed (the story's calls changed?)", at, out, err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the crash child at call %d ended with %v, output %q; want SIGKILL", at, err, out)
	}
	if p.Gone != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Gone(ctx, RoleCrash); err != nil {
			t.Fatal(err)
		}
	}
	return cmd.Process.Pid
}

// executionsOf returns how many times the backend applied key.
func (p Processes) executionsOf(t testing.TB, key string) int {
	t.Helper()
	keys, err := Executions(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if k == key {
			n++
		}
	}
	return n
}

// claimedOnce fails t when a snapshot of run was claimed by two processes
// other than dead (the killed child, whose claim may be taken over).
func (p Processes) claimedOnce(t testing.TB, run string, dead int) {
	t.Helper()
	claims, err := Claims(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]map[int]int{}
	for _, c := range claims {
		if c.Run != run || c.PID == dead {
			continue
		}
		if by[c.ID] == nil {
			by[c.ID] = map[int]int{}
		}
		by[c.ID][c.PID]++
	}
	for id, pids := range by {
		n := 0
		for _, k := range pids {
			n += k
		}
		if n > 1 {
			t.Fatalf("snapshot %s of run %s was claimed %d times by living processes (%v); want at most once", id, run, n, pids)
		}
	}
}

// FailoverLoad starts procs processes that each drive runs runs, at most
// concurrency of them at once, each to its end whatever the store does
// meanwhile, retrying as a host would, while each process also delivers
// the approvals of the others' runs again and again (a retried request
// landing on another replica); disrupt runs meanwhile (it restarts
// the server, say) and is told how many writes the backend applied so far.
// It checks that every run finished, every write executed exactly once
// (counted by the backend, outside the stores: no approval lost, none
// duplicated) and that no snapshot was claimed twice, and returns the
// children's reports.
func FailoverLoad(t *testing.T, p Processes, procs, runs, concurrency int, disrupt func(applied func() int)) []FailoverReport {
	t.Helper()
	prefix := "failover-" + time.Now().Format("150405.000000")
	reports := make([]FailoverReport, procs)
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for i := range procs {
		var peers []string
		for j := range procs {
			if j != i {
				peers = append(peers, fmt.Sprintf("%s-p%d", prefix, j))
			}
		}
		cmd := p.child(t, RoleFailover, fmt.Sprintf("%s-p%d", prefix, i),
			EnvRuns+"="+strconv.Itoa(runs), EnvConcurrency+"="+strconv.Itoa(concurrency), EnvDeadline+"=3m",
			EnvPeers+"="+strings.Join(peers, ","))
		wg.Go(func() {
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("failover child %d: %w; output %.500s", i, err, out)
				return
			}
			if err := json.Unmarshal(out, &reports[i]); err != nil {
				errs <- fmt.Errorf("failover child %d: %w; output %.500s", i, err, out)
			}
		})
	}
	applied := func() int {
		keys, _ := Executions(p.Dir)
		return len(keys)
	}
	done := make(chan struct{})
	go func() { defer close(done); disrupt(applied) }()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, r := range reports {
		if len(r.Failed) > 0 || r.Finished != runs {
			t.Fatalf("failover child %d: %d of %d runs finished; %d failed, first: %.3000s", i, r.Finished, runs, len(r.Failed), first(r.Failed))
		}
	}
	keys, err := Executions(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, k := range keys {
		seen[k]++
	}
	for i := range procs {
		for j := range runs {
			run := fmt.Sprintf("%s-p%d-%d", prefix, i, j+1)
			if n := seen[CrashKey(run)]; n != 1 {
				t.Fatalf("the write of run %s ran %d times; want exactly 1", run, n)
			}
		}
	}
	claims, err := Claims(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	twice := map[[2]string]int{}
	for _, c := range claims {
		twice[[2]string{c.Run, c.ID}]++
	}
	for k, n := range twice {
		if n > 1 {
			t.Fatalf("snapshot %s of run %s was claimed %d times; want once", k[1], k[0], n)
		}
	}
	return reports
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// EnvConcurrency bounds how many runs a failover load child drives at once.
const EnvConcurrency = "REACTGUARD_STORETEST_CONCURRENCY"

// TerminatedMidWrite suspends a run, approves it in a process A whose
// write applies and then waits, and meanwhile ends A's database sessions
// with terminate (as a server restart or a failover does) more than once,
// for longer than A's lease. Throughout, every other process finds the
// snapshot claimed and the write in flight: nothing runs it a second time.
// Once released, A records the result and the run finishes; the write ran
// once.
func TerminatedMidWrite(t *testing.T, p Processes, terminate func(role string) int, lease time.Duration) {
	run := "terminated-" + time.Now().Format("150405.000000")
	p.expect(t, RoleSuspend, run, "suspended", "suspending the run")
	cmd := p.child(t, RoleResumeHold, run)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewReader(stdout)
	if line, err := ReadLine(lines, time.Minute); err != nil || line != "applied" {
		t.Fatalf("the holding child said %q, %v; want applied", line, err)
	}
	end := time.Now().Add(3 * lease)
	terminated := 0
	for time.Now().Before(end) {
		terminated += terminate(RoleResumeHold)
		p.expect(t, RoleResume, run, "already-resumed", "approving the run while its holder's sessions are being ended")
		if got := p.Run(t, RoleRerun, run); got != "create_site DEFERRED WRITE_IN_FLIGHT" {
			t.Fatalf("another process reaching the write while its holder's sessions are being ended answered %q; want DEFERRED WRITE_IN_FLIGHT", got)
		}
	}
	if terminated == 0 {
		t.Fatal("no session of the holder was terminated")
	}
	if err := os.WriteFile(filepath.Join(p.Dir, run+".release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	line, err := ReadLine(lines, time.Minute)
	if err != nil || line != "finished create_site SUCCESS -" {
		t.Fatalf("the holder, released, answered %q, %v; want finished create_site SUCCESS -", line, err)
	}
	var rest bytes.Buffer
	_, _ = rest.ReadFrom(lines)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the holder: %v (%s)", err, rest.String())
	}
	if n := p.executions(t); n != 1 {
		t.Fatalf("create_site ran %d times; want 1", n)
	}
	if got := p.Run(t, RoleResume, run); !strings.Contains(got, "no stopped run") {
		t.Fatalf("approving the finished run again answered %q; want no stopped run", got)
	}
	t.Logf("%d sessions of the holder terminated over %v", terminated, 3*lease)
}
