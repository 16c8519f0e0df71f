package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The story across two processes: the first suspends and exits, the
// second approves and the write runs once; a third finds nothing waiting
// and starts a new run.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "sitebuilder")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "state.db")
	sitebuilder := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sitebuilder %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	first := sitebuilder("-state", state)
	for _, want := range []string{
		"create_site            DEFERRED APPROVAL_REQUIRED",
		"-- suspended: create_site(",
		"-- the run is kept in the state store; this process ends here.",
		"sitebuilder -state " + state + " -approve",
	} {
		if !strings.Contains(first, want) {
			t.Fatalf("first process output lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "create_site executed") {
		t.Fatalf("the first process went past the approval:\n%s", first)
	}
	second := sitebuilder("-state", state, "-approve")
	for _, want := range []string{
		"-- run ",
		"waits in the state store for the approval of create_site(",
		"builtin_node_approval  SUCCESS",
		"create_site            SUCCESS",
		"-- finished after 6 rounds",
		"create_site executed 1 time(s)",
	} {
		if !strings.Contains(second, want) {
			t.Fatalf("second process output lacks %q:\n%s", want, second)
		}
	}
	if strings.Contains(second, "round 1") {
		t.Fatalf("the second process printed the first process's rounds again:\n%s", second)
	}
	if _, err := os.Stat(state + ".key"); err != nil {
		t.Fatalf("snapshot key: %v", err)
	}
}

func TestDeclineInSecondProcess(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	var out strings.Builder
	if code := run(t.Context(), []string{"-state", state}, strings.NewReader(""), false, &out, &out); code != 0 {
		t.Fatalf("first run exit %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(t.Context(), []string{"-state", state, "-decline"}, strings.NewReader(""), false, &out, &out); code != 0 {
		t.Fatalf("second run exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{"the user declined the call of create_site: not now", "create_site executed 0 time(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("declining process output lacks %q:\n%s", want, out.String())
		}
	}
}
