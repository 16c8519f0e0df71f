package storetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Processes starts children of the test binary against one store.
type Processes struct {
	// Location is the store's DSN or file, passed to every child.
	Location string
	// Dir holds the backend's log (a temporary directory of the test).
	Dir string
	// Gone, when set, waits until the store no longer sees the sessions of
	// the children of role (a killed child's database session may outlive
	// the process for a moment); nil means nothing to wait for.
	Gone func(ctx context.Context, role string) error
}

// child returns the command of a child in role for run, extra
// environment added.
func (p Processes) child(t testing.TB, role, run string, env ...string) *exec.Cmd {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$") // the child role runs from TestMain
	cmd.Env = append(os.Environ(), EnvRole+"="+role, EnvLocation+"="+p.Location, EnvDir+"="+p.Dir, EnvRun+"="+run)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// Run runs a child to its end and returns its answer line.
func (p Processes) Run(t testing.TB, role, run string, env ...string) string {
	t.Helper()
	out, err := p.child(t, role, run, env...).Output()
	answer := strings.TrimSpace(string(out))
	if err != nil && !strings.HasPrefix(answer, "error ") {
		t.Fatalf("child %s of run %s: %v; output %q", role, run, err, answer)
	}
	return answer
}

// executions returns how many times create_site ran, across processes.
func (p Processes) executions(t testing.TB) int {
	t.Helper()
	keys, err := Executions(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// ExactlyOnce suspends a run for approval in one process, then starts
// procs processes at once that each approve the same snapshot (Resume of
// its bytes, as a host that stored them passes them): exactly one resumes
// it and executes the write once, every other one gets
// react.ErrAlreadyResumed and executes nothing. A later approval through
// the run store (ResumeRun) finds no stopped run: it finished.
func ExactlyOnce(t *testing.T, p Processes, procs int) {
	run := "exactly-once-" + time.Now().Format("150405.000000")
	if got := p.Run(t, RoleSuspend, run); got != "suspended" {
		t.Fatalf("suspending child answered %q; want suspended", got)
	}
	answers := p.atOnce(t, RoleApprove, run, procs)
	want := append([]string{}, slices.Repeat([]string{"already-resumed"}, procs-1)...)
	want = append(want, "finished create_site SUCCESS -")
	if !slices.Equal(answers, want) {
		t.Fatalf("%d processes approving one run answered %q; want one finished and %d already-resumed", procs, answers, procs-1)
	}
	if n := p.executions(t); n != 1 {
		t.Fatalf("create_site ran %d times across %d processes; want exactly 1", n, procs)
	}
	if got := p.Run(t, RoleResume, run); !strings.Contains(got, "no stopped run") {
		t.Fatalf("approving the finished run again answered %q; want no stopped run (the run store forgot it)", got)
	}
}

// start starts a child in role for run that says want on its first line
// and then blocks, and returns it with a kill function (also registered
// as a cleanup).
func (p Processes) start(t *testing.T, role, run, want string) (kill func()) {
	t.Helper()
	cmd := p.child(t, role, run)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill = func() {
		if killed {
			return
		}
		killed = true
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Error(err)
		}
		_ = cmd.Wait()
		if p.Gone != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := p.Gone(ctx, role); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(kill)
	line, err := ReadLine(bufio.NewReader(stdout), time.Minute)
	if err != nil || line != want {
		t.Fatalf("child %s said %q, %v; want %s", role, line, err, want)
	}
	return kill
}

// expect runs a child in role and fails t unless it answers want.
func (p Processes) expect(t *testing.T, role, run, want, why string, env ...string) {
	t.Helper()
	if got := p.Run(t, role, run, env...); got != want {
		t.Fatalf("%s: child %s answered %q; want %q", why, role, got, want)
	}
}

// KilledWrite suspends a run, approves it (ResumeRun) in a process whose
// create_site applies the write and then never returns, and checks that
// meanwhile every other process finds the snapshot claimed and the write
// in flight. It kills that process with SIGKILL and approves the SAME run
// again through ResumeRun in the next process: that process takes the
// dead resume's claim over, applies the approval again (granting nothing
// new) and finds the write uncertain (WRITE_PENDING_VERIFY), so the run
// asks the user and suspends again, settling its claim. The first
// snapshot, settled by a process that has ended since, is refused
// (already resumed): a settled claim is never taken over. The user's
// answer, resumed with a Verify, reuses the applied result, and the run
// finishes: the write ran once in all.
func KilledWrite(t *testing.T, p Processes) {
	run := "killed-" + time.Now().Format("150405.000000")
	p.expect(t, RoleSuspend, run, "suspended", "suspending the run")
	kill := p.start(t, RoleResumeBlock, run, "applied")

	// While the owner lives, its snapshot is claimed and its write is in
	// flight for everyone else.
	p.expect(t, RoleResume, run, "already-resumed", "approving the stored run while its resume runs")
	p.expect(t, RoleApprove, run, "already-resumed", "approving the snapshot while its resume runs")
	if got := p.Run(t, RoleRerun, run); got != "create_site DEFERRED WRITE_IN_FLIGHT" {
		t.Fatalf("another process reaching the write while its owner runs answered %q; want DEFERRED WRITE_IN_FLIGHT", got)
	}

	kill()
	p.expect(t, RoleResume, run, "suspended create_site DEFERRED WRITE_PENDING_VERIFY",
		"approving the same run after its resume was killed inside the write (takeover, the write uncertain)")
	p.expect(t, RoleApprove, run, "already-resumed",
		"approving the first snapshot again, whose takeover settled and whose process has ended")
	p.expect(t, RoleAnswer, run, "finished create_site SUCCESS -",
		"answering the run's question with a Verify (the applied result reused)", EnvVerify+"=1")
	if got := p.Run(t, RoleResume, run); !strings.Contains(got, "no stopped run") {
		t.Fatalf("approving the finished run again answered %q; want no stopped run", got)
	}
	if n := p.executions(t); n != 1 {
		t.Fatalf("create_site ran %d times; want 1 (applied by the killed process, then verified and reused)", n)
	}
}

// KilledBeforeWrite suspends a run, approves it (ResumeRun) in a process
// that is killed with SIGKILL after the approval applied and before it
// called the write, and approves the SAME run again in the next process:
// that process takes the claim over, applies the approval again (granting
// nothing new), and the approval the dead process left unused runs the
// write once. The original snapshot is then refused, its claim settled.
func KilledBeforeWrite(t *testing.T, p Processes) {
	run := "killed-early-" + time.Now().Format("150405.000000")
	p.expect(t, RoleSuspend, run, "suspended", "suspending the run")
	kill := p.start(t, RoleApproveHang, run, "approved")
	p.expect(t, RoleResume, run, "already-resumed", "approving the stored run while its resume lives")
	kill()
	if n := p.executions(t); n != 0 {
		t.Fatalf("create_site ran %d times before the takeover; want 0", n)
	}
	p.expect(t, RoleResume, run, "finished create_site SUCCESS -",
		"approving the same run after its resume was killed before the write (takeover, the unused approval)")
	p.expect(t, RoleApprove, run, "already-resumed", "approving the first snapshot again after the takeover settled")
	if n := p.executions(t); n != 1 {
		t.Fatalf("create_site ran %d times; want 1", n)
	}
}

// Load starts procs processes that each drive runs runs at once (run,
// suspend for approval, approve with ResumeRun, finish) against the store,
// and returns their reports after checking that every run finished with
// exactly one execution of its write.
func Load(tb testing.TB, p Processes, procs, runs int) []LoadReport {
	tb.Helper()
	reports := make([]LoadReport, procs)
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	prefix := "load-" + time.Now().Format("150405.000000")
	for i := range procs {
		cmd := p.child(tb, RoleLoad, fmt.Sprintf("%s-p%d", prefix, i), fmt.Sprintf("%s=%d", EnvRuns, runs))
		wg.Go(func() {
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("load child %d: %w; output %.500s", i, err, out)
				return
			}
			if err := json.Unmarshal(out, &reports[i]); err != nil {
				errs <- fmt.Errorf("load child %d: %w; output %.500s", i, err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	total, execs := 0, 0
	for i, r := range reports {
		if len(r.Failed) > 0 {
			tb.Fatalf("load child %d: %d runs failed, first: %s", i, len(r.Failed), r.Failed[0])
		}
		total += r.Finished
		execs += r.Executions
	}
	if total != procs*runs {
		tb.Fatalf("%d runs finished; want %d", total, procs*runs)
	}
	keys, err := Executions(p.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			tb.Fatalf("the write of key %s ran twice", k)
		}
		seen[k] = true
	}
	if len(keys) != procs*runs || execs != procs*runs {
		tb.Fatalf("%d writes ran (%d successes seen); want %d, one per run (no lost or duplicated approval)", len(keys), execs, procs*runs)
	}
	return reports
}

// atOnce starts procs children of role for run, all before any is waited
// for, and returns their answers (each one's trimmed output), sorted; a
// child that fails is an error of t.
func (p Processes) atOnce(t *testing.T, role, run string, procs int) []string {
	t.Helper()
	answers := make([]string, procs)
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range procs {
		cmds[i] = p.child(t, role, run)
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout = outs[i]
	}
	for i := range procs { // all started before any is waited for
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for i := range procs {
		wg.Go(func() {
			if err := cmds[i].Wait(); err != nil {
				errs <- fmt.Errorf("child %d: %w; output %q", i, err, outs[i])
			}
			answers[i] = strings.TrimSpace(outs[i].String())
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	slices.Sort(answers)
	return answers
}
