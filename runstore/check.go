package runstore

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidFilter is wrapped by the error of [Store.List] for a [Filter]
// time outside [MinTime, MaxTime].
var ErrInvalidFilter = errors.New("runstore: invalid filter")

// MinTime and MaxTime bound the times a [Filter] or a cursor may hold: the
// years 1 to 9999 in UTC, which every store can compare. A time outside is
// refused with [ErrInvalidFilter] (or [ErrInvalidCursor] in a cursor),
// never passed to a database that would fail on it (PostgreSQL refuses
// times before 4713 BC with SQLSTATE 22008).
var (
	MinTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

func inRange(t time.Time) bool { return !t.Before(MinTime) && !t.After(MaxTime) }

// Check reports whether f can be listed: its times, when set, are within
// [MinTime, MaxTime] (the error wraps [ErrInvalidFilter] and names the
// field), and its cursor, when set, is a cursor ([ParseCursor]) whose time
// is within them too ([ErrInvalidCursor]: no page returns another). Stores
// call it at the start of [Store.List].
func (f Filter) Check() error {
	for _, b := range [...]struct {
		name string
		t    time.Time
	}{{"StoppedBefore", f.StoppedBefore}, {"StoppedAfter", f.StoppedAfter}} {
		if !b.t.IsZero() && !inRange(b.t) {
			return fmt.Errorf("%w: %s %s is outside the years 1 to 9999", ErrInvalidFilter, b.name, b.t.Format(time.RFC3339))
		}
	}
	if f.Cursor == "" {
		return nil
	}
	c, err := ParseCursor(f.Cursor)
	if err != nil {
		return err
	}
	if !inRange(c.Stopped) {
		return fmt.Errorf("%w: its time is outside the years 1 to 9999", ErrInvalidCursor)
	}
	return nil
}
