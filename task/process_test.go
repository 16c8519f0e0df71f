package task_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/task"
)

// The environment of the helper process that resumes a task.
const (
	envHelper   = "TASK_TEST_RESUME"
	envSnapshot = "TASK_TEST_SNAPSHOT"
	envOut      = "TASK_TEST_OUT"
)

// helperProcess runs, in a process of its own, the resume of a task that
// another process suspended in its step 2 with a follow-up question: a new
// world, a new loop and new in-memory stores, the same snapshot key and
// task definition. It answers the question, approves the booking the step
// then asks for (in this process), and writes what happened. It reports
// whether it ran (TestMain then exits).
func helperProcess() bool {
	if os.Getenv(envHelper) == "" {
		return false
	}
	err := resumeInThisProcess()
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	return true
}

// processOutcome is what the helper process writes.
type processOutcome struct {
	PID      int         `json:"pid"`
	First    task.Status `json:"first"`
	Result   task.Result `json:"result"`
	Booked   int64       `json:"booked"`
	BookedID string      `json:"booked_id"`
	Searched int64       `json:"searched"`
}

func resumeInThisProcess() error {
	snap, err := os.ReadFile(os.Getenv(envSnapshot))
	if err != nil {
		return err
	}
	t := &testing.T{}
	w := newWorld(t)
	m := newRouted()
	askThenBook(m, false)
	m.on("answer", finish("a1", "Booked a double room at Alpen (h-1): booking b-77."))
	r, err := task.New(w.loopOf(t, m, nil), trip(task.Acceptance{}), nil)
	if err != nil {
		return err
	}
	owner := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
	p, err := w.loopOf(t, m, nil).Inspect(context.Background(), snap, owner)
	if err != nil {
		return err
	}
	res, err := r.Resume(context.Background(), snap, react.Answer(p.Suspension.Ticket, "a double room").DecidedBy("alice"), owner)
	if err != nil {
		return err
	}
	out := processOutcome{PID: os.Getpid(), First: res.Status}
	if res.Status == task.Suspended { // the booking's approval, asked in this process
		if res, err = r.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket).DecidedBy("alice"), owner); err != nil {
			return err
		}
	}
	out.Result, out.Booked, out.Searched = res, w.booked.Load(), w.searched.Load()
	out.BookedID, _ = w.bookedID.Load().(string)
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(os.Getenv(envOut), b, 0o600)
}

// askThenBook scripts step 2 ("book"): it asks which room, then books the
// hotel step 1 verified, with approval. With first, only the question.
func askThenBook(m *routed, first bool) {
	if first {
		m.on("book", turn(call("b0", react.ToolFollowUp, `{"question":"Which room type do you want?"}`)))
		return
	}
	m.on("book",
		turn(call("b1", "book_hotel", `{"hotel_id":"h-1"}`)),
		turn(call("b2", react.ToolApproval, `{"tool":"book_hotel"}`)),
		turn(call("b3", "book_hotel", `{"hotel_id":"h-1"}`)),
		set("b4", "booking", `"b-77"`, "b3"),
		finish("b5", "booked b-77"))
}

// A suspension in step 2 is resumed in another process: the task's state
// travels sealed in the step's snapshot, with step 1's verified output in
// its evidence; the other process continues step 2 where it stopped, then
// the task, which ends met, without running step 1 again.
func TestTask_SuspensionInStep2ResumedInAnotherProcess(t *testing.T) {
	w := newWorld(t)
	m := newRouted()
	searchTurns(m)
	askThenBook(m, true)
	r, err := task.New(w.loopOf(t, m, nil), trip(task.Acceptance{}), nil)
	require.NoError(t, err)
	owner := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})
	res, err := r.Run(ctx, "Book a hotel in Bern.", owner)
	require.NoError(t, err)
	require.Equal(t, task.Suspended, res.Status)
	require.Equal(t, "book", res.Step)
	require.Equal(t, react.SuspendFollowUp, res.Suspension.Kind)

	dir := t.TempDir()
	snapPath, outPath := filepath.Join(dir, "snapshot.json"), filepath.Join(dir, "out.json")
	require.NoError(t, os.WriteFile(snapPath, res.Snapshot, 0o600))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=1", envSnapshot+"="+snapPath, envOut+"="+outPath)
	outb, err := cmd.CombinedOutput()
	require.NoError(t, err, "helper process: %s", outb)
	var got processOutcome
	b, err := os.ReadFile(outPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))

	assert.NotEqual(t, os.Getpid(), got.PID, "resumed in another process")
	assert.Equal(t, task.Suspended, got.First, "the other process continued step 2: it stopped at the booking's approval")
	assert.Equal(t, task.Met, got.Result.Status)
	assert.Equal(t, []string{"search", "book", "answer"}, stepNames(got.Result))
	assert.Equal(t, int64(0), got.Searched, "step 1 did not run again in the other process")
	assert.Equal(t, int64(1), got.Booked)
	assert.Equal(t, "h-1", got.BookedID, "step 2 booked the hotel step 1 verified, read from the sealed evidence")
	assert.Equal(t, int64(1), w.searched.Load())
	assert.Equal(t, int64(0), w.booked.Load(), "nothing was booked in this process")

	// The snapshot was claimed in the other process: in this one (its own
	// claims) it would resume once more, which is why resumes of one task
	// across processes need a shared claim store (stores/postgres,
	// stores/sqlite), as for any run.
}
