package runstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

func TestFilter_Check(t *testing.T) {
	page := runstore.Filter{}.Next(runstore.Run{Stopped: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ID: "r1"})
	for _, tt := range []struct {
		name   string
		f      runstore.Filter
		want   error
		reason string
	}{
		{"zero", runstore.Filter{}, nil, "no times, no cursor: everything"},
		{"a cursor of a page", runstore.Filter{Cursor: page}, nil, "what a store returns"},
		{"bounds", runstore.Filter{StoppedAfter: runstore.MinTime, StoppedBefore: runstore.MaxTime}, nil, "the bounds are in range"},
		{"just before the first year", runstore.Filter{StoppedAfter: runstore.MinTime.Add(-time.Microsecond)}, runstore.ErrInvalidFilter, "year 0"},
		{"past 9999", runstore.Filter{StoppedBefore: runstore.MaxTime.Add(time.Microsecond)}, runstore.ErrInvalidFilter, "year 10000"},
		{"a cursor that is not one", runstore.Filter{Cursor: "hello"}, runstore.ErrInvalidCursor, "not a cursor"},
		{"a cursor before the first year", runstore.Filter{Cursor: runstore.Filter{}.Next(runstore.Run{Stopped: time.Date(-100, 1, 1, 0, 0, 0, 0, time.UTC), ID: "x"})}, runstore.ErrInvalidCursor, "no page holds such a time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f.Check()
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Check() = %v; want %v (%s)", err, tt.want, tt.reason)
			}
		})
	}
}
