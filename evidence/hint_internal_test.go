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

// A run's records start with room for the hint's records up to 256
// (startRecords), then grow to the hint at once.
func TestRecordsGrowToTheHint(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	m.hint.Store(3000)
	var caps []int
	for i := range 600 {
		id := "c" + strconv.Itoa(i)
		if err := m.Append(ctx, "r", Record{CallID: id, Tool: "t", Fingerprint: "fp" + id, Outcome: outcome.Success, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
		st := m.run("r", false)
		if c := cap(st.records); len(caps) == 0 || caps[len(caps)-1] != c {
			if i < 256 && c > startRecords {
				t.Fatalf("after %d records, room for %d: a short run pays for the hint", i+1, c)
			}
			caps = append(caps, c)
		}
	}
	if last := caps[len(caps)-1]; last < 3000 {
		t.Errorf("after 600 records, room for %d; want the hint's 3000", last)
	}
	if len(caps) != 2 || caps[0] != startRecords {
		t.Errorf("capacities %v: want %d, then the hint", caps, startRecords)
	}
	m.hint.Store(40)
	if err := m.Append(ctx, "short", Record{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if c := cap(m.run("short", false).records); c != 40 {
		t.Errorf("a run after one of 40 calls starts with room for %d records; want 40", c)
	}
	for _, id := range []string{"c0", "c255", "c599"} {
		if r, ok, err := m.Lookup(ctx, "r", id); err != nil || !ok || r.CallID != id {
			t.Errorf("Lookup(%s) = %+v, %v, %v", id, r, ok, err)
		}
	}
}
