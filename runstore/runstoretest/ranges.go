package runstoretest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// RunTimeRanges checks, as subtests of t, that a [runstore.Store] refuses
// filter times and cursor times outside [runstore.MinTime,
// runstore.MaxTime] with a classified error ([runstore.ErrInvalidFilter],
// [runstore.ErrInvalidCursor]) and never with its database's own error,
// and lists the times at the bounds themselves.
func RunTimeRanges(t *testing.T, newStore func() runstore.Store) {
	t.Helper()
	bc := time.Date(-4800, 1, 1, 0, 0, 0, 0, time.UTC) // before 4713 BC: PostgreSQL's timestamptz ends there
	far := time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)
	cursorAt := func(at time.Time) string {
		return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"t":%d,"i":"x"}`, at.UnixMicro()))
	}
	for _, tt := range []struct {
		name string
		f    runstore.Filter
		want error
	}{
		{"StoppedAfter before 4713 BC", runstore.Filter{StoppedAfter: bc}, runstore.ErrInvalidFilter},
		{"StoppedBefore before 4713 BC", runstore.Filter{StoppedBefore: bc}, runstore.ErrInvalidFilter},
		{"StoppedBefore in the year 300000", runstore.Filter{StoppedBefore: far}, runstore.ErrInvalidFilter},
		{"a cursor before 4713 BC", runstore.Filter{Cursor: cursorAt(bc)}, runstore.ErrInvalidCursor},
		{"a cursor in the year 300000", runstore.Filter{Cursor: cursorAt(far)}, runstore.ErrInvalidCursor},
		{"the bounds themselves", runstore.Filter{StoppedAfter: runstore.MinTime, StoppedBefore: runstore.MaxTime}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newStore().List(bg, tt.f)
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("List = %v; want a page", err)
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("List = %v; want an error wrapping %v", err, tt.want)
			}
		})
	}
}
