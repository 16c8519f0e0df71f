package runstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// Cursor.After orders runs by stop time to the microsecond, then by id:
// a run that stopped in the same microsecond as the cursor's comes after
// it only with a greater id, so that a page boundary between runs stopped
// at the same time neither skips nor repeats one.
func TestCursor_After(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c := runstore.Cursor{Stopped: t0, ID: "r2"}
	for _, tt := range []struct {
		t      time.Time
		id     string
		want   bool
		reason string
	}{
		{t0.Add(time.Microsecond), "r1", true, "a later stop time comes after, whatever the id"},
		{t0.Add(-time.Microsecond), "r3", false, "an earlier stop time never comes after"},
		{t0, "r3", true, "the same time: a greater id comes after"},
		{t0, "r2", false, "the cursor's own run is not after it"},
		{t0, "r1", false, "the same time: a smaller id came before"},
		{t0.Add(999 * time.Nanosecond), "r1", false, "the same microsecond is the same time"},
		{t0.In(time.FixedZone("CET", 3600)), "r3", true, "the zone does not matter"},
	} {
		if got := c.After(tt.t, tt.id); got != tt.want {
			t.Errorf("After(%v, %q) = %v; want %v (%s)", tt.t, tt.id, got, tt.want, tt.reason)
		}
	}
}

// Runs that stopped at the same time are listed one page at a time, each
// once, in id order.
func TestMemory_PagesOverTheSameStopTime(t *testing.T) {
	ctx := context.Background()
	m := runstore.NewMemory()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 4 {
		if err := m.Save(ctx, runstore.Run{ID: fmt.Sprintf("r%d", i), Kind: runstore.Approval, Snapshot: []byte("{}"), Stopped: t0}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	f := runstore.Filter{Limit: 1}
	for range 10 {
		p, err := m.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Runs {
			got = append(got, r.ID)
		}
		if p.Next == "" {
			break
		}
		f.Cursor = p.Next
	}
	if fmt.Sprint(got) != "[r0 r1 r2 r3]" {
		t.Fatalf("pages of one = %v; want [r0 r1 r2 r3], each once", got)
	}
}
