package evidence

import (
	"context"
	"strconv"
	"testing"

	"github.com/reactguard/reactguard/outcome"
)

// A forgotten run leaves the number of its calls as the size hint of the
// next run's indexes, bounded by maxHint; the next run is indexed as usual.
func TestForgetLeavesASizeHint(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	fill := func(run string, n int) {
		for i := range n {
			id := "c" + strconv.Itoa(i)
			if err := m.Append(ctx, run, Record{CallID: id, Tool: "t", Fingerprint: "fp" + id, Outcome: outcome.Success, Attempt: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		calls, want int
		why         string
	}{
		{5, 5, "the calls of the run forgotten"},
		{maxHint + 10, maxHint, "bounded, so a short run after a long one allocates little for nothing"},
		{0, 3, "a run never written leaves the hint the last forgotten run left (3 calls)"},
	}
	for i, tt := range tests {
		run := "run-" + strconv.Itoa(i)
		fill(run, tt.calls)
		m.Forget(run)
		if got := int(m.hint.Load()); got != tt.want {
			t.Errorf("%s: hint %d after a run of %d calls; want %d", tt.why, got, tt.calls, tt.want)
		}
		next := "next-" + strconv.Itoa(i)
		fill(next, 3)
		if n, _, err := m.Executions(ctx, next, "fpc2"); err != nil || n != 1 {
			t.Errorf("%s: the next run is indexed as usual: Executions = %d, %v", tt.why, n, err)
		}
		if st := m.run(next, false); st.hint != tt.want {
			t.Errorf("%s: the next run was made with hint %d; want %d", tt.why, st.hint, tt.want)
		}
		m.Forget(next)
	}
}
