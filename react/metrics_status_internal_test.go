package react

import "testing"

// Every execution status a call can end with, and every business status
// of a call that succeeded, is counted under its own key: the top of each
// range included (a result too large, a blocked page), which no run of the
// package's other tests reaches.
func TestMetrics_CountsEveryStatus(t *testing.T) {
	var m Metrics
	var want int
	for s := ExecNone + 1; s <= maxExecStatus; s++ {
		if s == ExecReused || s == ExecForbidden {
			continue // counted apart (Reused, Forbidden), not by status
		}
		m.onToolInvoked(&ToolEvent{Layers: Layers{Execution: s, Attempts: 1,
			First: Attempt{Status: s}, Final: Attempt{Status: s}}})
		want++
	}
	for b := BusinessNone + 1; b <= maxBusinessStatus; b++ {
		m.onToolInvoked(&ToolEvent{Layers: Layers{Execution: ExecOK, Business: b, Attempts: 1,
			First: Attempt{Status: ExecOK}, Final: Attempt{Status: ExecOK}}})
		want++
	}
	s := m.Snapshot()
	if s.Execution.Calls != int64(want) {
		t.Fatalf("Execution.Calls = %d; want %d", s.Execution.Calls, want)
	}
	for st := ExecNone + 1; st <= maxExecStatus; st++ {
		n := int64(1)
		switch st {
		case ExecReused, ExecForbidden:
			n = 0
		case ExecOK:
			n = 1 + int64(maxBusinessStatus) // the business calls succeeded too
		}
		if s.Execution.FirstByStatus[st] != n || s.Execution.FinalByStatus[st] != n {
			t.Errorf("%s: first %d, final %d; want %d each", st, s.Execution.FirstByStatus[st], s.Execution.FinalByStatus[st], n)
		}
	}
	for b := BusinessNone + 1; b <= maxBusinessStatus; b++ {
		if s.Business.ByStatus[b] != 1 {
			t.Errorf("business %s: %d; want 1", b, s.Business.ByStatus[b])
		}
	}
}
